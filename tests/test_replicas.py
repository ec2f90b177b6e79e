"""Two replicas of the service share everything through Redis, MongoDB and S3.

One redis-server, one SecantusDB and one SeaweedFS run for the module; two ``serve``
processes on different ports (each with its own empty ``DATA_DIR``) point at them. Every
property is shown with real HTTP requests: what one replica writes, the other sees at once,
because nothing lives in one process only.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import urllib.error
import urllib.request
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from store.objects import ObjectStore
from tests.archive_fixtures import tgz_of
from tests.conftest import multipart
from tests.pdf_fixtures import tiny_png
from tests.processes import stop_process, wait_healthy
from tests.waiting import wait_until
from tornado_app.embedded.servers import free_port, start_redis, start_secantus

ROOT = Path(__file__).resolve().parents[1]
COMPANY, ADMIN, ADMIN_PASSWORD = "REPL", "admin", "replica admin pw"
USER_PASSWORD = "replica user pw"
OPERATOR = "replica-operator-token"  # the docs caller of calls that name none
AUTH_FACE = ("/api/auth/", "/api/users", "/api/keys", "/health")

pytestmark = [pytest.mark.timeout(120), pytest.mark.slow]  # processes


@dataclass
class Reply:
    status: int
    body: Any


@dataclass
class Replica:
    """One ``serve`` process and a tiny urllib client for it."""

    name: str
    port: int
    process: subprocess.Popen[bytes]
    log_path: Path

    def call(self, method: str, path: str, body: Any = None, *, token: str | None = None,
             form: dict[str, str] | None = None,
             files: dict[str, tuple[str, bytes]] | None = None) -> Reply:
        """One request; JSON body, or multipart when ``form``/``files`` is given."""
        headers: dict[str, str] = {}
        data: bytes | None = None
        if token:
            headers["Authorization"] = f"Bearer {token}"
        elif token is None and not path.startswith(AUTH_FACE):
            headers["Authorization"] = f"Bearer {OPERATOR}"
        if form is not None or files is not None:
            data, headers["Content-Type"] = multipart(form or {}, files)
        elif body is not None:
            data = json.dumps(body).encode()
            headers["Content-Type"] = "application/json"
        elif method in ("POST", "PUT"):
            data = b""
        req = urllib.request.Request(f"http://127.0.0.1:{self.port}{path}", data=data,
                                     headers=headers, method=method)
        try:
            with urllib.request.urlopen(req, timeout=30) as r:
                return Reply(r.status, json.loads(r.read() or b"null"))
        except urllib.error.HTTPError as e:
            return Reply(e.code, json.loads(e.read() or b"null"))

    def log_tail(self) -> str:
        return self.log_path.read_text(errors="replace")[-3000:]


@dataclass
class Cluster:
    a: Replica
    b: Replica
    s3_endpoint: str
    bucket: str
    access: str
    secret: str


def _env(base: Path, name: str, urls: dict[str, str]) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MONGO_", "REDIS_", "S3_"))}
    env.update(urls, DATA_DIR=str(base / f"data-{name}"), LOG_LEVEL="INFO",
               PYTHONPATH=str(ROOT), POOL_WORKERS="1", METRICS_ADDRESS="off",
               DOCS_API_TOKEN=OPERATOR)
    return env


def _spawn(base: Path, name: str, seed: Path, urls: dict[str, str]) -> Replica:
    port = free_port()
    log_path = base / f"{name}.log"
    with open(log_path, "wb") as out:
        proc = subprocess.Popen(
            [sys.executable, "-m", "tornado_app", "serve", "--port", str(port),
             "--seed", str(seed)],
            env=_env(base, name, urls), stdout=out, stderr=subprocess.STDOUT, cwd=ROOT,
        )
    return Replica(name, port, proc, log_path)


def _wait_healthy(replica: Replica, timeout: float = 60) -> None:
    wait_healthy(replica.process, f"http://127.0.0.1:{replica.port}/health", timeout,
                 output=replica.log_tail)


def _stop(replica: Replica) -> int:
    """SIGTERM, then wait; kills it if it does not exit in time. Returns the exit code."""
    return stop_process(replica.process)


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    from tests.s3_server import running_s3

    base = tmp_path_factory.mktemp("replicas")
    redis = start_redis(base / "redis", persistent=False)
    mongo = start_secantus(None, base / "mongo-logs")
    replicas: list[Replica] = []
    try:
        with running_s3() as s3:
            bucket = f"r{uuid.uuid4().hex[:12]}"
            assert ObjectStore(s3.config(bucket)).test_connection(
                create_if_missing=True)["bucket_exists"]
            seed = base / "seed.json"
            seed.write_text(json.dumps({"companies": [{"code": COMPANY, "name": "Replica Co",
                                                       "users": [{
                                                           "username": ADMIN,
                                                           "password": ADMIN_PASSWORD,
                                                           "role": "ADMIN",
                                                           "status": "ACTIVE"}]}]}))
            urls = {"MONGO_URL": mongo.url, "MONGO_DB": f"r_{uuid.uuid4().hex[:10]}",
                    "REDIS_URL": redis.url, "S3_ENDPOINT": s3.endpoint,
                    "S3_ACCESS_KEY": s3.handle.access, "S3_SECRET_KEY": s3.handle.secret,
                    "S3_BUCKET": bucket}
            # the first one seeds alone, so the second sees a finished seed (no race)
            replicas.append(_spawn(base, "a", seed, urls))
            _wait_healthy(replicas[0])
            replicas.append(_spawn(base, "b", seed, urls))
            _wait_healthy(replicas[1])
            yield Cluster(replicas[0], replicas[1], s3.endpoint, bucket, s3.handle.access,
                          s3.handle.secret)
    finally:
        for replica in replicas:
            _stop(replica)
        mongo.stop()
        redis.stop()


def _login(replica: Replica, username: str = ADMIN, password: str = ADMIN_PASSWORD) -> str:
    r = replica.call("POST", "/api/auth/login",
                     {"companyCode": COMPANY, "username": username, "password": password})
    assert r.status == 200, r.body
    return r.body["data"]["token"]


def _ok(reply: Reply) -> Any:
    assert reply.status == 200 and reply.body["code"] == 0, reply.body
    return reply.body["data"]


def _download(url: str) -> bytes:
    with urllib.request.urlopen(url, timeout=10) as r:
        return r.read()


def test_replicas_run_separate_processes_and_ports(cluster):
    assert cluster.a.port != cluster.b.port
    assert cluster.a.process.pid != cluster.b.process.pid
    for replica in (cluster.a, cluster.b):
        assert replica.call("GET", "/health").body == {"status": "ok"}


def test_session_made_on_one_is_valid_on_other_and_logout_kills_it_on_both(cluster):
    token = _login(cluster.a)
    me_a = cluster.a.call("GET", "/api/auth/me", token=token)
    me_b = cluster.b.call("GET", "/api/auth/me", token=token)
    assert me_a.status == me_b.status == 200
    assert me_b.body["data"] == me_a.body["data"]
    assert me_b.body["data"]["username"] == ADMIN and me_b.body["data"]["role"] == "ADMIN"

    assert cluster.b.call("POST", "/api/auth/logout", token=token).status == 200
    for replica in (cluster.a, cluster.b):
        r = replica.call("GET", "/api/auth/me", token=token)
        assert r.status == 401 and r.body["code"] == "UNAUTHORIZED", replica.name
    # a session made on B works on A too
    token_b = _login(cluster.b)
    assert cluster.a.call("GET", "/api/auth/me", token=token_b).status == 200


def test_role_change_and_disable_on_one_are_enforced_on_other_at_once(cluster):
    admin = _login(cluster.a)
    username = f"rev{uuid.uuid4().hex[:8]}"
    created = cluster.a.call("POST", "/api/users", {"username": username,
                                                     "password": USER_PASSWORD,
                                                     "realName": "Rita", "role": "REVIEWER"},
                             token=admin)
    assert created.status == 201, created.body
    user_id = created.body["data"]["id"]
    # the user created on A logs in on B; B reads the role from the shared cache/database
    user = _login(cluster.b, username, USER_PASSWORD)
    r = cluster.b.call("GET", "/api/users", token=user)
    assert r.status == 403 and r.body["code"] == "FORBIDDEN"

    # promote on A: the existing token on B is an ADMIN on its very next request
    assert cluster.a.call("PUT", f"/api/users/{user_id}/role", {"role": "ADMIN"},
                          token=admin).status == 200
    r = cluster.b.call("GET", "/api/users", token=user)
    assert r.status == 200 and username in [u["username"] for u in r.body["data"]["items"]]

    # disable on B (by the admin's A-made session): A refuses the token at once
    assert cluster.a.call("GET", "/api/auth/me", token=user).status == 200
    r = cluster.b.call("PUT", f"/api/users/{user_id}/status", {"status": "DISABLED"},
                       token=admin)
    assert r.status == 200, r.body
    for replica in (cluster.a, cluster.b):
        assert replica.call("GET", "/api/auth/me", token=user).status == 401, replica.name
    r = cluster.a.call("POST", "/api/auth/login",
                       {"companyCode": COMPANY, "username": username, "password": USER_PASSWORD})
    assert r.status == 403 and r.body["code"] == "USER_DISABLED"
    listed = cluster.a.call("GET", "/api/users?status=DISABLED", token=admin).body["data"]
    assert [u["username"] for u in listed["items"]] == [username]


def test_storage_config_profiles_and_link_map_set_on_one_are_seen_on_other(cluster):
    a, b = cluster.a, cluster.b
    start = b.call("GET", "/config").body
    assert start["storage"]["bucket"] == cluster.bucket and start["storage_embedded"] is False
    # keep the environment's configuration as a profile (saved on A, listed on B)
    assert a.call("POST", "/config/save_profile", form={"name": "main"}).body["ok"] is True
    names = [p["name"] for p in b.call("GET", "/config/profiles").body["profiles"]]
    assert "main" in names

    other = f"o{uuid.uuid4().hex[:12]}"
    fields = {"endpoint": cluster.s3_endpoint, "access": cluster.access,
              "secret": cluster.secret, "bucket": other}
    t = a.call("POST", "/config/storage/test", form={**fields, "create_if_missing": "true"})
    assert t.body["connected"] and t.body["bucket_exists"], t.body
    try:
        r = a.call("POST", "/config/storage", form={**fields, "prefix": "shared"})
        assert r.status == 200 and r.body["ok"] is True
        seen = b.call("GET", "/config").body
        assert seen["storage"]["bucket"] == other and seen["storage"]["prefix"] == "shared"
        assert cluster.secret not in json.dumps(seen)
        # a conversion saved through B lands in the bucket A configured
        saved = _ok(b.call("POST", "/md/convert", form={"markdown_text": "# Shared",
                                                         "target": "docx", "save": "true",
                                                         "filename": "shared"}))
        assert f"/{other}/shared/" in saved["storage_url"]
        assert _download(saved["storage_presigned_url"])[:2] == b"PK"

        # a profile saved on B is loadable on A
        assert b.call("POST", "/config/save_profile",
                      form={"name": "other-bucket"}).body["ok"] is True
        assert "other-bucket" in [p["name"] for p in a.call("GET", "/config/profiles")
                                  .body["profiles"]]
    finally:
        r = b.call("GET", "/config/load_profile?name=main")  # restore, through the other one
        assert r.status == 200 and r.body["storage"]["bucket"] == cluster.bucket
    assert a.call("GET", "/config").body["storage"]["bucket"] == cluster.bucket

    mapping = {"img/logo.png": "https://cdn.example.com/logo.png"}
    assert a.call("POST", "/config/linkmap", {"map": mapping}).body == {"ok": True, "count": 1}
    try:
        got = b.call("GET", "/config/linkmap").body
        assert got["map"] == mapping and got["count"] == 1
        assert b.call("GET", "/config").body["linkmap_size"] == 1
        # B applies A's link map when it processes an archive: nothing is uploaded for it
        archive = tgz_of({"page.md": b"# P\n\n![l](img/logo.png)\n", "img/logo.png": tiny_png()})
        data = _ok(b.call("POST", "/api/upload-archive", form={"prefix": "lm"},
                          files={"file": ("lm.tgz", archive)}))
        assert data["files"][0]["mappings"] == [{"from": "img/logo.png",
                                                 "to": mapping["img/logo.png"]}]
    finally:
        assert b.call("POST", "/config/linkmap", {"map": {}}).body["count"] == 0
    assert a.call("GET", "/config/linkmap").body["map"] == {}


def test_archive_staged_on_one_is_processed_on_other(cluster):
    png = tiny_png()
    archive = tgz_of({"book/intro.md": b"# Intro\n\n![pic](../img/pic.png)\n",
                    "img/pic.png": png})
    staged = _ok(cluster.a.call("POST", "/api/archive/stage",
                                files={"file": ("book.tgz", archive)}))
    assert staged["name"] == "book.tgz" and staged["size"] == len(archive)

    done = _ok(cluster.b.call("POST", "/api/archive/process",
                              form={"id": staged["id"], "prefix": "rep", "versionId": "v1"}))
    assert done["count"] == 1
    entry = done["files"][0]
    assert entry["source"] == "book/intro.md" and entry["asset_ok"] == 1
    assert entry["storage_url"].endswith(f"/{cluster.bucket}/t/_operator/rep/v1/book/intro.md")
    text = _download(entry["storage_presigned_url"]).decode()
    assert text.startswith("# Intro") and "../img/pic.png" not in text
    pic_url = entry["mappings"][0]["to"]
    assert _download(pic_url) == png

    # an async job started on A is polled on B (job state lives in Redis)
    job = _ok(cluster.a.call("POST", "/api/archive/process",
                             form={"id": staged["id"], "async": "true"}))
    def ended() -> dict[str, Any]:
        state = _ok(cluster.b.call("GET", job["status_url"]))
        return state if state["state"] not in ("queued", "running") else {}

    state = wait_until(ended, timeout=10, what="the job ended")
    assert state["state"] == "done" and state["result"]["count"] == 1, state
    # an id neither replica staged is unknown to both
    for replica in (cluster.a, cluster.b):
        r = replica.call("POST", "/api/archive/process", form={"id": uuid.uuid4().hex})
        assert r.body["code"] == 40401


def test_api_key_made_on_one_works_on_other_and_a_revoke_applies_on_both(cluster):
    admin = _login(cluster.a)
    made = cluster.a.call("POST", "/api/keys", {"name": "replica script", "role": "ADMIN"},
                          token=admin)
    assert made.status == 201, made.body
    key = made.body["data"]
    for replica in (cluster.a, cluster.b):
        assert replica.call("GET", "/md/themes", token=key["key"]).status == 200, replica.name
        assert replica.call("GET", "/api/users", token=key["key"]).status == 200
    listed = cluster.b.call("GET", "/api/keys", token=admin).body["data"]["items"]
    assert [k["prefix"] for k in listed] == [key["prefix"]]
    assert cluster.b.call("DELETE", f"/api/keys/{key['id']}", token=admin).status == 200
    for replica in (cluster.a, cluster.b):  # no replica keeps it alive in a cache
        r = replica.call("GET", "/md/themes", token=key["key"])
        assert r.status == 401 and r.body["code"] == 40101, replica.name
        assert replica.call("GET", "/api/users", token=key["key"]).status == 401


def test_replicas_exit_cleanly_on_sigterm(cluster):
    """Last: both stop on SIGTERM with exit code 0 (the fixture then finds them gone)."""
    for replica in (cluster.a, cluster.b):
        assert _stop(replica) == 0, replica.log_tail()
