"""The command line as an operator uses it: serve on embedded defaults, seed, signals,
data kept across restarts, create-company / create-user."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest
import urllib3

from tests.processes import still_alive, stop_process, stop_with_output, wait_healthy
from tests.waiting import wait_until
from tornado_app.embedded.servers import free_port

pytestmark = pytest.mark.slow  # each test starts the service in subprocesses

ROOT = Path(__file__).resolve().parents[1]


def _env(data_dir: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MONGO_", "REDIS_", "S3_"))}
    env.update(DATA_DIR=str(data_dir), LOG_LEVEL="INFO", PYTHONPATH=str(ROOT),
               METRICS_ADDRESS="off", DOCS_API_TOKEN=OPERATOR_TOKEN)
    return env


OPERATOR_TOKEN = "operator-token-of-the-cli-tests"


def _start(data_dir: Path | None, *args: str, cwd: Path = ROOT,
           extra_env: dict[str, str] | None = None) -> tuple[subprocess.Popen[str], int]:
    """Start ``serve``; ``data_dir=None`` leaves DATA_DIR unset (the default ./data)."""
    port = free_port()
    env = {**_env(data_dir or Path("unused")), **(extra_env or {})}
    if data_dir is None:
        del env["DATA_DIR"]
    proc = subprocess.Popen(
        [sys.executable, "-m", "tornado_app", "serve", "--port", str(port), *args],
        env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, cwd=cwd,
    )
    try:
        wait_healthy(proc, f"http://127.0.0.1:{port}/health",
                     output=lambda: proc.stdout.read() if proc.stdout else "")
    except AssertionError:
        proc.kill()
        raise
    return proc, port


def _post(port: int, path: str, body: dict) -> tuple[int, dict]:
    req = urllib.request.Request(f"http://127.0.0.1:{port}{path}", data=json.dumps(body).encode(),
                                 headers={"Content-Type": "application/json"}, method="POST")
    try:
        with urllib.request.urlopen(req, timeout=10) as r:
            return r.status, json.load(r)
    except urllib.error.HTTPError as e:
        return e.code, json.load(e)


def _stop(proc: subprocess.Popen[str], sig: int = signal.SIGTERM) -> list[int]:
    out = stop_with_output(proc, sig)
    assert proc.returncode == 0, out
    pids = []
    for line in out.splitlines():
        if line.startswith("{") and "embedded server started" in line:
            pids.append(json.loads(line)["pid"])
    return pids


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
    assert not still_alive(pids), "embedded servers left behind"
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
    assert not still_alive(pids)


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
            headers={"Content-Type": content_type,
                     "Authorization": f"Bearer {OPERATOR_TOKEN}"})
        try:
            with urllib.request.urlopen(req, timeout=60) as r:
                result["status"], result["type"] = r.status, r.headers["Content-Type"]
                result["data"] = r.read()
        except Exception as exc:
            result["error"] = repr(exc)

    worker = threading.Thread(target=convert)
    worker.start()
    # the request is in flight: its render holds a pool worker (the first one launches Chromium)
    wait_until(lambda: b"render_pool_busy_workers 1.0" in _get(
        f"http://127.0.0.1:{port}/metrics", OPERATOR_TOKEN)[1], timeout=60,
        what="the render running")
    pids = _stop(proc, signal.SIGTERM)
    worker.join(60)
    assert result.get("status") == 200, result.get("error")
    assert result["type"] == "application/pdf" and bytes(result["data"])[:5] == b"%PDF-"
    assert not still_alive(pids)


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


def _get(url: str, token: str = "") -> tuple[int, bytes]:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    try:
        with urllib.request.urlopen(urllib.request.Request(url, headers=headers),
                                    timeout=10) as r:
            return r.status, r.read()
    except urllib.error.HTTPError as e:
        return e.code, e.read()


def test_metrics_listener_and_single_user_mode(tmp_path):
    # DOCS_AUTH=none is refused unless the service listens on loopback only
    r = subprocess.run([sys.executable, "-m", "tornado_app", "serve", "--host", "0.0.0.0",
                        "--port", str(free_port())],
                       env={**_env(tmp_path / "d0"), "DOCS_AUTH": "none"}, capture_output=True,
                       text=True, timeout=30, cwd=ROOT)
    assert r.returncode == 2 and "DOCS_AUTH=none" in r.stderr
    assert not (tmp_path / "d0").exists()  # refused before anything started

    metrics_port = free_port()
    proc, port = _start(tmp_path / "data", "--services", "docs", extra_env={
        "DOCS_AUTH": "none", "METRICS_ADDRESS": f"127.0.0.1:{metrics_port}"})
    try:
        main, side = f"http://127.0.0.1:{port}", f"http://127.0.0.1:{metrics_port}"
        # /metrics and /ready: open on the loopback listener, operator token on the main port
        status, text = _get(side + "/metrics")
        assert status == 200 and b"http_requests_total" in text
        assert _get(side + "/ready")[0] in (200, 503)
        assert _get(main + "/metrics")[0] == 401 and _get(main + "/ready")[0] == 401
        assert _get(main + "/metrics", OPERATOR_TOKEN)[0] == 200
        assert _get(side + "/api/convert")[0] == 404  # only the ops routes there
        # single-user mode: no credential needed, but a form post needs this origin
        assert _get(main + "/md/themes")[0] == 200
        form = b"--b\r\nContent-Disposition: form-data; name=\"markdown_text\"\r\n\r\n# T\r\n--b--\r\n"

        def post(headers: dict[str, str]) -> int:
            req = urllib.request.Request(main + "/md/convert", data=form, method="POST", headers={
                "Content-Type": "multipart/form-data; boundary=b", **headers})
            try:
                with urllib.request.urlopen(req, timeout=60) as resp:
                    return resp.status
            except urllib.error.HTTPError as e:
                return e.code

        assert post({}) == 403  # what a cross-site HTML form in an old browser sends
        assert post({"Origin": "http://evil.example"}) == 403
        assert post({"Origin": main, "X-Request-Id": "cli-origin"}) == 200
    finally:
        _stop(proc)


def _first_line_with(proc: subprocess.Popen[str], needle: str, timeout: float = 60) -> str:
    """Read ``proc``'s stdout (in a thread) until a line holds ``needle``."""
    import queue
    import threading

    lines: queue.Queue[str] = queue.Queue()

    def pump() -> None:
        assert proc.stdout is not None
        for line in proc.stdout:
            lines.put(line)

    threading.Thread(target=pump, daemon=True).start()
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            line = lines.get(timeout=0.5)
        except queue.Empty:
            continue
        if needle in line:
            return line
    raise AssertionError(f"no line with {needle!r}")


