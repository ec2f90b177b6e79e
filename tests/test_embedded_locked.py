"""The embedded stores are locked: started as `serve` starts them (no MONGO_URL, REDIS_URL or
S3_*), every port and unix socket the service's child processes listen on refuses a local
client that does not hold the service's credentials (the keys, certificates and passwords in
the 0700 data directory).

Each refusal is checked against a positive control on the same port with the service's
credentials, so a test passes only because the credentials are missing, not because the port
speaks something else."""

from __future__ import annotations

import contextlib
import http.client
import json
import os
import socket
import ssl
import stat
import subprocess
import sys
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import psutil
import pymongo
import pytest
from minio import Minio
from pymongo.errors import OperationFailure, PyMongoError

from tests.processes import stop_process, wait_healthy
from tornado_app.embedded.servers import free_port

pytestmark = pytest.mark.slow  # starts the embedded servers

ROOT = Path(__file__).resolve().parents[1]
HOST = "127.0.0.1"
SECRET = b"company ACME's private document"
SECRET_KEY = "t/ACME/private.txt"
H2_PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + b"\x00\x00\x00\x04\x00\x00\x00\x00\x00"
HTTP_PATHS = ("/", "/buckets/", "/buckets/docservice/", "/buckets/docservice/t/ACME/",
              f"/buckets/docservice/{SECRET_KEY}", "/dir/status", "/dir/assign", "/vol/status",
              "/col/delete?collection=docservice", "/status")


@dataclass
class Service:
    """The running service, its data directory and what it listens on through its children."""

    proc: subprocess.Popen[str]
    data: Path
    tcp: dict[int, psutil.Process] = field(default_factory=dict)  # port -> listening child
    unix: dict[str, psutil.Process] = field(default_factory=dict)  # socket path -> child

    @property
    def weed_ports(self) -> dict[str, int]:
        return json.loads((self.data / "s3" / "ports.json").read_text())

    def s3_keys(self) -> tuple[str, str]:
        cred = json.loads((self.data / "s3" / "s3.json").read_text())["identities"][0]
        return cred["credentials"][0]["accessKey"], cred["credentials"][0]["secretKey"]

    def tls(self, *, alpn: str) -> ssl.SSLContext:
        """The service's own client context for SeaweedFS (the positive control)."""
        d = self.data / "s3" / "tls"
        ctx = ssl.create_default_context(cafile=str(d / "ca.crt"))
        ctx.load_cert_chain(str(d / "node.crt"), str(d / "node.key"))
        ctx.set_alpn_protocols([alpn])
        return ctx

    def mongo_url(self, port: int) -> str:
        auth = json.loads((self.data / "mongo.auth.json").read_text())
        return (f"mongodb://{auth['user']}:{auth['password']}@{HOST}:{port}/"
                "?directConnection=true&authSource=admin")


def _listening(root: psutil.Process) -> tuple[dict[int, psutil.Process], dict[str, psutil.Process]]:
    """Every TCP port and unix socket path the child processes of ``root`` listen on."""
    tcp: dict[int, psutil.Process] = {}
    unix: dict[str, psutil.Process] = {}
    for child in root.children(recursive=True):
        with contextlib.suppress(psutil.NoSuchProcess):
            for conn in child.net_connections(kind="inet"):
                if conn.status == psutil.CONN_LISTEN:
                    tcp[conn.laddr.port] = child
            for conn in child.net_connections(kind="unix"):
                if conn.laddr and conn.status in (psutil.CONN_LISTEN, psutil.CONN_NONE) \
                        and not conn.raddr and Path(conn.laddr).exists():
                    unix[conn.laddr] = child
    return tcp, unix


