"""One Redis connection shared by every concurrent request, for the commands each request
makes (validating its session: ``store.sessions``).

Through the client's connection pool every command takes a connection, checks its health,
packs, sends, reads and returns it: about 150 us of Python per command, most of what an
authenticated request costs beyond ``/health``. Here the commands of all requests go down
one connection back to back, those issued in one turn of the event loop in one write, and
Redis answers them in the order sent, so each reply is handed to the oldest waiting caller
(hiredis packs the commands and parses the replies). Nothing waits for another request's
command to finish.

The connection is made on first use with the pool's own address, credentials and database,
and again after it is lost; a command whose reply does not come within the client's socket
timeout closes it (the order of the replies is then unknown) and fails every command in
flight. Failures are the client's exception types (``ConnectionError``, ``TimeoutError``,
``ResponseError``), so callers handle them as before. TLS (``rediss://``) and RESP3 are not
spoken here: :meth:`RedisPipe.for_client` answers None and callers keep using the pool.
"""

from __future__ import annotations

import asyncio
import collections
from collections.abc import Awaitable
from typing import Any, cast

import hiredis
from redis.asyncio import Redis
from redis.asyncio.connection import Connection, UnixDomainSocketConnection
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import ResponseError
from redis.exceptions import TimeoutError as RedisTimeoutError

Arg = str | int | bytes


def _packed(args: tuple[Arg, ...]) -> bytes:
    """One command in the Redis protocol (hiredis's stub types the tuple as one element)."""
    packed: bytes = hiredis.pack_command(cast(Any, args))
    return packed


class _Replies(asyncio.Protocol):
    """Feeds what Redis sends to the parser and each complete reply to the pipe."""

    def __init__(self, pipe: RedisPipe) -> None:
        self.pipe = pipe
        self.parser = hiredis.Reader(replyError=ResponseError, encoding="utf-8")

    def data_received(self, data: bytes) -> None:
        self.parser.feed(data)
        while (reply := self.parser.gets()) is not False:
            self.pipe.answered(reply)

    def connection_lost(self, exc: Exception | None) -> None:
        self.pipe.lost(self, RedisConnectionError("Redis closed the connection"))