def test_first_run_prints_a_setup_address_that_works_once(tmp_path):
    import re

    data = tmp_path / "data"
    port = free_port()
    log_file = (tmp_path / "stderr.log").open("w")
    proc = subprocess.Popen(
        [sys.executable, "-m", "tornado_app", "serve", "--port", str(port), "--services",
         "auth"], env=_env(data), stdout=subprocess.PIPE, stderr=log_file, text=True, cwd=ROOT)
    try:
        line = _first_line_with(proc, "First run")
        match = re.search(rf"http://127\.0\.0\.1:{port}/ui/#/setup\?token=([A-Za-z0-9_-]+) ", line)
        assert match, line
        token = match.group(1)
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=10) as r:
            assert r.url.endswith("/ui/")  # GET / leads to the app
        status, body = _post(port, "/api/setup", {
            "token": token, "companyCode": "NEW", "companyName": "New Co",
            "username": "owner", "password": "owner password", "realName": "Olive"})
        assert status == 201 and body["data"]["role"] == "ADMIN"
        status, _ = _post(port, "/api/setup", {
            "token": token, "companyCode": "NEW2", "companyName": "Again",
            "username": "owner2", "password": "owner password"})
        assert status == 404
    finally:
        stop_process(proc)
        log_file.close()
    logs = (tmp_path / "stderr.log").read_text()
    assert token not in logs  # the address goes to the person, not into the log
    assert all(x.startswith("{") for x in logs.splitlines() if x.strip())  # JSON: no tty
    proc, port = _start(data, "--services", "auth")  # a company exists: no setup line
    out = "\n".join(_stop_output(proc))
    assert "First run" not in out


