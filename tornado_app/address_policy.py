"""The one address policy for storage endpoints, ``/config/storage/test`` and
``/system/time/check``: the places where a caller names a host the service then connects to.

Refused unless the operator lists the endpoint in ``STORAGE_ALLOWED_ENDPOINTS`` (the embedded
storage and the ``S3_*`` storage are always allowed): loopback, link-local, unspecified,
multicast and cloud metadata addresses, also when written inside an IPv6 address
(IPv4-mapped ``::ffff:127.0.0.1``, IPv4-translated ``::ffff:0:127.0.0.1``, IPv4-compatible
``::127.0.0.1``, NAT64 ``64:ff9b::/96`` and local-use NAT64 ``64:ff9b:1::/48``, 6to4
``2002::/16``). The same reading serves the SSRF guard of remote fetches
(``tornado_app.documents.fetch``). Private ranges are allowed
(MinIO on the LAN is normal) unless ``STORAGE_DENY_PRIVATE=1``.

:func:`decide` is the pure decision on addresses already resolved; :func:`check_endpoint`
resolves a ``host:port`` and applies it (blocking: run it in a thread).
"""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Iterable
from dataclasses import dataclass
from urllib.parse import urlsplit

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address

METADATA_ADDRESSES = frozenset({
    ipaddress.ip_address("169.254.169.254"),  # AWS, GCP, Azure, OpenStack...
    ipaddress.ip_address("fd00:ec2::254"),  # AWS over IPv6
    ipaddress.ip_address("100.100.100.200"),  # Alibaba Cloud
})
NAT64 = ipaddress.ip_network("64:ff9b::/96")
LOCAL_NAT64 = ipaddress.ip_network("64:ff9b:1::/48")  # RFC 8215, any RFC 6052 length in it
IPV4_TRANSLATED = ipaddress.ip_network("::ffff:0:0:0/96")  # RFC 2765 ::ffff:0:a.b.c.d
IPV4_COMPATIBLE = ipaddress.ip_network("::/96")  # deprecated ::a.b.c.d (:: and ::1 too)
SIX_TO_FOUR = ipaddress.ip_network("2002::/16")


