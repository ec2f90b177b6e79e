"""Durable jobs: the queue on a real redis-server (consumer groups, claims of a dead
consumer's job, the attempt limit), and the job API of the real app with a real consumer,
SecantusDB and SeaweedFS (list, cancel, Idempotency-Key, tenancy, events, signed webhooks).
Process-level crashes (SIGKILL of a replica) are in ``tests/test_job_replicas.py``."""

from __future__ import annotations

import asyncio
import dataclasses
import hashlib
import hmac
import json
import time
import uuid
from typing import Any

import pytest
import tornado.httpserver
import tornado.web
from redis.asyncio import Redis

from store import api_keys
from store.job_queue import ACTIVE, STREAM, JobQueue, stream_key
from tests.archive_fixtures import tgz_of
from tests.conftest import DOCS_CALLER_COMPANY, post_form
from tests.pdf_fixtures import tiny_png
from tests.waiting import eventually
from tornado_app.embedded.servers import free_port
from tornado_app.seed import ensure_company

pytestmark = pytest.mark.timeout(120)


def small_archive(tag: str = "a") -> bytes:
    return tgz_of({f"{tag}/page.md": f"# {tag}\n\n![p](img/p.png)\n".encode(),
                 f"{tag}/img/p.png": tiny_png()})


def slow_archive(documents: int = 120) -> bytes:
    """HTML documents (each one goes through the render pool): long enough to act mid-job."""
    body = "".join(f"<p>paragraph {i} <b>bold</b> <a href='x{i}.html'>l</a></p>"
                   for i in range(400))
    return tgz_of({f"d/{i:03}.html": f"<html><body><h1>{i}</h1>{body}</body></html>".encode()
                 for i in range(documents)})


# -- the queue alone ---------------------------------------------------------------------


def test_dead_consumers_job_is_claimed_and_fails_after_three_starts(redis_server):
    async def scenario() -> None:
        redis = Redis.from_url(redis_server.url, decode_responses=True)
        await redis.flushdb()
        queue = JobQueue(redis, claim_idle_ms=150, max_attempts=3)
        record = await queue.submit("co1", "archive", {"key": "k", "name": "a.tgz"})
        first = await queue.next("c1", block_ms=100)
        assert first is not None and first.job_id == record["id"] and not first.claimed
        assert (await queue.start(first, "c1"))["state"] == "running"
        # c1 "dies": nothing for c2 until the entry has been idle long enough
        assert await queue.next("c2", block_ms=50) is None
        for n, name in ((2, "c2"), (3, "c3")):  # each taken once idle past the limit
            again = await eventually(lambda name=name: queue.next(name, block_ms=50),
                                     what="a claimable entry")
            assert again.claimed and again.job_id == record["id"]
            started = await queue.start(again, name)
            assert started["attempts"] == n and started["consumer"] == name
            assert started["claims"] == n - 1
        last = await eventually(lambda: queue.next("c4", block_ms=50), what="a claimable entry")
        assert last.claimed
        assert await queue.start(last, "c4") is None  # not run a fourth time
        ended = await queue.get("co1", record["id"])
        assert ended["state"] == "failed" and "started 3 times" in ended["msg"]
        assert await redis.xlen(stream_key("co1")) == 0  # acknowledged and gone
        assert not await redis.smembers(ACTIVE)  # and its empty stream with it
        assert await queue.next("c5", block_ms=50) is None
        await redis.aclose()

    asyncio.run(scenario())


def test_a_live_consumer_keeps_its_job_and_a_handed_back_job_moves_at_once(redis_server):
    async def scenario() -> None:
        redis = Redis.from_url(redis_server.url, decode_responses=True)
        await redis.flushdb()
        queue = JobQueue(redis, claim_idle_ms=200)
        record = await queue.submit("co1", "archive", {"key": "k", "name": "a.tgz"})
        mine = await queue.next("c1", block_ms=100)
        await queue.start(mine, "c1")
        began = time.monotonic()
        while time.monotonic() - began < 2 * 0.2:  # alive past the idle limit twice over:
            await queue.touch("c1", mine)  # it touches more often than the limit
            assert await queue.next("c2", block_ms=50) is None
        await queue.hand_back("c1", mine)  # shutdown: no waiting for the idle limit
        taken = await queue.next("c2", block_ms=10)
        assert taken is not None and taken.job_id == record["id"]
        assert (await queue.start(taken, "c2"))["attempts"] == 1  # the hand-back did not count
        await redis.aclose()

    asyncio.run(scenario())


