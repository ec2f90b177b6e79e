"""The client address of a request: the peer, or what a trusted proxy says it is.

``X-Forwarded-For`` is read only when the peer is listed in ``TRUSTED_PROXIES``; then the
list is walked from the right (the entry the trusted peer itself added) past further
trusted proxies, and the first address not trusted is the client. Anything else (no
trusted proxy, an unparsable entry) keeps the last address known to be genuine, so a
forged header can neither bypass the per-address login limit nor fake the access log.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Sequence

Network = ipaddress.IPv4Network | ipaddress.IPv6Network


def _ip(text: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    text = text.strip()
    if text.startswith("[") and "]" in text:  # [v6]:port
        text = text[1:text.index("]")]
    elif text.count(":") == 1:  # v4:port
        text = text.split(":", 1)[0]
    try:
        return ipaddress.ip_address(text.split("%", 1)[0])
    except ValueError:
        return None


def _trusted(addr: ipaddress.IPv4Address | ipaddress.IPv6Address | None,
             networks: Sequence[Network]) -> bool:
    if addr is None:
        return False
    if isinstance(addr, ipaddress.IPv6Address) and addr.ipv4_mapped:
        addr = addr.ipv4_mapped
    return any(addr.version == n.version and addr in n for n in networks)


def client_address(peer: str, forwarded_for: str | None, networks: Sequence[Network]) -> str:
    """The address to throttle and log for a request from ``peer``."""
    if not networks or not forwarded_for or not _trusted(_ip(peer), networks):
        return peer
    client = peer
    for entry in reversed(forwarded_for.split(",")):
        addr = _ip(entry)
        if addr is None:
            break
        client = str(addr)
        if not _trusted(addr, networks):
            break
    return client


def forwarded_proto(peer: str, header: str | None, networks: Sequence[Network]) -> str | None:
    """The scheme a trusted proxy says the client used (``X-Forwarded-Proto``: its last
    entry, the one the trusted peer wrote), or None: from any other peer the header is
    ignored, so a client cannot claim ``https`` to pass an Origin check."""
    if not networks or not header or not _trusted(_ip(peer), networks):
        return None
    proto = header.split(",")[-1].strip().lower()
    return proto if proto in ("http", "https") else None