def _stop_output(proc: subprocess.Popen[str]) -> list[str]:
    return stop_with_output(proc).splitlines()


def test_create_admin_reads_the_password_from_stdin_and_console_logs(tmp_path):
    data = tmp_path / "data"
    env = {**_env(data), "LOG_FORMAT": "console"}
    r = subprocess.run(
        [sys.executable, "-m", "tornado_app", "create-admin", "--company", "ADM", "--name",
         "Admin Co", "--username", "root"], input="root password\n", env=env,
        capture_output=True, text=True, timeout=60, cwd=ROOT)
    assert r.returncode == 0, r.stderr
    assert "ADMIN root created in company ADM" in r.stdout
    assert "root password" not in r.stdout + r.stderr
    log_lines = [x for x in r.stderr.splitlines() if x.strip()]
    assert log_lines and not any(x.startswith("{") for x in log_lines)
    assert any(" INFO " in x for x in log_lines)
    short = subprocess.run(
        [sys.executable, "-m", "tornado_app", "create-admin", "--company", "ADM",
         "--username", "root2"], input="short\n", env=env, capture_output=True, text=True,
        timeout=60, cwd=ROOT)
    assert short.returncode == 1 and "8-128" in short.stderr
    proc, port = _start(data, "--services", "auth")
    try:
        status, body = _post(port, "/api/auth/login", {"companyCode": "ADM",
                                                       "username": "root",
                                                       "password": "root password"})
        assert status == 200 and body["data"]["role"] == "ADMIN"
    finally:
        out = _stop_output(proc)
    assert not any("First run" in x for x in out)


def test_create_commands_work_while_the_service_runs_and_a_second_serve_is_refused(tmp_path):
    """`just create-admin` while `serve` runs on the same data directory (the first-run line
    suggests it): it uses the service's embedded servers (SecantusDB refuses a second process
    on its store, and a second redis-server took over the service's socket), and a second
    `serve` stops with one line instead of a SecantusDB traceback."""
    import redis

    data = tmp_path / "data"
    env = _env(data)

    def cli(*args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "tornado_app", *args], input=stdin,
                              env=env, capture_output=True, text=True, timeout=120, cwd=ROOT)

    proc, port = _start(data, "--services", "auth")
    try:
        r = cli("create-admin", "--company", "RUN", "--name", "Running Co", "--username",
                "boss", stdin="boss password\n")
        assert r.returncode == 0, r.stderr
        assert "ADMIN boss created in company RUN" in r.stdout
        r = cli("create-company", "--code", "TWO", "--name", "Second Co")
        assert r.returncode == 0, r.stderr
        r = cli("create-user", "--company", "TWO", "--username", "clerk", "--password",
                "clerk password")
        assert r.returncode == 0 and "user created" in r.stdout, r.stderr
        for company, user in (("RUN", "boss"), ("TWO", "clerk")):  # the running service sees them
            status, body = _post(port, "/api/auth/login", {
                "companyCode": company, "username": user, "password": f"{user} password"})
            assert status == 200, body
        # the service's own Redis still answers on its socket (a new connection)
        assert redis.Redis(unix_socket_path=str(data / "redis" / "redis.sock")).ping()

        second = cli("serve", "--port", str(free_port()), "--services", "auth")
        assert second.returncode == 2
        said = [x for x in second.stderr.splitlines() if x.strip() and not x.startswith("{")]
        assert said == [f"error: the embedded servers of {data} are run by serve, pid "
                        f"{proc.pid}: stop it first, or give this serve another DATA_DIR"]
        status, _ = _post(port, "/api/auth/login", {"companyCode": "RUN", "username": "boss",
                                                    "password": "boss password"})
        assert status == 200  # the refused second serve took nothing from the first
    finally:
        pids = _stop(proc)
    assert not still_alive(pids)
    r = cli("create-user", "--company", "RUN", "--username", "later", "--password",
            "later password")  # no service now: the command starts the servers itself
    assert r.returncode == 0 and "user created" in r.stdout, r.stderr


