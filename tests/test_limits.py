"""Limits before work, over HTTP against the real servers: each route's body limit is set
before its body is read (the service's memory stays flat under 50 MB JSON bodies), JSON and
Markdown nesting get a clear 400/40003, and a folder file swapped for a link after the listing
is never read through it."""

from __future__ import annotations

import contextlib
import json
import os
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from pathlib import Path

import psutil
import pytest

from render_pool.batch import archives
from tests.conftest import DOCS_CALLER_COMPANY, docs_caller_company, post_form
from tests.processes import stop_process, wait_healthy
from tornado_app.embedded.servers import free_port

ROOT = Path(__file__).resolve().parents[1]
FIFTY_MB = 50 * 1024 * 1024


# ------------------------------------------------------------------ body limits and memory
@pytest.fixture
def served(redis_server, mongo_server, tmp_path):
    """The service in its own process (auth face; MongoDB and Redis of the test session)."""
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MONGO_", "REDIS_", "S3_"))}
    env.update(MONGO_URL=mongo_server.url, REDIS_URL=redis_server.url,
               MONGO_DB=f"t_limits_{port}", DATA_DIR=str(tmp_path), PYTHONPATH=str(ROOT),
               METRICS_ADDRESS="off")
    proc = subprocess.Popen([sys.executable, "-m", "tornado_app", "serve", "--port", str(port),
                             "--services", "auth"], env=env, cwd=ROOT,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_healthy(proc, f"http://127.0.0.1:{port}/health")
        yield proc, port
    finally:
        stop_process(proc)


def _send_huge_json(port: int, chunked: bool) -> str:
    """POST 50 MB of JSON to the login route; returns the status line (or how it ended)."""
    head = ("POST /api/auth/login HTTP/1.1\r\nHost: 127.0.0.1\r\n"
            "Content-Type: application/json\r\n")
    head += "Transfer-Encoding: chunked\r\n\r\n" if chunked else \
        f"Content-Length: {FIFTY_MB}\r\n\r\n"
    piece = b"[" * (64 * 1024)
    if chunked:
        piece = f"{len(piece):x}\r\n".encode() + piece + b"\r\n"
    with socket.create_connection(("127.0.0.1", port), timeout=30) as sock:
        sock.sendall(head.encode())
        sent = 0
        with contextlib.suppress(OSError):  # the server closes as soon as it has refused
            while sent < FIFTY_MB:
                sock.sendall(piece)
                sent += 64 * 1024
        try:
            return sock.recv(200).split(b"\r\n", 1)[0].decode() or "closed"
        except OSError as exc:
            return f"closed ({type(exc).__name__})"


def test_json_bodies_are_refused_before_they_are_read(served):
    proc, port = served
    service = psutil.Process(proc.pid)
    idle = service.memory_info().rss
    peak = idle
    answers: list[str] = []
    threads = [threading.Thread(target=lambda c=i % 2 == 1: answers.append(
        _send_huge_json(port, c))) for i in range(8)]
    for t in threads:
        t.start()
    while any(t.is_alive() for t in threads):
        peak = max(peak, service.memory_info().rss)
        time.sleep(0.02)
    for t in threads:
        t.join()
    assert len(answers) == 8
    assert peak - idle < 50 * 1024 * 1024, (idle, peak, answers)
    # the declared ones got a clear answer without sending their body
    assert sum("413" in a for a in answers) >= 1, answers
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=5) as r:
        assert r.status == 200


async def test_too_large_json_declared_answers_413(api):
    reply = await api.call("POST", "/api/auth/login", raw=b"{" + b" " * (70 * 1024) + b"}",
                           headers={"Content-Type": "application/json"})
    assert reply.status == 413 and reply.body["code"] == "PAYLOAD_TOO_LARGE"


# ------------------------------------------------------------------ nesting
async def test_deep_json_is_a_clear_400(api, storage_services):
    deep = "[" * 30000 + "]" * 30000
    reply = await api.call("POST", "/api/auth/login", raw=deep[:60000],
                           headers={"Content-Type": "application/json"})
    assert reply.status == 400 and reply.body["code"] == "VALIDATION_ERROR"
    assert "nested deeper" in reply.body["message"]
    reply = await api.call("POST", "/config/linkmap", raw='{"map": ' + "[" * 5000 + "]" * 5000
                           + "}", headers={"Content-Type": "application/json"})
    assert reply.status == 400 and reply.body["ok"] is False and "nested" in reply.body["error"]