def test_entries_left_on_the_single_stream_of_an_earlier_release_still_run(redis_server):
    """A rolling upgrade: an old ``serve`` queued on ``ds:jobq``; a new consumer runs it."""
    async def scenario() -> None:
        redis = Redis.from_url(redis_server.url, decode_responses=True)
        await redis.flushdb()
        queue = JobQueue(redis, claim_idle_ms=60_000)
        record = await queue.submit("co1", "archive", {"key": "k", "name": "a.tgz"})
        taken = await queue.next("c0", block_ms=10)  # take it off the company's stream ...
        await queue.ack(taken)
        await redis.xgroup_create(STREAM, "ds:workers", id="0", mkstream=True)
        await redis.xadd(STREAM, {"job": record["id"], "company": "co1"})  # ... as old code did
        legacy = await queue.next("c1", block_ms=10)
        assert legacy is not None and legacy.job_id == record["id"] and legacy.stream == STREAM
        assert (await queue.start(legacy, "c1"))["state"] == "running"
        await queue.ack(legacy)
        assert not await redis.exists(STREAM) and await queue.next("c1", block_ms=10) is None
        await redis.aclose()

    asyncio.run(scenario())


# -- the API with a consumer -------------------------------------------------------------


@pytest.fixture
def job_services(storage_services):
    storage_services.settings = dataclasses.replace(
        storage_services.settings, job_claim_idle_seconds=2.0,
        webhook_first_retry_seconds=0.2)
    return storage_services


@pytest.fixture
def consumer(job_services, job_consumer):
    return job_consumer


async def _submit(api, archive: bytes, *, headers: dict[str, str] | None = None,
                  token: str | None = None, **fields: str) -> Any:
    r = await post_form(api, "/api/upload-archive", {"async": "true", **fields},
                        {"file": ("a.tgz", archive)}, headers=headers or {}, token=token)
    assert r.status == 200, r.body
    return r.body


async def _wait_ended(api, job_id: str, timeout: float = 60, token: str | None = None
                      ) -> dict[str, Any]:
    async def ended() -> dict[str, Any]:
        r = await api.call("GET", f"/api/jobs/{job_id}", token=token)
        return r.body["data"] if r.body["data"]["state"] in ("done", "failed", "cancelled") else {}

    return await eventually(ended, timeout, interval=0.05, what=f"job {job_id} ended")


async def test_async_archive_runs_as_a_job_listed_newest_first(api, consumer):
    first = (await _submit(api, small_archive("one"), prefix="j1"))["data"]["job_id"]
    second = (await _submit(api, small_archive("two"), prefix="j2"))["data"]["job_id"]
    done = await _wait_ended(api, second)
    assert done["state"] == "done" and done["result"]["count"] == 1
    assert done["result"]["files"][0]["source"] == "two/page.md"
    assert done["attempts"] == 1 and done["total"] == 1 and "input" not in done
    again = await api.call("GET", f"/api/jobs/{second}")  # readable more than once
    assert again.body["data"]["result"] == done["result"]
    listed = (await api.call("GET", "/api/jobs?pageSize=1")).body["data"]
    assert listed["total"] == 2 and [j["id"] for j in listed["items"]] == [second]
    assert "result" not in listed["items"][0]
    page2 = (await api.call("GET", "/api/jobs?pageSize=1&page=2")).body["data"]
    assert [j["id"] for j in page2["items"]] == [first]
    assert (await api.call("GET", "/api/jobs?page=0")).body["code"] == 40001


async def test_another_companys_job_is_not_found(api, consumer, job_services):
    job_id = (await _submit(api, small_archive()))["data"]["job_id"]
    other = await ensure_company(job_services, "OTHERJOBS", "Other jobs")
    _, key = await api_keys.create_key(job_services.db, company_id=other.id, name="other",
                                       role="ADMIN", created_by=None, expires_at=None)
    for method, path in (("GET", f"/api/jobs/{job_id}"), ("POST", f"/api/jobs/{job_id}/cancel"),
                         ("GET", f"/api/jobs/{job_id}/events")):
        r = await api.call(method, path, token=key)
        assert r.body["code"] == 40401, (path, r.body)
    assert (await api.call("GET", "/api/jobs", token=key)).body["data"]["items"] == []
    assert (await _wait_ended(api, job_id))["state"] == "done"  # the owner's job ran


async def test_cancel_a_queued_job_it_never_runs(api, job_services):
    job_id = (await _submit(api, small_archive()))["data"]["job_id"]  # no consumer running
    r = await api.call("POST", f"/api/jobs/{job_id}/cancel")
    assert r.body["code"] == 0 and r.body["data"]["state"] == "cancelled"
    assert (await api.call("POST", f"/api/jobs/{job_id}/cancel")).body["code"] == 40901
    from tornado_app.documents.job_worker import JobWorker

    worker = JobWorker(job_services)
    worker.start()
    try:
        follow = (await _submit(api, small_archive("b")))["data"]["job_id"]
        assert (await _wait_ended(api, follow))["state"] == "done"
    finally:
        await worker.stop(5)
    state = (await api.call("GET", f"/api/jobs/{job_id}")).body["data"]
    assert state["state"] == "cancelled" and state["attempts"] == 0 and "result" not in state