def test_a_killed_service_leaves_no_child_process_behind(tmp_path):
    import psutil

    proc, port = _start(tmp_path / "data")
    body, content_type = urllib3.encode_multipart_formdata(
        {"target": "pdf", "markdown_text": "# Title\n\nA rendered page."})
    req = urllib.request.Request(  # a render: a pool worker and its Chromium are running
        f"http://127.0.0.1:{port}/md/convert", data=body, method="POST",
        headers={"Content-Type": content_type, "Authorization": f"Bearer {OPERATOR_TOKEN}"})
    try:
        with urllib.request.urlopen(req, timeout=60) as r:
            answer = r.read()
        assert answer[:5] == b"%PDF-", answer[:300]
    except BaseException:
        _stop(proc)  # a failure here must not leave the service running
        raise
    children = psutil.Process(proc.pid).children(recursive=True)
    names = set()
    for child in children:  # a short-lived Chromium helper may be gone by now
        with contextlib.suppress(psutil.NoSuchProcess):
            names.add(child.name())
    # SecantusDB and the pool workers run as python processes
    if not ({"redis-server", "weed"} <= names and any("chrom" in n for n in names)):
        _stop(proc)
        raise AssertionError(f"the service's children: {sorted(names)}")
    proc.kill()  # SIGKILL: no clean-up code of the service runs
    proc.wait(10)
    # each child is signalled by the kernel as its parent dies (SecantusDB with SIGKILL: its
    # SIGTERM handler could hang, leaving it running with its store locked)
    _, alive = psutil.wait_procs(children, timeout=20)
    assert not alive, [(p.pid, p.name(), p.cmdline()[:2]) for p in alive]


def test_event_loop_is_uvloop_by_default_and_asyncio_on_request(tmp_path):
    """serve runs on uvloop unless EVENT_LOOP=asyncio (the untuned runtime, also with the
    collector left at Python's defaults); the log's "serving" line says which loop runs,
    and a misspelt EVENT_LOOP stops start-up with a message naming the setting."""
    for extra, expected in (({}, "uvloop"),
                            ({"EVENT_LOOP": "asyncio", "GC_GEN0_THRESHOLD": "0"}, "asyncio")):
        proc, port = _start(tmp_path / f"data-{expected}", extra_env=extra)
        try:
            status, body = _post(port, "/api/auth/login", {"companyCode": "NOPE",
                                                           "username": "x", "password": "y"})
            assert status == 401 and body["code"] == "USER_NOT_FOUND"
        finally:
            out = stop_with_output(proc)
        serving = [json.loads(line) for line in out.splitlines()
                   if line.startswith("{") and '"serving"' in line]
        assert serving and serving[0]["event_loop"].split(".")[0] == expected, out
        assert proc.returncode == 0, out
    r = subprocess.run([sys.executable, "-m", "tornado_app", "serve"],
                       env={**_env(tmp_path / "d3"), "EVENT_LOOP": "twisted"},
                       capture_output=True, text=True, timeout=30, cwd=ROOT)
    assert r.returncode != 0 and "EVENT_LOOP must be one of uvloop, asyncio" in r.stderr


def test_serve_on_a_port_in_use_stops_at_once_in_one_line(tmp_path):
    """The service's port is taken before the embedded servers start (each picks a free port
    of its own, and one took the service's port in between in a CI run): a port already in
    use is one line and exit 2, with no embedded server started for nothing."""
    import socket

    data = tmp_path / "data"
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        r = subprocess.run([sys.executable, "-m", "tornado_app", "serve", "--port", str(port)],
                           env=_env(data), capture_output=True, text=True, timeout=120)
    assert r.returncode == 2, r.stderr
    said = [x for x in r.stderr.splitlines() if x.strip() and not x.startswith("{")]
    assert said == [f"error: port {port} on 127.0.0.1 is in use"], r.stderr
    assert "embedded server started" not in r.stderr + r.stdout