@pytest.fixture(scope="module")
def service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Service]:
    data = tmp_path_factory.mktemp("locked") / "data"
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MONGO_", "REDIS_", "S3_"))}
    env.update(DATA_DIR=str(data), PYTHONPATH=str(ROOT), METRICS_ADDRESS="off",
               DOCS_API_TOKEN="operator-token-of-the-locked-tests")
    proc = subprocess.Popen([sys.executable, "-m", "tornado_app", "serve", "--port", str(port)],
                            env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            text=True, cwd=ROOT)
    try:
        wait_healthy(proc, f"http://{HOST}:{port}/health", timeout=90)
        svc = Service(proc, data)
        access, secret = svc.s3_keys()
        s3 = Minio(f"{HOST}:{svc.weed_ports['s3.port']}", access_key=access, secret_key=secret,
                   secure=False, region="us-east-1")
        import io

        s3.put_object("docservice", SECRET_KEY, io.BytesIO(SECRET), len(SECRET))
        svc.tcp, svc.unix = _listening(psutil.Process(proc.pid))
        yield svc
    finally:
        stop_process(proc)


def _get(port: int, path: str, *, ctx: ssl.SSLContext | None = None,
         unix: str | None = None) -> tuple[int, bytes]:
    """One HTTP GET: (status, body). Raises OSError/ssl.SSLError when refused."""
    if unix is not None:
        conn: http.client.HTTPConnection = http.client.HTTPConnection("localhost", timeout=5)
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.settimeout(5)
        sock.connect(unix)
        conn.sock = sock
    elif ctx is not None:
        conn = http.client.HTTPSConnection(HOST, port, timeout=5, context=ctx)
    else:
        conn = http.client.HTTPConnection(HOST, port, timeout=5)
    try:
        conn.request("GET", path)
        resp = conn.getresponse()
        return resp.status, resp.read()
    finally:
        conn.close()


def _refused_or_denied(port: int, path: str, ctx: ssl.SSLContext | None = None,
                       unix: str | None = None) -> str:
    """How an unauthenticated GET ended: 'refused' or the status; fails on anything served."""
    try:
        status, body = _get(port, path, ctx=ctx, unix=unix)
    except (OSError, ssl.SSLError, http.client.HTTPException):
        return "refused"
    assert SECRET not in body and b"Topology" not in body, (path, body)
    if "private.txt" not in path:  # an error message may echo the key it was asked for
        assert b"private.txt" not in body, (path, body)
    assert status in (400, 401, 403), (port, path, status, body[:200])
    return str(status)


def _no_cert_context(alpn: str) -> ssl.SSLContext:
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    ctx.check_hostname = False
    ctx.verify_mode = ssl.CERT_NONE
    ctx.set_alpn_protocols([alpn])
    return ctx


def _h2_settings(sock: socket.socket) -> bool:
    """Send the HTTP/2 preface; True when the peer answers with a SETTINGS frame (gRPC)."""
    sock.sendall(H2_PREFACE)
    data = b""
    with contextlib.suppress(OSError, ssl.SSLError):
        while len(data) < 9:
            chunk = sock.recv(9 - len(data))
            if not chunk:
                break
            data += chunk
    return len(data) == 9 and data[3] == 0x04


def _grpc_answers(port: int, ctx: ssl.SSLContext | None, unix: str | None = None) -> bool:
    """True when a gRPC (HTTP/2) session can be opened: plain when ``ctx`` is None."""
    family, address = (socket.AF_UNIX, unix) if unix else (socket.AF_INET, (HOST, port))
    with socket.socket(family, socket.SOCK_STREAM) as raw:
        raw.settimeout(5)
        raw.connect(address)
        if ctx is None:
            return _h2_settings(raw)
        try:
            with ctx.wrap_socket(raw, server_hostname=HOST) as tls:
                return _h2_settings(tls)
        except (OSError, ssl.SSLError):
            return False


