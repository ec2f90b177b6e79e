"""Remote fetches with an SSRF guard: http(s) only, public addresses only (unless allowed),
few redirects, bounded size and time.

The guard sits in the resolver, so the address that was checked is the address that is
connected to (no DNS-rebinding gap between check and connect). Every redirect target is
checked again.
"""

from __future__ import annotations

import ipaddress
import os
import socket
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, BinaryIO
from urllib.parse import urljoin, urlsplit

from tornado.httpclient import AsyncHTTPClient, HTTPClientError, HTTPRequest
from tornado.netutil import DefaultExecutorResolver, Resolver
from tornado.simple_httpclient import HTTPStreamClosedError, HTTPTimeoutError

from tornado_app.address_policy import address_kind

MAX_REDIRECTS = 3  # each hop is re-checked by the address guard; a policy, not a tunable


class FetchRefused(Exception):
    """The address is not allowed (42201)."""


class FetchFailed(Exception):
    """The remote answered badly, too big or too slow (the message says which)."""

    def __init__(self, message: str, *, too_large: bool = False, timed_out: bool = False):
        super().__init__(message)
        self.too_large = too_large
        self.timed_out = timed_out


@dataclass
class Fetched:
    data: bytes
    content_type: str
    url: str


@dataclass
class FetchedFile:
    """A body fetched into a file: its path, size, first bytes (for sniffing) and type."""

    path: str
    size: int
    head: bytes
    content_type: str
    url: str


def is_public_address(address: str) -> bool:
    """True for globally routable unicast addresses (no private, loopback, link-local...)."""
    return address_kind(ipaddress.ip_address(address.split("%", 1)[0])) == "public"


class GuardedResolver(Resolver):
    """Resolves names and drops every address that is not public."""

    def initialize(self, allow_private: bool = False) -> None:
        self.inner: Resolver = DefaultExecutorResolver()
        self.allow_private = allow_private

    async def resolve(self, host: str, port: int,
                      family: socket.AddressFamily = socket.AF_UNSPEC) -> list[Any]:
        addresses = await self.inner.resolve(host, port, family)
        if self.allow_private:
            return addresses
        allowed = [a for a in addresses if is_public_address(a[1][0])]
        if not allowed:
            raise FetchRefused(f"{host} resolves to a private or local address")
        return allowed


def check_url(url: str) -> str:
    """Refuse anything but an absolute http(s) URL with a host."""
    if not isinstance(url, str) or len(url) > 4096:
        raise FetchRefused("the address is not a valid URL")
    parts = urlsplit(url.strip())
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise FetchRefused("only http and https addresses can be fetched")
    if parts.username or parts.password:
        raise FetchRefused("addresses with credentials are not fetched")
    return url.strip()


def refuse_literal_private(url: str) -> None:
    """FetchRefused when ``url``'s host is a literal private, loopback or link-local address
    (a name is judged later, when it is resolved; see GuardedResolver)."""
    host = (urlsplit(url).hostname or "").strip("[]")
    try:
        literal = ipaddress.ip_address(host)
    except ValueError:
        return
    if not is_public_address(str(literal)):
        raise FetchRefused("private, loopback and link-local addresses are refused")


async def _get_once(client: AsyncHTTPClient, url: str, max_bytes: int, timeout: float,
                    sink: Callable[[bytes], object]) -> Any:
    """One GET without redirects; the body goes to ``sink`` chunk by chunk (at most
    ``max_bytes``, else FetchFailed). Returns the response."""
    size = 0
    too_large = FetchFailed(f"remote file is larger than {max_bytes} bytes", too_large=True)

    def collect(chunk: bytes) -> None:
        nonlocal size
        size += len(chunk)
        if size > max_bytes:
            raise too_large  # aborts the transfer; reported below
        sink(chunk)

    request = HTTPRequest(
        url, follow_redirects=False, connect_timeout=min(timeout, 10), request_timeout=timeout,
        streaming_callback=collect, decompress_response=True,
        headers={"User-Agent": "docservice-fetch/1"},
    )
    try:
        response = await client.fetch(request, raise_error=False)
        if size > max_bytes:
            raise too_large
    except (FetchRefused, FetchFailed):
        raise
    except HTTPTimeoutError as exc:
        raise FetchFailed("the remote address did not answer in time", timed_out=True) from exc
    except (OSError, HTTPStreamClosedError, HTTPClientError) as exc:
        if size > max_bytes:
            raise too_large from None
        raise FetchFailed(f"could not fetch the address: {type(exc).__name__}") from exc
    if isinstance(response.error, (FetchRefused, FetchFailed)):
        raise response.error
    if response.code == 599:
        if isinstance(response.error, HTTPTimeoutError):
            raise FetchFailed("the remote address did not answer in time", timed_out=True)
        raise FetchFailed("could not connect to the remote address")
    return response


async def _fetch_into(url: str, *, allow_private: bool, max_bytes: int, timeout: float,
                      sink: Callable[[bytes], object], restart: Callable[[], object]
                      ) -> tuple[Any, str]:
    """GET ``url`` under the guard, following redirects, body into ``sink``
    (``restart`` drops what a redirect's body left there); returns (response, final URL)."""
    client = AsyncHTTPClient(force_instance=True,
                             resolver=GuardedResolver(allow_private=allow_private))
    try:
        current = check_url(url)
        for _ in range(MAX_REDIRECTS + 1):
            if not allow_private:
                refuse_literal_private(current)
            restart()
            response = await _get_once(client, current, max_bytes, timeout, sink)
            if response.code in (301, 302, 303, 307, 308) and "Location" in response.headers:
                current = check_url(urljoin(current, response.headers["Location"]))
                continue
            if response.code >= 400:
                raise FetchFailed(f"the remote address answered HTTP {response.code}")
            return response, current
        raise FetchFailed("too many redirects")
    finally:
        client.close()


async def fetch(url: str, *, allow_private: bool, max_bytes: int, timeout: float) -> Fetched:
    """GET ``url`` under the guard into memory; raises FetchRefused or FetchFailed."""
    chunks: list[bytes] = []
    response, final = await _fetch_into(url, allow_private=allow_private, max_bytes=max_bytes,
                                        timeout=timeout, sink=chunks.append,
                                        restart=chunks.clear)
    return Fetched(b"".join(chunks), response.headers.get("Content-Type", ""), final)


async def fetch_to_file(url: str, path: str, *, allow_private: bool, max_bytes: int,
                        timeout: float) -> FetchedFile:
    """GET ``url`` under the guard straight into a new file at ``path``: the body never sits
    whole in this process (at most one chunk of it does). The file is removed when the fetch
    fails; raises FetchRefused or FetchFailed."""
    head = bytearray()
    out: BinaryIO = open(path, "wb")  # closed below, also on failure

    def write(chunk: bytes) -> None:
        if len(head) < 512:
            head.extend(chunk[:512 - len(head)])
        out.write(chunk)

    def restart() -> None:
        head.clear()
        out.seek(0)
        out.truncate()

    try:
        response, final = await _fetch_into(url, allow_private=allow_private,
                                            max_bytes=max_bytes, timeout=timeout,
                                            sink=write, restart=restart)
        size = out.tell()
    except BaseException:
        out.close()
        os.unlink(path)
        raise
    out.close()
    return FetchedFile(path, size, bytes(head), response.headers.get("Content-Type", ""), final)