async def test_cancel_a_running_job_keeps_what_it_stored_and_what_not(api, consumer):
    """Cancelled mid-batch: the record lists the documents stored before the cancel and the
    sources of those never processed (issue 35, item 5), and the consumer moves on."""
    job_id = (await _submit(api, slow_archive()))["data"]["job_id"]
    async def running() -> dict[str, Any]:
        state = (await api.call("GET", f"/api/jobs/{job_id}")).body["data"]
        return state if state["state"] == "running" and state["done"] >= 1 else {}

    await eventually(running, 60, what="the job running")
    r = await api.call("POST", f"/api/jobs/{job_id}/cancel")
    assert r.body["data"]["state"] == "cancelled"
    follow = (await _submit(api, small_archive("c")))["data"]["job_id"]
    assert (await _wait_ended(api, follow))["state"] == "done"  # the consumer moved on
    async def kept() -> dict[str, Any]:  # written once the run sees the cancel
        state = (await api.call("GET", f"/api/jobs/{job_id}")).body["data"]
        return state if "result" in state else {}

    final = await eventually(kept, 30, what="the cancelled job's partial result")
    assert final["state"] == "cancelled" and final["done"] < final["total"] == 120
    stored = [f["source"] for f in final["result"]["files"]]
    skipped = final["result"]["not_processed"]
    assert stored and skipped and len(stored) == final["done"] == final["result"]["count"]
    assert sorted(stored + skipped) == [f"d/{i:03}.html" for i in range(120)]
    assert all(f.get("storage_url") for f in final["result"]["files"])


async def test_idempotency_key_same_job_for_same_body_refused_for_another(api, job_services):
    archive = small_archive()
    key = {"Idempotency-Key": f"k-{uuid.uuid4().hex}"}
    one = (await _submit(api, archive, headers=key, prefix="p"))["data"]["job_id"]
    two = (await _submit(api, archive, headers=key, prefix="p"))["data"]["job_id"]
    assert one == two
    other = await _submit(api, archive, headers=key, prefix="q")
    assert other["code"] == 40001 and "Idempotency-Key" in other["msg"]
    assert (await api.call("GET", "/api/jobs")).body["data"]["total"] == 1
    fresh = (await _submit(api, archive, headers={"Idempotency-Key": "another"}, prefix="q"))
    assert fresh["data"]["job_id"] != one


async def test_events_stream_progress_then_the_end(api, consumer):
    job_id = (await _submit(api, slow_archive(20)))["data"]["job_id"]
    r = await api.call("GET", f"/api/jobs/{job_id}/events")
    assert r.headers["Content-Type"].startswith("text/event-stream")
    events = [block for block in r.raw.decode().split("\n\n") if block.startswith("event:")]
    kinds = [e.split("\n", 1)[0].split(": ", 1)[1] for e in events]
    assert kinds[-1] == "end" and set(kinds[:-1]) == {"progress"}
    progress = [json.loads(e.split("data: ", 1)[1]) for e in events[:-1]]
    assert any(p["state"] == "running" and p["total"] == 20 for p in progress)
    assert json.loads(events[-1].split("data: ", 1)[1])["state"] == "done"


class _Receiver(tornado.web.RequestHandler):
    def initialize(self, seen: list[dict[str, Any]]) -> None:
        self.seen = seen

    def post(self) -> None:
        self.seen.append({"headers": dict(self.request.headers), "body": self.request.body})
        self.set_status(500 if len(self.seen) == 1 else 200)


async def test_webhook_is_signed_and_retried_after_a_500(api, consumer):
    seen: list[dict[str, Any]] = []
    port = free_port()
    server = tornado.httpserver.HTTPServer(
        tornado.web.Application([(r"/hook", _Receiver, {"seen": seen})]))
    server.listen(port, "127.0.0.1")
    try:  # the caller's company signs with its own secret (tests/test_webhook_secrets.py)
        secret = (await api.call("POST", "/api/webhook-secret", raw=b"")).body["data"]["secret"]
        job_id = (await _submit(api, small_archive(),
                                callback_url=f"http://127.0.0.1:{port}/hook"))["data"]["job_id"]
        async def two_deliveries() -> dict[str, Any]:
            state = (await api.call("GET", f"/api/jobs/{job_id}")).body["data"]
            return state if len(state.get("deliveries", [])) >= 2 else {}

        state = await eventually(two_deliveries, 30, interval=0.05, what="two deliveries")
    finally:
        server.stop()
    assert [d["status"] for d in state["deliveries"]] == [500, 200]
    assert state["webhook"]["state"] == "delivered"
    assert len(seen) == 2 and seen[0]["body"] == seen[1]["body"]
    for hit in seen:
        stamp = hit["headers"]["X-Timestamp"]
        expected = hmac.new(secret.encode(), stamp.encode() + b"." + hit["body"],
                            hashlib.sha256).hexdigest()
        assert hmac.compare_digest(hit["headers"]["X-Signature"], f"sha256={expected}")
        assert abs(int(stamp) - time.time()) < 60
    sent = json.loads(seen[1]["body"])
    assert sent["id"] == job_id and sent["state"] == "done" and sent["result"]["count"] == 1
    assert "input" not in sent and "company_id" not in sent