def test_every_listening_port_is_known(service: Service) -> None:
    weed = set(service.weed_ports.values())
    unknown = {port: p.name() for port, p in service.tcp.items()
               if port not in weed and "secantusd" not in " ".join(p.cmdline())}
    assert not unknown, f"child processes listen on ports nobody checks: {unknown}"
    assert service.tcp, "no listening child found"
    names = {p.name() for p in service.tcp.values()}
    assert "weed" in names and any("secantusd" in " ".join(p.cmdline())
                                   for p in service.tcp.values())
    for port, proc in service.tcp.items():  # loopback only
        addrs = {c.laddr.ip for c in proc.net_connections(kind="inet")
                 if c.laddr.port == port and c.status == psutil.CONN_LISTEN}
        assert addrs == {HOST}, (port, addrs)


def test_seaweed_http_ports_need_the_client_certificate(service: Service) -> None:
    ports = service.weed_ports
    http_ports = {name: ports[name] for name in ("master.port", "volume.port", "filer.port",
                                                 "admin.port")}
    for name, port in http_ports.items():
        assert port in service.tcp, f"{name} does not listen"
        for path in HTTP_PATHS:
            assert _refused_or_denied(port, path) in ("refused", "400"), (name, path)
            assert _refused_or_denied(port, path, _no_cert_context("http/1.1")) == "refused"
    # positive controls: with the service's certificate the same ports answer...
    with_cert = service.tls(alpn="http/1.1")
    status, body = _get(ports["master.port"], "/dir/status", ctx=with_cert)
    assert status == 200 and b"Topology" in body
    # ...and the filer and the volume server still want their JWT even then
    assert _refused_or_denied(ports["filer.port"], "/buckets/docservice/t/ACME/",
                              with_cert) == "401"
    status, body = _get(ports["master.port"], "/dir/assign", ctx=with_cert)
    fid = json.loads(body)["fid"]
    assert _refused_or_denied(ports["volume.port"], f"/{fid}", with_cert) == "401"


def test_seaweed_grpc_ports_need_the_client_certificate(service: Service) -> None:
    grpc_ports = {n: p for n, p in service.weed_ports.items() if n.endswith(".grpc")}
    assert len(grpc_ports) == 5
    for name, port in grpc_ports.items():
        assert port in service.tcp, f"{name} does not listen"
        assert not _grpc_answers(port, None), f"{name} speaks plain gRPC"
        assert not _grpc_answers(port, _no_cert_context("h2")), f"{name}: TLS without a cert"
        assert _grpc_answers(port, service.tls(alpn="h2")), f"{name}: control failed"


def test_s3_needs_a_signature(service: Service) -> None:
    port = service.weed_ports["s3.port"]
    for path in ("/", "/docservice", "/docservice/?list-type=2", f"/docservice/{SECRET_KEY}"):
        assert _refused_or_denied(port, path) == "403", path
    req = urllib.request.Request(f"http://{HOST}:{port}/docservice/t/OTHER/planted.txt",
                                 data=b"planted", method="PUT")
    with pytest.raises(urllib.error.HTTPError) as err:
        urllib.request.urlopen(req, timeout=5)
    assert err.value.code == 403
    access, secret = service.s3_keys()
    s3 = Minio(f"{HOST}:{port}", access_key=access, secret_key=secret, secure=False,
               region="us-east-1")
    assert s3.get_object("docservice", SECRET_KEY).read() == SECRET  # control
    assert not list(s3.list_objects("docservice", prefix="t/OTHER/"))