class RedisPipe:
    """Commands from concurrent callers down one connection; see the module docstring."""

    def __init__(self, address: tuple[str, int] | str, *, db: int = 0,
                 auth: tuple[str, ...] = (), timeout: float = 5.0,
                 connect_timeout: float = 2.0) -> None:
        self.address = address  # (host, port), or a unix socket's path
        self.db = db
        self.auth = auth  # AUTH's arguments: (password,) or (username, password)
        self.timeout = timeout
        self.connect_timeout = connect_timeout
        self._loop: asyncio.AbstractEventLoop | None = None
        self._transport: asyncio.Transport | None = None
        self._protocol: _Replies | None = None
        self._connecting: asyncio.Future[None] | None = None
        # each command in flight: its reply's future and the loop time its reply is due by
        self._waiting: collections.deque[tuple[asyncio.Future[Any], float]] = (
            collections.deque())
        self._watchdog: asyncio.TimerHandle | None = None  # due time of the oldest command
        self._unsent: list[bytes] = []

    @classmethod
    def for_client(cls, redis: Redis) -> RedisPipe | None:
        """A pipe to the server ``redis``'s pool connects to, with its credentials, database
        and timeouts; None for a connection it does not speak (TLS, RESP3, a credential
        provider), where callers keep using the pool."""
        pool = redis.connection_pool
        kwargs = pool.connection_kwargs
        if kwargs.get("protocol") not in (None, 2, "2") or kwargs.get("credential_provider"):
            return None
        address: tuple[str, int] | str
        if issubclass(pool.connection_class, UnixDomainSocketConnection):
            address = str(kwargs["path"])
        elif pool.connection_class is Connection:
            address = (str(kwargs.get("host", "localhost")), int(kwargs.get("port", 6379)))
        else:
            return None
        password = kwargs.get("password")
        username = kwargs.get("username")
        auth = () if password is None else (
            (str(username), str(password)) if username else (str(password),))
        return cls(address, db=int(kwargs.get("db") or 0), auth=auth,
                   timeout=float(kwargs.get("socket_timeout") or 5.0),
                   connect_timeout=float(kwargs.get("socket_connect_timeout") or 2.0))

    def call(self, *args: Arg) -> Awaitable[Any]:
        """Send one command; awaiting the answer gives its reply (``ResponseError`` for an
        error reply). Connected, the command is queued at once and its reply's future is
        returned as it is (no coroutine around it: one fewer per command)."""
        if self._transport is None or self._loop is not asyncio.get_running_loop():
            return self._connect_and_send(args)
        return self._send(_packed(args))

    async def _connect_and_send(self, args: tuple[Arg, ...]) -> Any:
        await self._connect()
        return await self._send(_packed(args))

    def _send(self, command: bytes) -> asyncio.Future[Any]:
        loop = self._loop
        assert loop is not None
        reply = loop.create_future()
        if self._transport is None:  # lost again between connecting and sending
            reply.set_exception(RedisConnectionError("the connection to Redis was lost"))
            return reply
        due = loop.time() + self.timeout
        self._waiting.append((reply, due))
        if self._watchdog is None:
            self._watchdog = loop.call_at(due, self._watch)
        if not self._unsent:
            loop.call_soon(self._flush)
        self._unsent.append(command)
        return reply

    def _flush(self) -> None:
        """Write the commands of this loop turn at once."""
        commands, self._unsent = self._unsent, []
        if self._transport is not None:
            self._transport.write(b"".join(commands))

    def answered(self, reply: Any) -> None:
        """The next reply, for the oldest command waiting."""
        if not self._waiting:
            return
        future, _ = self._waiting.popleft()
        if future.done():
            return
        if isinstance(reply, ResponseError):
            future.set_exception(reply)
        else:
            future.set_result(reply)

    def lost(self, protocol: _Replies, error: Exception) -> None:
        """The connection ``protocol`` served ended: every command in flight fails."""
        if protocol is not self._protocol:
            return
        self._transport = self._protocol = None
        self._unsent = []
        self._stop_watch()
        waiting, self._waiting = self._waiting, collections.deque()
        for future, _ in waiting:
            if not future.done():
                future.set_exception(error)

    def _stop_watch(self) -> None:
        if self._watchdog is not None:
            self._watchdog.cancel()
            self._watchdog = None

    def _watch(self) -> None:
        """One timer for every command in flight rather than one each: all wait as long
        and are answered in order, so the oldest is always the first due. When it fires,
        the oldest command still waiting has timed out, or the timer is set for it."""
        self._watchdog = None
        if not self._waiting or self._loop is None:
            return
        due = self._waiting[0][1]
        if due <= self._loop.time():
            self._timed_out()
        else:
            self._watchdog = self._loop.call_at(due, self._watch)

    def _timed_out(self) -> None:
        protocol, transport = self._protocol, self._transport
        if protocol is None or transport is None:
            return
        self.lost(protocol, RedisTimeoutError("Timeout reading from Redis"))
        transport.abort()

    async def _connect(self) -> None:
        """Open the connection (one attempt shared by the callers arriving meanwhile)."""
        loop = asyncio.get_running_loop()
        if self._loop is not loop:  # a new event loop (tests): what the old one had is gone
            self._forget()
            self._loop = loop
        if self._connecting is None:
            self._connecting = loop.create_future()
            try:
                await self._open(loop)
            except BaseException as exc:
                self._connecting.set_exception(exc if isinstance(exc, RedisConnectionError)
                                               else RedisConnectionError("no connection"))
                self._connecting.exception()  # retrieved: each waiting caller raises it
                raise
            else:
                self._connecting.set_result(None)
            finally:
                self._connecting = None
            return
        await asyncio.shield(self._connecting)

    async def _open(self, loop: asyncio.AbstractEventLoop) -> None:
        protocol = _Replies(self)
        try:
            async with asyncio.timeout(self.connect_timeout):
                if isinstance(self.address, str):
                    transport, _ = await loop.create_unix_connection(lambda: protocol,
                                                                     self.address)
                else:
                    transport, _ = await loop.create_connection(lambda: protocol,
                                                                *self.address)
        except (OSError, TimeoutError) as exc:
            raise RedisConnectionError(f"cannot connect to Redis: {exc}") from exc
        self._transport, self._protocol = transport, protocol
        handshake = ([self._send(_packed(("AUTH", *self.auth)))] if self.auth else []) + (
            [self._send(_packed(("SELECT", self.db)))] if self.db else [])
        try:
            await asyncio.gather(*handshake)
        except BaseException as exc:
            refused = RedisConnectionError(f"Redis refused the connection: {exc}")
            self.lost(protocol, refused)
            transport.close()
            raise refused from exc

    def _forget(self) -> None:
        """Drop the connection of a previous event loop without touching that loop."""
        self._transport = self._protocol = None
        self._connecting = None
        self._waiting = collections.deque()
        self._watchdog = None  # the old loop's timer, never to run
        self._unsent = []

    def close(self) -> None:
        """Close the connection; commands in flight fail, a later call connects again."""
        protocol, transport = self._protocol, self._transport
        if protocol is not None and transport is not None:
            self.lost(protocol, RedisConnectionError("the connection was closed"))
            transport.close()