def test_callback_address_passes_the_fetch_guard():
    from tornado_app.documents.base import DocsError
    from tornado_app.documents.webhooks import check_callback
    from tornado_app.settings import Settings

    guarded = Settings(allow_private_urls=False)
    for url in ("http://127.0.0.1/hook", "http://10.0.0.5/x", "http://169.254.169.254/",
                "http://[::1]:8080/", "http://192.168.1.1/", "ftp://example.com/",
                "http://user:pw@example.com/", "file:///etc/passwd"):
        with pytest.raises(DocsError) as caught:
            check_callback(url, guarded)
        assert caught.value.code == 42201, url
    assert check_callback("https://hooks.example.com/x", guarded) == "https://hooks.example.com/x"
    assert check_callback("", guarded) == ""


async def test_private_callback_is_refused_before_a_job_exists(api, job_services):
    job_services.settings = dataclasses.replace(job_services.settings, allow_private_urls=False)
    r = await _submit(api, small_archive(), callback_url="http://169.254.169.254/latest")
    assert r["code"] == 42201
    assert (await api.call("GET", "/api/jobs")).body["data"]["total"] == 0


async def test_async_convert_and_markdown_render_run_as_jobs(api, consumer):
    import urllib.request

    from tests.docx_fixtures import build_feature_docx

    r = await post_form(api, "/api/convert", {"async": "true", "export": "markdown"},
                        {"file": ("features.docx", build_feature_docx())})
    convert_job = r.body["data"]["job_id"]
    r = await post_form(api, "/md/convert", {"async": "true", "target": "docx",
                                             "markdown_text": "# Hello jobs\n\nbody\n",
                                             "filename": "hello"})
    render_job = r.body["data"]["job_id"]
    bad = await post_form(api, "/md/convert", {"async": "true", "target": "odt",
                                               "markdown_text": "# x"})
    assert bad.body["code"] == 40002  # checked before a job exists
    converted = await _wait_ended(api, convert_job)
    assert converted["state"] == "done", converted
    assert f"/converted/{convert_job}/features.md" in converted["result"]["storage_url"]
    with urllib.request.urlopen(converted["result"]["storage_presigned_url"], timeout=10) as f:
        assert f.read().decode().startswith("# Introduction")
    rendered = await _wait_ended(api, render_job)
    assert rendered["state"] == "done", rendered
    assert rendered["result"]["storage_url"].endswith(f"/rendered/{render_job}/hello.docx")
    with urllib.request.urlopen(rendered["result"]["storage_presigned_url"], timeout=10) as f:
        assert f.read()[:2] == b"PK"
    assert {j["kind"] for j in (await api.call("GET", "/api/jobs")).body["data"]["items"]} == {
        "convert", "markdown"}


async def test_async_folder_batch_runs_as_a_job(api, consumer, job_services, tmp_path):
    (tmp_path / "book").mkdir()
    (tmp_path / "book" / "a.md").write_text("# A\n\n![p](p.png)\n")
    (tmp_path / "book" / "p.png").write_bytes(tiny_png())
    job_services.settings = dataclasses.replace(
        job_services.settings, company_folder_roots={DOCS_CALLER_COMPANY: (tmp_path,)})
    r = await post_form(api, "/md/convert-folder", {"async": "true", "prefix": "fold",
                                                    "folder_path": str(tmp_path / "book")})
    assert r.status == 200 and r.body["ok"] is True, r.body
    done = await _wait_ended(api, r.body["job_id"])
    assert done["state"] == "done" and done["kind"] == "folder"
    assert [f["source"] for f in done["result"]["files"]] == ["a.md"]
    assert done["result"]["files"][0]["asset_ok"] == 1
    outside = await post_form(api, "/md/convert-folder", {"async": "true",
                                                          "folder_path": "/etc"})
    assert outside.status == 404  # the same guard before a job exists