@pytest.mark.parametrize("markdown", [
    "[" * 40_000,
    "[" * 2000 + "]" * 2000,
    "- " * 100_000 + "item",
    "> " * 100_000 + "quote",
    "".join("  " * i + "- x\n" for i in range(200)),
    "*" * 500 + "a" + "*" * 500,
], ids=["40k-brackets", "nested-brackets", "deep-list", "deep-quote", "indented-lists",
        "emphasis-run"])
async def test_hostile_markdown_nesting_is_40003(api, docs_services, markdown):
    reply = await post_form(api, "/md/convert", {"markdown_text": markdown, "target": "docx"})
    assert reply.status == 200 and reply.body["code"] == 40003, reply.body
    assert "Markdown" in reply.body["msg"]


async def test_ordinary_nesting_still_converts(api, docs_services):
    text = ("# T\n\n> a\n> > b\n\n- one\n  - two\n    - three\n\n[a [b] c](https://x.example)\n\n"
            + "*" * 80 + "\n\n**strong** and _em_\n\n```\n" + "[" * 500 + "\n```\n")
    reply = await post_form(api, "/md/convert", {"markdown_text": text, "target": "docx"})
    assert reply.status == 200 and reply.raw[:2] == b"PK"


# ------------------------------------------------------------------ the folder symlink swap
async def test_file_swapped_for_a_link_after_listing_is_not_uploaded(
        api, storage_services, tmp_path, monkeypatch):
    import dataclasses

    root = tmp_path / "root"
    (root / "book").mkdir(parents=True)
    (root / "book" / "a.md").write_text("# A\n\n![pic](pic.png)\n\n[b](b.md)\n")
    (root / "book" / "b.md").write_text("# B\n")
    (root / "book" / "pic.png").write_bytes(b"\x89PNG\r\n\x1a\nreal picture")
    secret = tmp_path / "outside.txt"
    secret.write_text("TOP SECRET outside the root")
    monkeypatch.setattr(storage_services, "settings", dataclasses.replace(
        storage_services.settings, company_folder_roots={DOCS_CALLER_COMPANY: (root,)}))
    from tornado_app.documents.batches import batch_service

    planned = batch_service._document_links  # runs once the pool has listed and planned the tree

    def plan_then_swap(*args):
        for name in ("pic.png", "b.md"):  # after the listing, before the reading
            (root / "book" / name).unlink()
            (root / "book" / name).symlink_to(secret)
        return planned(*args)

    monkeypatch.setattr(batch_service, "_document_links", plan_then_swap)
    reply = await post_form(api, "/md/convert-folder", {"folder_path": str(root / "book")})
    assert reply.status == 200 and reply.body["ok"] is True, reply.body
    sources = [f["source"] for f in reply.body["files"]]
    assert sources == ["a.md"]  # b.md became a link: left out
    entry = reply.body["files"][0]
    assert entry["asset_ok"] == 0 and any("pic.png" in f["ref"] for f in entry["failed"])
    store = await storage_services.storage.store(
        await docs_caller_company(storage_services))
    for obj in store.client.list_objects(store.config.bucket, prefix=store.config.prefix + "/",
                                         recursive=True):
        assert b"TOP SECRET" not in store.get_bytes(obj.object_name), obj.object_name


def test_read_inside_refuses_links_and_escapes(tmp_path):
    root = tmp_path / "r"
    (root / "d").mkdir(parents=True)
    (root / "d" / "ok.txt").write_text("fine")
    outside = tmp_path / "o"
    outside.mkdir()
    (outside / "x.txt").write_text("outside")
    (root / "link.txt").symlink_to(outside / "x.txt")
    (root / "dirlink").symlink_to(outside)
    assert archives.read_inside(root, "d/ok.txt") == b"fine"
    with pytest.raises(OSError):
        archives.read_inside(root, "link.txt")
    with pytest.raises(archives.OutsideRoot):
        archives.read_inside(root, "dirlink/x.txt")
    with pytest.raises(OSError):
        archives.read_inside(root, "d")
    assert json.dumps(sorted(archives.list_files(root))) == '["d/ok.txt"]'