class EndpointRefused(ValueError):
    """The endpoint may not be used; ``reason`` says why (safe to show)."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


@dataclass(frozen=True)
class AddressPolicy:
    """What the operator allows: endpoints always allowed, and whether private ranges are."""

    allowed: frozenset[str] = frozenset()  # "host:port" or "host" entries, lower case
    deny_private: bool = False

    def allows_name(self, host: str, port: int | None) -> bool:
        """True when ``host``/``host:port`` is listed (then no address check applies)."""
        host = host.lower().strip("[]")
        return host in self.allowed or ((port is not None and f"{host}:{port}" in self.allowed)
                                        or f"[{host}]:{port}" in self.allowed)


def _rfc6052(value: int, prefix_len: int) -> ipaddress.IPv4Address:
    """The IPv4 address inside an IPv4-embedded IPv6 address with a ``prefix_len`` prefix
    (RFC 6052 2.2: bits 64-71 are skipped)."""
    octets = value.to_bytes(16, "big")
    if prefix_len == 96:
        return ipaddress.IPv4Address(octets[12:16])
    return ipaddress.IPv4Address((octets[prefix_len // 8:8] + octets[9:])[:4])


def embedded_ipv4s(ip: IPAddress) -> tuple[ipaddress.IPv4Address, ...]:
    """Every IPv4 address an IPv6 address may carry: IPv4-mapped, IPv4-translated,
    IPv4-compatible, NAT64 (``64:ff9b::/96``), local-use NAT64 (``64:ff9b:1::/48``, read
    at each RFC 6052 prefix length a network may use inside it: /48, /56, /64, /96) and
    6to4; empty for an address that carries none."""
    if not isinstance(ip, ipaddress.IPv6Address):
        return ()
    low32 = ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF)
    if ip.ipv4_mapped is not None:
        return (ip.ipv4_mapped,)
    if ip in NAT64 or ip in IPV4_TRANSLATED or ip in IPV4_COMPATIBLE:
        return (low32,)
    if ip in LOCAL_NAT64:  # an all-zero reading is another length's padding, not a host
        readings = (_rfc6052(int(ip), n) for n in (48, 56, 64, 96))
        return tuple(dict.fromkeys(r for r in readings if int(r)))
    if ip in SIX_TO_FOUR and ip.sixtofour is not None:
        return (ip.sixtofour,)
    return ()


def embedded_ipv4(ip: IPAddress) -> ipaddress.IPv4Address | None:
    """The (first) IPv4 address an IPv6 address carries, else None (see
    :func:`embedded_ipv4s`)."""
    found = embedded_ipv4s(ip)
    return found[0] if found else None


def address_kind(ip: IPAddress) -> str:
    """``metadata``, ``loopback``, ``link-local``, ``unspecified``, ``multicast``, ``private``
    or ``public``; an IPv6 address carrying IPv4 ones is judged by all (the worst wins)."""
    kinds = [_kind(ip)] + [_kind(inner) for inner in embedded_ipv4s(ip)]
    order = ("metadata", "loopback", "link-local", "unspecified", "multicast", "private",
             "public")
    return min(kinds, key=order.index)


def _kind(ip: IPAddress) -> str:
    if ip in METADATA_ADDRESSES:
        return "metadata"
    if ip.is_loopback:
        return "loopback"
    if ip.is_link_local:
        return "link-local"
    if ip.is_unspecified:
        return "unspecified"
    if ip.is_multicast:
        return "multicast"
    if ip.is_private or ip.is_reserved or not ip.is_global:
        return "private"
    return "public"


def decide(host: str, port: int | None, addresses: Iterable[str], policy: AddressPolicy
           ) -> str | None:
    """Why ``host`` (resolved to ``addresses``) is refused, or None when it is allowed."""
    if policy.allows_name(host, port):
        return None
    found = False
    for text in addresses:
        found = True
        ip = ipaddress.ip_address(text.split("%", 1)[0])
        kind = address_kind(ip)
        if kind in ("metadata", "loopback", "link-local", "unspecified", "multicast"):
            return (f"{host} is a {kind} address; list it in STORAGE_ALLOWED_ENDPOINTS "
                    "to use it")
        if kind == "private" and policy.deny_private:
            return f"{host} is a private address and STORAGE_DENY_PRIVATE is set"
    if not found:
        return f"{host} does not resolve to an address"
    return None


def policy_from(allowed: Iterable[str], deny_private: bool) -> AddressPolicy:
    """The policy of the ``STORAGE_ALLOWED_ENDPOINTS`` and ``STORAGE_DENY_PRIVATE`` settings."""
    return AddressPolicy(frozenset(a.lower() for a in allowed), deny_private)


def split_endpoint(endpoint: str) -> tuple[str, int | None]:
    """``host:port`` (or ``[v6]:port``) into host and port."""
    parts = urlsplit("//" + endpoint)
    return (parts.hostname or ""), parts.port


def check_endpoint(endpoint: str, policy: AddressPolicy, *, trusted: Iterable[str] = ()) -> None:
    """Raise :class:`EndpointRefused` unless ``endpoint`` (``host:port``) may be connected to.
    ``trusted`` endpoints (the embedded and the operator's storage) are always allowed."""
    if endpoint.lower() in {t.lower() for t in trusted if t}:
        return
    host, port = split_endpoint(endpoint)
    if policy.allows_name(host, port):
        return
    try:
        infos = socket.getaddrinfo(host, port or 80, type=socket.SOCK_STREAM)
    except (OSError, UnicodeError) as exc:
        raise EndpointRefused(f"{host} does not resolve to an address") from exc
    reason = decide(host, port, [str(info[4][0]) for info in infos], policy)
    if reason:
        raise EndpointRefused(reason)