def test_secantus_refuses_clients_without_the_login(service: Service) -> None:
    ports = [port for port, p in service.tcp.items() if "secantusd" in " ".join(p.cmdline())]
    assert len(ports) == 1
    port = ports[0]
    anon = pymongo.MongoClient(host=HOST, port=port, directConnection=True,
                               serverSelectionTimeoutMS=5000)
    wrong = None
    try:
        attempts = (lambda c: c.list_database_names(),
                    lambda c: c.docservice.users.find_one(),
                    lambda c: c.docservice.settings.find_one(),
                    lambda c: c.docservice.users.insert_one({"u": "planted"}),
                    lambda c: c.admin.command("usersInfo"))
        for attempt in attempts:  # every command but the handshake needs a login
            with pytest.raises(OperationFailure) as err:
                attempt(anon)
            assert err.value.code == 13, err.value
        wrong = pymongo.MongoClient(service.mongo_url(port).replace("@", "x@", 1),
                                    serverSelectionTimeoutMS=2000)
        for attempt in attempts[:2]:  # a wrong password: the login itself is refused
            with pytest.raises(PyMongoError, match="AuthenticationFailed"):
                attempt(wrong)
    finally:
        anon.close()
        if wrong is not None:
            wrong.close()
    owner = pymongo.MongoClient(service.mongo_url(port), serverSelectionTimeoutMS=5000)
    try:
        assert "docservice" in owner.list_database_names()  # control: the live database
        assert owner.docservice.users.find_one({"u": "planted"}) is None
        users = owner.admin.command("usersInfo")["users"]
        assert [u["user"] for u in users] == ["docservice"]
    finally:
        owner.close()
    auth = service.data / "mongo.auth.json"
    assert stat.S_IMODE(auth.stat().st_mode) == 0o600


def test_unix_sockets_are_private(service: Service) -> None:
    me = os.getuid()
    assert any(path.endswith("redis.sock") for path in service.unix)
    for path, proc in service.unix.items():
        st = os.stat(path)
        parent = os.stat(os.path.dirname(path))
        private_dir = stat.S_IMODE(parent.st_mode) == 0o700 and parent.st_uid == me
        private_sock = stat.S_IMODE(st.st_mode) & 0o077 == 0 and st.st_uid == me
        assert private_dir or private_sock, (path, proc.name(), oct(st.st_mode))
        if proc.name() == "weed" and not private_dir:
            # weed's fixed /tmp gRPC sockets: owner-only, and mutual TLS as on TCP
            assert path.startswith("/tmp/seaweedfs-") and "-grpc-" in path, path
            assert not _grpc_answers(0, None, unix=path)
            assert not _grpc_answers(0, _no_cert_context("h2"), unix=path)
    data_sockets = [p for p in service.unix if p.startswith(str(service.data))]
    for path in data_sockets:  # every one in a 0700 directory
        assert stat.S_IMODE(os.stat(os.path.dirname(path)).st_mode) == 0o700, path
    filer_sock = str(service.data / "s3" / "filer.sock")
    assert filer_sock in service.unix
    assert _refused_or_denied(0, "/buckets/docservice/t/ACME/", unix=filer_sock) == "401"


def test_secantus_login_kept_across_restarts_and_made_again_when_lost(tmp_path: Path) -> None:
    from tornado_app.embedded.secantus import credentials_path
    from tornado_app.embedded.servers import start_secantus

    store = tmp_path / "mongo"
    first = start_secantus(store, tmp_path / "logs")
    try:
        with pymongo.MongoClient(first.url) as client:
            client.docservice.users.insert_one({"u": "kept"})
    finally:
        first.stop()
    auth = credentials_path(store)
    saved = auth.read_text()
    again = start_secantus(store, tmp_path / "logs")  # no new user: the same login
    try:
        assert auth.read_text() == saved and again.url != first.url  # (a new port)
        with pymongo.MongoClient(again.url) as client:
            assert client.docservice.users.find_one({"u": "kept"}) is not None
    finally:
        again.stop()
    auth.write_text(json.dumps({"user": "docservice", "password": "not-the-stored-one"}))
    third = start_secantus(store, tmp_path / "logs")  # the store refuses it: provisioned again
    try:
        assert json.loads(auth.read_text())["password"] != "not-the-stored-one"
        with pymongo.MongoClient(third.url) as client:
            assert client.docservice.users.find_one({"u": "kept"}) is not None
            assert [u["user"] for u in client.admin.command("usersInfo")["users"]] == [
                "docservice"]
    finally:
        third.stop()
    assert stat.S_IMODE(auth.stat().st_mode) == 0o600
