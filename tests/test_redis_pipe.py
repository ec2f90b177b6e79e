"""The one Redis connection the session checks of all requests share (``store.redis_pipe``):
concurrent checks go down it together, a script Redis forgot is sent again, the pool's
credentials and database are used, and a reply that never comes fails what is in flight
instead of handing later replies to the wrong callers."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path

import hiredis
from redis.asyncio import Redis
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import ResponseError
from redis.exceptions import TimeoutError as RedisTimeoutError

from store.redis_pipe import RedisPipe


async def test_concurrent_session_checks_share_one_connection(services):
    token = await services.sessions.create(7, 3)
    before = (await services.redis.info("clients"))["connected_clients"]
    found = await asyncio.gather(*(services.sessions.lookup(token) for _ in range(50)))
    after = (await services.redis.info("clients"))["connected_clients"]
    assert {(info.user_id, info.company_id) for info in found} == {(7, 3)}
    assert after - before <= 1  # the pool would open a connection per concurrent check


async def test_a_script_redis_forgot_is_sent_again(services):
    token = await services.sessions.create(7, 3)
    assert await services.sessions.lookup(token) is not None
    await services.redis.script_flush()
    info = await services.sessions.lookup(token)
    assert info is not None and info.user_id == 7
    assert await services.sessions.lookup(str(token).replace("-", "0", 1)) is None


@asynccontextmanager
async def fake_redis(path: Path, answer: Callable[[list[str]], bytes | None]
                     ) -> AsyncIterator[tuple[list[list[str]], list[int]]]:
    """A unix-socket server speaking just enough Redis: each command received is recorded
    and answered with ``answer(command)``; after a None it is stuck, as a hung Redis is, and
    answers nothing more on that connection. Also counts connections."""
    received: list[list[str]] = []
    connections: list[int] = []

    async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        connections.append(1)
        parser = hiredis.Reader(encoding="utf-8")
        stuck = False
        while data := await reader.read(65536):
            parser.feed(data)
            while (command := parser.gets()) is not False:
                received.append(command)
                reply = None if stuck else answer(command)
                stuck = reply is None
                if reply is not None:
                    writer.write(reply)
        writer.close()

    server = await asyncio.start_unix_server(serve, str(path))
    try:
        yield received, connections
    finally:
        server.close()


async def test_the_pools_credentials_and_database_come_first(tmp_path):
    socket = tmp_path / "redis.sock"
    client = Redis.from_url(f"unix://{socket}?db=2", username="reader", password="pw",
                            socket_timeout=3)
    pipe = RedisPipe.for_client(client)
    assert pipe is not None and pipe.timeout == 3.0
    async with fake_redis(socket, lambda command: b"+OK\r\n") as (received, _):
        assert await pipe.call("PING") == "OK"
    pipe.close()
    assert received == [["AUTH", "reader", "pw"], ["SELECT", "2"], ["PING"]]


def test_tls_and_resp3_stay_with_the_pool():
    assert RedisPipe.for_client(Redis.from_url("rediss://localhost:6380/0")) is None
    assert RedisPipe.for_client(Redis.from_url("redis://localhost:6379/0", protocol=3)) is None
    assert RedisPipe.for_client(Redis.from_url("redis://localhost:6379/0")) is not None


async def test_a_reply_that_never_comes_fails_every_command_in_flight(tmp_path):
    socket = tmp_path / "redis.sock"

    def answer(command: list[str]) -> bytes | None:
        return None if command[0] == "HANG" else b":1\r\n"

    pipe = RedisPipe(str(socket), timeout=0.3)
    async with fake_redis(socket, answer) as (_, connections):
        results = await asyncio.gather(pipe.call("HANG"), pipe.call("GET", "k"),
                                       return_exceptions=True)
        assert [type(r) for r in results] == [RedisTimeoutError, RedisTimeoutError]
        assert await pipe.call("GET", "k") == 1  # on a new connection: replies in order
        assert len(connections) == 2
    pipe.close()


async def test_an_error_reply_is_raised_to_its_caller_only(tmp_path):
    socket = tmp_path / "redis.sock"
    pipe = RedisPipe(str(socket))

    def answer(command: list[str]) -> bytes:
        return b"-ERR wrong\r\n" if command[0] == "BAD" else b"$2\r\nok\r\n"

    async with fake_redis(socket, answer):
        results = await asyncio.gather(pipe.call("BAD"), pipe.call("GET", "k"),
                                       return_exceptions=True)
    pipe.close()
    assert isinstance(results[0], ResponseError) and str(results[0]) == "ERR wrong"
    assert results[1] == "ok"


async def test_a_connection_redis_closes_fails_its_commands_and_is_made_again(tmp_path):
    socket = tmp_path / "redis.sock"
    served: list[asyncio.StreamWriter] = []

    async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        served.append(writer)
        parser = hiredis.Reader(encoding="utf-8")
        while data := await reader.read(65536):
            parser.feed(data)
            while (command := parser.gets()) is not False:
                if command[0] == "QUIT":
                    writer.close()  # as Redis going away: nothing more is answered
                    return
                writer.write(b"+PONG\r\n")

    server = await asyncio.start_unix_server(serve, str(socket))
    pipe = RedisPipe(str(socket), timeout=5)
    try:
        assert await pipe.call("PING") == "PONG"
        results = await asyncio.gather(pipe.call("QUIT"), pipe.call("PING"),
                                       return_exceptions=True)
        assert [type(r) for r in results] == [RedisConnectionError, RedisConnectionError]
        assert await pipe.call("PING") == "PONG"
        assert len(served) == 2
    finally:
        pipe.close()
        server.close()
