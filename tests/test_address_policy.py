"""The storage address policy, decided on addresses (never by connecting anywhere)."""

from __future__ import annotations

import pytest

from tornado_app.address_policy import AddressPolicy, EndpointRefused, check_endpoint, decide

DEFAULT = AddressPolicy()


@pytest.mark.parametrize("address", [
    "127.0.0.1", "127.9.9.9", "::1",  # loopback
    "169.254.169.254", "fd00:ec2::254", "100.100.100.200",  # cloud metadata
    "169.254.10.1", "fe80::1",  # link-local
    "0.0.0.0", "::",  # unspecified
    "::ffff:127.0.0.1", "::ffff:169.254.169.254",  # IPv4-mapped
    "64:ff9b::7f00:1", "64:ff9b::a9fe:a9fe",  # NAT64 of 127.0.0.1 and 169.254.169.254
    "2002:7f00:1::", "2002:a9fe:a9fe::1",  # 6to4 of the same
    "224.0.0.1",  # multicast
])
def test_local_and_metadata_addresses_are_refused(address: str) -> None:
    reason = decide("storage.example", 9000, [address], DEFAULT)
    assert reason is not None and "STORAGE_ALLOWED_ENDPOINTS" in reason


@pytest.mark.parametrize("address", ["10.1.2.3", "192.168.0.10", "172.16.5.5", "fd12:3456::1",
                                     "64:ff9b::a01:203"])
def test_private_ranges_allowed_unless_denied(address: str) -> None:
    assert decide("minio.lan", 9000, [address], DEFAULT) is None
    denied = decide("minio.lan", 9000, [address], AddressPolicy(deny_private=True))
    assert denied is not None and "STORAGE_DENY_PRIVATE" in denied


def test_public_addresses_allowed() -> None:
    assert decide("s3.example", 443, ["93.184.216.34", "2606:2800:220:1::1"], DEFAULT) is None
    assert decide("s3.example", 443, ["93.184.216.34"], AddressPolicy(deny_private=True)) is None


def test_one_bad_address_among_good_ones_refuses() -> None:
    assert decide("mixed.example", 9000, ["93.184.216.34", "127.0.0.1"], DEFAULT) is not None
    assert decide("nothing.example", 9000, [], DEFAULT) is not None


def test_operator_listed_endpoints_pass() -> None:
    by_port = AddressPolicy(frozenset({"127.0.0.1:9000"}))
    assert decide("127.0.0.1", 9000, ["127.0.0.1"], by_port) is None
    assert decide("127.0.0.1", 9001, ["127.0.0.1"], by_port) is not None
    by_host = AddressPolicy(frozenset({"localhost"}))
    assert decide("LOCALHOST", 1234, ["127.0.0.1"], by_host) is None


def test_check_endpoint_on_literals_and_trusted_endpoints() -> None:
    for endpoint in ("127.0.0.1:9000", "[::ffff:127.0.0.1]:9000", "[::1]:80", "localhost:9000",
                     "[64:ff9b::7f00:1]:80", "[2002:a9fe:a9fe::]:80", "169.254.169.254:80"):
        with pytest.raises(EndpointRefused):
            check_endpoint(endpoint, DEFAULT)
    check_endpoint("127.0.0.1:9000", DEFAULT, trusted={"127.0.0.1:9000"})  # the embedded one
    check_endpoint("10.0.0.5:9000", DEFAULT)  # a LAN MinIO


# the IPv6 forms that carry an IPv4 address, read as that address (issue 20): local-use NAT64
# 64:ff9b:1::/48 (RFC 8215, at every RFC 6052 length), IPv4-compatible ::a.b.c.d and
# IPv4-translated ::ffff:0:a.b.c.d
CARRIED = [
    ("64:ff9b:1:7f00:0:100::", "loopback"),  # 127.0.0.1 at /48
    ("64:ff9b:1:7f:0:1::", "loopback"),  # 127.0.0.1 at /56
    ("64:ff9b:1:0:7f:0:1::", "loopback"),  # 127.0.0.0/8 at /64
    ("64:ff9b:1::7f00:1", "loopback"),  # 127.0.0.1 at /96
    ("64:ff9b:1:a9fe:a9:fe00::", "metadata"),  # 169.254.169.254 at /48
    ("64:ff9b:1::a9fe:a9fe", "metadata"),  # ... at /96
    ("::127.0.0.1", "loopback"), ("::169.254.169.254", "metadata"), ("::169.254.1.1",
                                                                      "link-local"),
    ("::ffff:0:127.0.0.1", "loopback"), ("::ffff:0:169.254.169.254", "metadata"),
    ("::ffff:0:224.0.0.1", "multicast"),
]


@pytest.mark.parametrize("address,kind", CARRIED)
def test_ipv6_forms_carrying_ipv4_are_read_as_ipv4(address: str, kind: str) -> None:
    import ipaddress

    from tornado_app.address_policy import address_kind
    from tornado_app.documents.fetch import FetchRefused, is_public_address, refuse_literal_private

    assert address_kind(ipaddress.ip_address(address)) == kind
    reason = decide("storage.example", 9000, [address], DEFAULT)
    assert reason is not None and kind in reason and "STORAGE_ALLOWED_ENDPOINTS" in reason
    with pytest.raises(EndpointRefused, match=kind):
        check_endpoint(f"[{address}]:9000", DEFAULT)  # a literal: decided, never connected
    # the SSRF guard of remote fetches reads them the same way
    assert not is_public_address(address)
    with pytest.raises(FetchRefused):
        refuse_literal_private(f"http://[{address}]:8080/x")


@pytest.mark.parametrize("address,carried", [
    ("64:ff9b:1:808:8:800::", "8.8.8.8"), ("::ffff:0:8.8.8.8", "8.8.8.8"),
    ("::8.8.4.4", "8.8.4.4"), ("64:ff9b:1::a01:203", "10.1.2.3")])
def test_ipv6_forms_carrying_ordinary_ipv4_are_private_ranges(address: str, carried: str
                                                              ) -> None:
    import ipaddress

    from tornado_app.address_policy import embedded_ipv4s

    assert ipaddress.ip_address(carried) in embedded_ipv4s(ipaddress.ip_address(address))
    assert decide("minio.lan", 9000, [address], DEFAULT) is None  # private: allowed
    denied = decide("minio.lan", 9000, [address], AddressPolicy(deny_private=True))
    assert denied is not None and "STORAGE_DENY_PRIVATE" in denied
