"""Run SecantusDB (MongoDB wire protocol) so that only the service can use it.

SecantusDB listens on TCP only (no unix socket), so it runs with ``--auth``: every command but
the handshake needs a SCRAM-SHA-256 login as the one user this module creates, whose password
is kept in a 0600 file beside the store (in the 0700 data directory). ``--auth`` has no
"localhost exception", so the user is made in a first run *without* ``--auth`` that accepts only
clients presenting a certificate from a throwaway CA (mutual TLS): no other local process can
reach the store in that window either. Each start checks that the login works and provisions
the user again (new password) when it does not, e.g. after the store was replaced; provisioning
also drops every other user, so none made while the store was open survives.

SecantusDB is GPL-2.0-only: it only ever runs as a separate process (pymongo talks to it).
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import shutil
import signal
import socket
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote_plus

from tornado_app.embedded.processes import (
    Child,
    EmbeddedServerError,
    find_binary,
    free_port,
    spawn,
    wait_ready,
)
from tornado_app.embedded.tls import TlsError, ensure_tls

HOST = "127.0.0.1"
USER = "docservice"
AUTH_DB = "admin"


@dataclass(frozen=True)
class Credentials:
    """The service's SecantusDB login."""

    user: str
    password: str

    def url(self, port: int) -> str:
        return (f"mongodb://{quote_plus(self.user)}:{quote_plus(self.password)}@{HOST}:{port}/"
                f"?directConnection=true&authSource={AUTH_DB}")


def credentials_path(storage: Path) -> Path:
    """Where the login of the store at ``storage`` is kept: beside it, not inside it."""
    return storage.with_name(storage.name + ".auth.json")


def _load(path: Path) -> Credentials | None:
    try:
        doc = json.loads(path.read_text("utf-8"))
        creds = Credentials(str(doc["user"]), str(doc["password"]))
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return creds if creds.user and creds.password else None


def login_url(storage: Path, port: int) -> str | None:
    """The URL, with the service's login, of the SecantusDB serving the store at ``storage``
    on ``port`` (started by another process of this service: see
    :mod:`tornado_app.embedded.datadir`); None when the store has no saved login."""
    creds = _load(credentials_path(storage))
    return creds.url(port) if creds else None


