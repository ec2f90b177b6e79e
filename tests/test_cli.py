"""The command line as an operator uses it: serve on embedded defaults, seed, signals,
data kept across restarts, create-company / create-user."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import urllib3

from tornado_app.embedded.servers import free_port

ROOT = Path(__file__).resolve().parents[1]


def _env(data_dir: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MONGO_", "REDIS_", "S3_"))}
    env.update(DATA_DIR=str(data_dir), LOG_LEVEL="INFO", PYTHONPATH=str(ROOT))
    return env


def _start(data_dir: Path | None, *args: str, cwd: Path = ROOT
           ) -> tuple[subprocess.Popen[str], int]:
    """Start ``serve``; ``data_dir=None`` leaves DATA_DIR unset (the default ./data)."""
    port = free_port()
    env = _env(data_dir or Path("unused"))
    if data_dir is None:
        del env["DATA_DIR"]
    proc = subprocess.Popen(
        [sys.executable, "-m", "tornado_app", "serve", "--port", str(port), *args],
        env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, cwd=cwd,
    )
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        assert proc.poll() is None, proc.stdout.read() if proc.stdout else ""
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=1) as r:
                assert json.load(r) == {"status": "ok"}
                return proc, port
        except (urllib.error.URLError, ConnectionError):
            time.sleep(0.1)
    proc.kill()
    raise AssertionError("service did not answer /health")


def _post(port: int, path: str, body: dict) -> tuple[int, dict]:
    req = urllib.request.Request(f"http://127.0.0.1:{port}{path}", data=json.dumps(body).encode(),
                                 headers={"Content-Type": "application/json"}, method="POST")
    try:
        with urllib.request.urlopen(req, timeout=10) as r:
            return r.status, json.load(r)
    except urllib.error.HTTPError as e:
        return e.code, json.load(e)


def _stop(proc: subprocess.Popen[str], sig: int = signal.SIGTERM) -> list[int]:
    proc.send_signal(sig)
    out, _ = proc.communicate(timeout=30)
    assert proc.returncode == 0, out
    pids = []
    for line in out.splitlines():
        if line.startswith("{") and "embedded server started" in line:
            pids.append(json.loads(line)["pid"])
    return pids


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    status = Path(f"/proc/{pid}/status")
    return status.exists() and "zombie" not in status.read_text()


def test_serve_seed_signals_and_restart(tmp_path):
    seed = tmp_path / "seed.json"
    seed.write_text(json.dumps({"companies": [{"code": "ACME", "name": "Acme", "users": [
        {"username": "admin", "password": "admin password", "realName": "Ada",
         "role": "ADMIN", "status": "ACTIVE"}]}]}))
    data = tmp_path / "data"
    proc, port = _start(data, "--seed", str(seed))
    status, body = _post(port, "/api/auth/login", {"companyCode": "ACME", "username": "admin",
                                                   "password": "admin password"})
    assert status == 200
    user_id, token = body["data"]["userId"], body["data"]["token"]
    pids = _stop(proc, signal.SIGTERM)
    assert len(pids) >= 2
    time.sleep(0.5)
    assert not [p for p in pids if _alive(p)], "embedded servers left behind"
    assert (data / "mongo").is_dir() and (data / "redis").is_dir()

    proc, port = _start(data, "--seed", str(seed))  # seeding twice changes nothing
    try:
        req = urllib.request.Request(f"http://127.0.0.1:{port}/api/auth/me",
                                     headers={"Authorization": f"Bearer {token}"})
        with urllib.request.urlopen(req, timeout=10) as r:
            me = json.load(r)["data"]
        assert me["id"] == user_id and me["companyName"] == "Acme"  # session and data kept
    finally:
        pids = _stop(proc, signal.SIGINT)
    time.sleep(0.5)
    assert not [p for p in pids if _alive(p)]


def test_create_company_and_user_commands(tmp_path):
    data = tmp_path / "data"

    def cli(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "tornado_app", *args], env=_env(data),
                              capture_output=True, text=True, timeout=60, cwd=ROOT)

    r = cli("create-company", "--code", "INIT", "--name", "Initech")
    assert r.returncode == 0, r.stderr
    r = cli("create-user", "--company", "INIT", "--username", "peter", "--password",
            "tps reports!", "--role", "ADMIN")
    assert r.returncode == 0 and "created" in r.stdout, r.stderr
    assert "tps reports!" not in r.stderr  # no password in logs
    r = cli("create-user", "--company", "NOPE", "--username", "x12", "--password", "12345678")
    assert r.returncode == 2 and "no company" in r.stderr
    proc, port = _start(data, "--services", "auth")
    try:
        status, body = _post(port, "/api/auth/login", {"companyCode": "INIT",
                                                       "username": "peter",
                                                       "password": "tps reports!"})
        assert status == 200 and body["data"]["role"] == "ADMIN"
    finally:
        _stop(proc)


def test_services_flag_picks_route_sets(tmp_path):
    proc, port = _start(tmp_path / "data", "--services", "docs")
    try:
        status, _ = _post(port, "/api/auth/login", {"companyCode": "A", "username": "b",
                                                       "password": "c"})
        assert status == 404
    finally:
        _stop(proc)
    r = subprocess.run([sys.executable, "-m", "tornado_app", "serve", "--services", "bogus"],
                       env=_env(tmp_path / "d2"), capture_output=True, text=True, timeout=30,
                       cwd=ROOT)
    assert r.returncode == 2 and "unknown service" in r.stderr


def test_sigterm_during_conversion_finishes_it_then_exits(tmp_path):
    import threading

    proc, port = _start(tmp_path / "data", "--services", "docs")
    body, content_type = urllib3.encode_multipart_formdata(
        {"target": "pdf", "markdown_text": "# Title\n\n" + "Some paragraph text. " * 400})
    result: dict[str, object] = {}

    def convert() -> None:
        req = urllib.request.Request(
            f"http://127.0.0.1:{port}/md/convert", data=body, method="POST",
            headers={"Content-Type": content_type})
        try:
            with urllib.request.urlopen(req, timeout=60) as r:
                result["status"], result["type"] = r.status, r.headers["Content-Type"]
                result["data"] = r.read()
        except Exception as exc:
            result["error"] = repr(exc)

    worker = threading.Thread(target=convert)
    worker.start()
    time.sleep(0.5)  # the request is in flight (the first render launches Chromium)
    pids = _stop(proc, signal.SIGTERM)
    worker.join(60)
    assert result.get("status") == 200, result.get("error")
    assert result["type"] == "application/pdf" and bytes(result["data"])[:5] == b"%PDF-"
    time.sleep(0.5)
    assert not [p for p in pids if _alive(p)]


def test_default_data_dir_is_relative_to_the_working_directory(tmp_path):
    proc, port = _start(None, "--services", "auth", cwd=tmp_path)
    try:
        status, _ = _post(port, "/api/auth/login", {"companyCode": "A", "username": "bob",
                                                    "password": "12345678"})
        assert status == 401
    finally:
        _stop(proc)
    assert (tmp_path / "data" / "redis" / "appendonlydir").is_dir()
    assert (tmp_path / "data" / "mongo").is_dir()
