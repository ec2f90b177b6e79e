"""Links that last across a real restart (issue 35, "Done when", first line): the service run
as an operator runs it (``python -m tornado_app serve`` on its built-in MongoDB, Redis and
SeaweedFS storage), a saved result and a batch stored, the service stopped and started again
on the same data and address, and every link (the result, its images, the batch's document
and the links written inside it) opened anonymously once the presigned lifetime
(``PRESIGN_EXPIRY_SECONDS``, set to its shortest, 60 s) has really passed. No link names the
built-in storage's loopback port, which nobody outside the machine can open; they name the
address the service is served at.

``tests/test_durable_links.py`` does the same in one process with the signing clock moved
25 hours back; this one restarts real processes, so nothing of the first run is left in
memory, and waits the real lifetime out.
"""

from __future__ import annotations

import json
import re
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from tests.archive_fixtures import zip_of
from tests.conftest import multipart
from tests.docx_fixtures import build_feature_docx
from tests.pdf_fixtures import tiny_png
from tests.processes import stop_with_output, wait_healthy
from tests.test_cli import ROOT, _env
from tornado_app.embedded.servers import free_port

pytestmark = [pytest.mark.slow, pytest.mark.timeout(420)]

LIFETIME = 60  # PRESIGN_EXPIRY_SECONDS: the shortest the setting takes
PNG = tiny_png()
ARCHIVE = {
    "docs/guide.md": b"# Guide\n\n![logo](../img/logo.png)\n\nSee [the notes](notes.md).\n",
    "docs/notes.md": b"# Notes\n\nKept for later.\n",
    "img/logo.png": PNG,
}
LINK = re.compile(r"\]\((https?://[^)\s]+)")  # a Markdown link or image, title or not
SEED = {
    "companies": [
        {
            "code": "ACME",
            "name": "Acme",
            "users": [
                {
                    "username": "admin",
                    "password": "admin password",
                    "realName": "Ada",
                    "role": "ADMIN",
                    "status": "ACTIVE",
                }
            ],
        }
    ]
}


def _serve(data: Path, seed: Path, port: int) -> subprocess.Popen[str]:
    """``serve`` on ``port`` with the default links (the suite's environment asks for
    presigned ones: dropped here) and the shortest presigned lifetime."""
    env = {k: v for k, v in _env(data).items() if k != "STORAGE_LINKS"}
    env["PRESIGN_EXPIRY_SECONDS"] = str(LIFETIME)
    proc = subprocess.Popen(
        [sys.executable, "-m", "tornado_app", "serve", "--port", str(port), "--seed", str(seed)],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        cwd=ROOT,
    )
    try:
        wait_healthy(
            proc,
            f"http://127.0.0.1:{port}/health",
            output=lambda: proc.stdout.read() if proc.stdout else "",
        )
    except AssertionError:
        proc.kill()
        raise
    return proc


def _call(port: int, path: str, body: bytes, headers: dict[str, str]) -> dict[str, Any]:
    request = urllib.request.Request(
        f"http://127.0.0.1:{port}{path}", data=body, headers=headers, method="POST"
    )
    with urllib.request.urlopen(request, timeout=120) as reply:
        answer = json.load(reply)
    assert answer["code"] in (0, "SUCCESS"), answer  # the docs face's code, the account face's
    return dict(answer["data"])


def _sign_in(port: int) -> str:
    body = json.dumps(
        {"companyCode": "ACME", "username": "admin", "password": "admin password"}
    ).encode()
    data = _call(port, "/api/auth/login", body, {"Content-Type": "application/json"})
    return str(data["token"])


def _post_form(
    port: int, token: str, path: str, fields: dict[str, str], name: str, data: bytes
) -> dict[str, Any]:
    body, ctype = multipart(fields, {"file": (name, data)})
    return _call(port, path, body, {"Content-Type": ctype, "Authorization": f"Bearer {token}"})


def _open(url: str) -> tuple[int, bytes]:
    """An anonymous GET, as a reader of a published link makes it."""
    try:
        with urllib.request.urlopen(url, timeout=30) as reply:
            return reply.status, reply.read()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read()


def _storage_port(data: Path) -> int:
    """The built-in SeaweedFS's S3 port (kept in its data directory across restarts)."""
    ports = json.loads((data / "s3" / "ports.json").read_text("utf-8"))
    return int(ports["s3.port"])


def _stop(proc: subprocess.Popen[str]) -> None:
    output = stop_with_output(proc, signal.SIGTERM)
    assert proc.returncode == 0, output


def test_saved_and_batch_links_open_after_a_restart_and_past_the_presigned_lifetime(
    tmp_path: Path,
) -> None:
    data, seed = tmp_path / "data", tmp_path / "seed.json"
    seed.write_text(json.dumps(SEED), "utf-8")
    port = free_port()
    service = f"http://127.0.0.1:{port}"
    proc = _serve(data, seed, port)
    try:
        token = _sign_in(port)
        saved = _post_form(
            port,
            token,
            "/api/convert",
            {"save": "true", "filename": "feat"},
            "features.docx",
            build_feature_docx(),
        )
        made_at = time.monotonic()
        batch = _post_form(
            port, token, "/api/upload-archive", {"prefix": "kb"}, "site.zip", zip_of(ARCHIVE)
        )
        guide = next(f for f in batch["files"] if f["source"] == "docs/guide.md")
        # every link as each reader would get it, with what it opens to now
        links = {
            "saved result": saved["storage_presigned_url"],
            "batch document": guide["storage_presigned_url"],
        }
        # one link each, the same in both fields: no direct link beside it to answer 403
        one_link = (
            saved["storage_url"] == links["saved result"]
            and guide["storage_url"] == links["batch document"]
        )
        before = {what: _open(url) for what, url in links.items()}
        assert all(status == 200 for status, _ in before.values()), before
        text = before["saved result"][1].decode() + before["batch document"][1].decode()
        # the links to stored objects (the documents' own links elsewhere stay as written)
        inside = [u for u in LINK.findall(text) if u.startswith("http://127.0.0.1:")]
        images = [u for u in inside if "/assets/" in u or u.endswith("logo.png")]
        assert len(images) >= 2, text  # the result's pictures and the batch's logo
        links.update({f"written inside ({url})": url for url in inside})
        before.update({what: _open(url) for what, url in links.items() if what not in before})
        storage_port = _storage_port(data)
    finally:
        _stop(proc)
    assert one_link, (saved, guide)
    # no link names the storage's loopback port; all name the address the service is at
    for what, url in links.items():
        assert f":{storage_port}" not in url, (what, url)
        assert url.startswith(f"{service}/"), (what, url)
    for what in (w for w in links if w.startswith("written inside")):
        assert before[what][0] == 200, (what, before[what])

    proc = _serve(data, seed, port)  # the same data and address, nothing kept in memory
    try:
        time.sleep(max(0.0, made_at + LIFETIME + 2 - time.monotonic()))  # the lifetime out
        for what, url in links.items():
            status, body = _open(url)
            assert status == 200, (what, url, status, body[:300])
            assert body == before[what][1], what
    finally:
        _stop(proc)