def _save(path: Path, creds: Credentials) -> None:
    tmp = path.with_suffix(".tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        json.dump({"user": creds.user, "password": creds.password}, fh)
    os.replace(tmp, path)


# SIGKILL, not SIGTERM, when the service dies without stopping it: secantusd's SIGTERM
# handler stops its server from inside the signal handler and was seen to hang there (a
# killed service left it running, still holding its store's lock, in 2 of 3 CI runs).
# Its WiredTiger store keeps a journal, so the next start recovers what was committed;
# a clean stop of the service still terminates it gracefully (Child.stop).
_PARENT_DEATH = signal.SIGKILL


def _base_argv(binary: str, config: Path, port: int, storage: Path) -> list[str]:
    # --config: an explicit (empty) file turns off the search of ./secantusd.toml and
    # ~/.secantus/, which another local user might have planted.
    return [binary, "--config", str(config), "--host", HOST, "--port", str(port),
            "--storage-path", str(storage), "--log-level", "WARNING"]


def _provision(binary: str, config: Path, storage: Path, log_path: Path,
               creds: Credentials) -> None:
    """Create (or reset) the service's user in a run that only mutual-TLS clients can reach,
    and drop every other user."""
    import pymongo
    from pymongo.errors import OperationFailure, PyMongoError

    with tempfile.TemporaryDirectory(prefix="secantus-boot-") as tmp:
        try:
            tls = ensure_tls(Path(tmp), "secantus-bootstrap")
        except TlsError as exc:
            raise EmbeddedServerError(str(exc)) from exc
        port = free_port()
        argv = [*_base_argv(binary, config, port, storage),
                "--tls-cert-file", str(tls.cert), "--tls-key-file", str(tls.key),
                "--tls-ca-file", str(tls.ca), "--tls-require-client-cert"]
        child = Child("secantusd (provisioning)",
                      spawn("secantusd", argv, log_path, _PARENT_DEATH), "", log_path)
        client: pymongo.MongoClient[dict[str, Any]] | None = None
        try:
            wait_ready(child, (socket.AF_INET, port))
            client = pymongo.MongoClient(
                host=HOST, port=port, directConnection=True, tls=True, tlsCAFile=str(tls.ca),
                tlsCertificateKeyFile=str(tls.pem), serverSelectionTimeoutMS=20_000)
            admin = client[AUTH_DB]
            roles = [{"role": "root", "db": AUTH_DB}]
            try:
                admin.command("createUser", creds.user, pwd=creds.password, roles=roles)
            except OperationFailure:  # exists: the password file was lost
                admin.command("updateUser", creds.user, pwd=creds.password, roles=roles)
            for name in client.list_database_names():
                for user in client[name].command("usersInfo").get("users", []):
                    if (name, user.get("user")) != (AUTH_DB, creds.user):
                        client[name].command("dropUser", user["user"])
        except PyMongoError as exc:
            raise EmbeddedServerError(f"cannot provision the SecantusDB user: {exc}") from exc
        finally:
            if client is not None:
                client.close()
            child.stop()


def _login_works(url: str) -> bool:
    import pymongo
    from pymongo.errors import OperationFailure, PyMongoError

    client: pymongo.MongoClient[dict[str, Any]] = pymongo.MongoClient(
        url, serverSelectionTimeoutMS=20_000)
    try:
        client.admin.command("connectionStatus")
        return True
    except OperationFailure:
        return False
    except PyMongoError as exc:
        raise EmbeddedServerError(f"SecantusDB does not answer: {exc}") from exc
    finally:
        client.close()


def start_secantus(storage: Path | None, log_dir: Path) -> Child:
    """Start SecantusDB with ``--auth`` on a free loopback port; the returned URL carries the
    service's login. ``storage=None`` keeps the data in a temporary directory removed on stop
    (tests)."""
    binary = find_binary(
        "secantusd-py", "install the embedded extra: `pip install 'SecantusDB==0.7.0b3'`"
    )
    log_dir.mkdir(parents=True, exist_ok=True)
    scratch = Path(tempfile.mkdtemp(prefix="secantus-")) if storage is None else None
    store = (scratch / "store") if scratch is not None else storage
    assert store is not None
    store.mkdir(parents=True, exist_ok=True)
    with contextlib.suppress(OSError):
        os.chmod(store, 0o700)
    config = store.with_name(store.name + ".secantusd.toml")
    config.write_text("# no settings: flags only (the file stops the config search)\n")
    auth_path = credentials_path(store)
    creds = _load(auth_path)
    try:
        return _start(binary, config, store, auth_path, creds, log_dir, scratch)
    except EmbeddedServerError as exc:
        if "already being managed by another process" in str(exc):  # WiredTiger's own lock
            raise EmbeddedServerError(
                f"the SecantusDB store {store} is open in another process (a service still "
                "running on this DATA_DIR?): stop it first") from None
        raise


def _start(binary: str, config: Path, store: Path, auth_path: Path, creds: Credentials | None,
           log_dir: Path, scratch: Path | None) -> Child:
    """:func:`start_secantus` once its files are in place."""
    try:
        for _attempt in range(2):
            if creds is None:
                creds = Credentials(USER, secrets.token_urlsafe(32))
                _provision(binary, config, store, log_dir / "secantus-provision.log", creds)
                _save(auth_path, creds)
            port = free_port()
            log_path = log_dir / f"secantus-{port}.log"
            argv = [*_base_argv(binary, config, port, store), "--auth"]
            child = Child("secantusd", spawn("secantusd", argv, log_path, _PARENT_DEATH),
                          creds.url(port), log_path)
            wait_ready(child, (socket.AF_INET, port))
            if _login_works(child.url):
                child.scratch, scratch = scratch, None
                return child
            child.stop()  # the store does not know this login (replaced?): provision again
            creds = None
    finally:
        if scratch is not None:  # not handed to a running child
            shutil.rmtree(scratch, ignore_errors=True)
    raise EmbeddedServerError("SecantusDB refuses the login it was just given")
