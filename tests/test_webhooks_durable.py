"""Durable webhook delivery on a real redis-server, with a real HTTP receiver on loopback: the
pending delivery is in Redis from the moment the job ends, retries back off (capped) and end
after the window, two senders never make the same attempt twice, and a sender that stops or
dies mid-attempt leaves the delivery to another. A SIGKILLed ``worker`` process whose retries
another worker finishes is in ``tests/test_job_replicas.py``."""

from __future__ import annotations

import asyncio
import dataclasses
import datetime as dt
import hashlib
import hmac
import itertools
import json
import time
from collections import Counter
from typing import Any

import pytest
import tornado.httpserver
import tornado.web

from store.job_queue import OUTBOX, JobQueue
from store.webhook_outbox import Backoff, WebhookOutbox
from tests.waiting import eventually
from tornado_app.documents.webhooks import WebhookSender
from tornado_app.embedded.servers import free_port

pytestmark = pytest.mark.timeout(60)
SECRET = "durable hook secret"


class _Hook(tornado.web.RequestHandler):
    """Records every POST; answers the status of ``statuses`` in turn (the last one then),
    after ``delay`` seconds."""

    def initialize(self, seen: list[dict[str, Any]], statuses: list[int],
                   delay: float) -> None:
        self.seen, self.statuses, self.delay = seen, statuses, delay

    async def post(self) -> None:
        n = len(self.seen)
        self.seen.append({"headers": dict(self.request.headers), "body": self.request.body,
                          "at": time.time()})
        await asyncio.sleep(self.delay)
        self.set_status(self.statuses[min(n, len(self.statuses) - 1)])


class Receiver:
    def __init__(self, statuses: list[int], delay: float = 0.0) -> None:
        self.seen: list[dict[str, Any]] = []
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}/hook"
        self.server = tornado.httpserver.HTTPServer(tornado.web.Application(
            [(r"/hook", _Hook, {"seen": self.seen, "statuses": statuses, "delay": delay})]))
        self.server.listen(self.port, "127.0.0.1")

    def stop(self) -> None:
        self.server.stop()


def _signed(hit: dict[str, Any]) -> bool:
    stamp = hit["headers"]["X-Timestamp"]
    mac = hmac.new(SECRET.encode(), stamp.encode() + b"." + hit["body"], hashlib.sha256)
    return hmac.compare_digest(hit["headers"]["X-Signature"], "sha256=" + mac.hexdigest())


@pytest.fixture
def hook_services(io_loop, services):
    """Services whose company ``co1`` signs its deliveries with ``SECRET``."""
    services.settings = dataclasses.replace(
        services.settings, webhook_first_retry_seconds=0.2,
        webhook_max_retry_gap_seconds=0.5, webhook_retry_seconds=2.0)
    io_loop.run_sync(lambda: services.db.webhook_secrets.replace_one(
        {"_id": "co1"}, {"secret": SECRET, "createdAt": dt.datetime.now(dt.UTC)}, upsert=True))
    return services


async def _ended_job(queue: JobQueue, url: str, company: str = "co1") -> str:
    record = await queue.submit(company, "archive", {"key": "k", "name": "a.tgz"},
                                callback_url=url)
    await queue.update(company, record["id"], {"state": "done", "finished": time.time(),
                                               "result": {"count": 0, "files": []}})
    return record["id"]


async def _until(probe: Any, timeout: float = 20) -> Any:
    return await eventually(probe, timeout)


async def test_the_delivery_is_in_redis_with_the_jobs_end_and_a_500_is_retried(hook_services):
    receiver = Receiver([500, 200])
    queue = hook_services.job_queue()
    sender = WebhookSender(hook_services)
    try:
        job_id = await _ended_job(queue, receiver.url)
        # nothing has been sent yet, but the delivery is already pending in Redis
        assert await hook_services.redis.zscore(OUTBOX, f"co1:{job_id}") is not None
        assert (await queue.get("co1", job_id))["webhook"]["state"] == "pending"
        sender.start()

        async def delivered() -> Any:
            record = await queue.get("co1", job_id)
            return record if record["webhook"]["state"] == "delivered" else None

        record = await _until(delivered)
    finally:
        await sender.stop(2)
        receiver.stop()
    assert [d["status"] for d in record["deliveries"]] == [500, 200]
    assert len(receiver.seen) == 2 and all(_signed(hit) for hit in receiver.seen)
    assert receiver.seen[0]["body"] == receiver.seen[1]["body"]
    body = json.loads(receiver.seen[1]["body"])
    assert body["id"] == job_id and body["state"] == "done"
    assert "deliveries" not in body and "webhook" not in body and "company_id" not in body
    assert receiver.seen[1]["at"] - receiver.seen[0]["at"] >= 0.2  # the first backoff
    assert await hook_services.redis.zcard(OUTBOX) == 0
    metrics = hook_services.metrics.render(None).decode()
    assert 'webhook_deliveries_total{outcome="retry"} 1.0' in metrics
    assert 'webhook_deliveries_total{outcome="delivered"} 1.0' in metrics


def test_backoff_schedule_doubles_up_to_its_cap_and_ends_with_the_window():
    """The schedule itself, on given times (no clock): first gap, doubling, the cap, and no
    attempt due past the window."""
    backoff = Backoff(first=0.2, cap=0.5, window=2.0)
    since = 1000.0
    assert backoff.next_at(since, 1, since) == pytest.approx(since + 0.2)
    assert backoff.next_at(since, 2, since + 0.2) == pytest.approx(since + 0.6)  # doubled
    assert backoff.next_at(since, 3, since + 0.6) == pytest.approx(since + 1.1)  # 0.8 capped
    assert backoff.next_at(since, 60, since + 1.1) == pytest.approx(since + 1.6)
    assert backoff.next_at(since, 4, since + 1.6) is None  # 2.1 is past the window
    assert backoff.next_at(since, 1, since + 1.9) is None


async def test_backoff_doubles_up_to_its_cap_and_ends_after_the_window(hook_services):
    """The sender follows the schedule: no attempt before it is due (the gaps are at least
    the schedule's; how much later a busy machine makes them is not asserted), none after
    the window, and the delivery leaves the outbox when it gives up."""
    receiver = Receiver([503])
    queue = hook_services.job_queue()
    sender = WebhookSender(hook_services)
    sender.start()
    try:
        job_id = await _ended_job(queue, receiver.url)

        async def given_up() -> Any:
            record = await queue.get("co1", job_id)
            return record if record["webhook"]["state"] == "failed" else None

        record = await _until(given_up)
        # given up: nothing left in the outbox for any sender to attempt
        assert await hook_services.redis.zcard(OUTBOX) == 0
    finally:
        await sender.stop(2)  # returns once no attempt is in flight
        receiver.stop()
    times = [d["at"] for d in record["deliveries"]]
    assert len(receiver.seen) == len(times) >= 3
    assert all(d["status"] == 503 for d in record["deliveries"])
    gaps = [b - a for a, b in itertools.pairwise(times)]
    tolerance = 1e-3  # the clock read for the schedule and the one stamped on the attempt
    assert gaps[0] >= 0.2 - tolerance  # the first retry
    assert gaps[1] >= 0.4 - tolerance  # doubled
    assert all(gap >= 0.5 - tolerance for gap in gaps[2:])  # 0.8 capped at 0.5
    # each retry was due within the window and the sender gave up when the next was not
    # (when an attempt ran past its due time on a busy machine is not asserted)
    schedule, since = Backoff(first=0.2, cap=0.5, window=2.0), record["webhook"]["since"]
    assert all(schedule.next_at(since, n, times[n - 1]) is not None
               for n in range(1, len(times)))
    assert schedule.next_at(since, len(times), times[-1]) is None
    assert record["webhook"]["next_attempt"] is None
    assert 'webhook_deliveries_total{outcome="gave_up"} 1.0' in (
        hook_services.metrics.render(None).decode())


async def test_two_senders_on_one_redis_make_each_attempt_once(hook_services):
    receiver = Receiver([200], delay=0.05)
    queue = hook_services.job_queue()
    senders = [WebhookSender(hook_services), WebhookSender(hook_services)]
    for sender in senders:
        sender.start()
    try:
        jobs = await asyncio.gather(*(_ended_job(queue, receiver.url) for _ in range(40)))

        async def all_delivered() -> bool:
            records = [await queue.get("co1", job_id) for job_id in jobs]
            return all(r["webhook"]["state"] == "delivered" for r in records)

        await _until(all_delivered)
        # every delivery settled: none is left for a second attempt
        assert await hook_services.redis.zcard(OUTBOX) == 0
    finally:
        for sender in senders:
            await sender.stop(2)  # returns once no attempt is in flight (a duplicate's too)
        receiver.stop()
    posted = Counter(json.loads(hit["body"])["id"] for hit in receiver.seen)
    assert posted == Counter(set(jobs))  # every job once, none twice
    for job_id in jobs:
        assert len((await queue.get("co1", job_id))["deliveries"]) == 1


async def test_a_sender_that_dies_mid_attempt_leaves_the_delivery_to_another(hook_services):
    receiver = Receiver([200])
    queue = hook_services.job_queue()
    outbox = WebhookOutbox(queue)
    backoff = Backoff(first=0.2, cap=0.4, window=60)
    job_id = await _ended_job(queue, receiver.url)
    # a process takes the delivery with a short lease and dies before it POSTs
    dead = await outbox.claim(time.time(), lease_seconds=0.5)
    assert [c.job_id for c in dead] == [job_id]
    assert await outbox.claim(time.time(), lease_seconds=0.5) == []  # held meanwhile
    sender = WebhookSender(hook_services)
    sender.start()
    try:
        async def delivered() -> Any:
            record = await queue.get("co1", job_id)
            return record if record["webhook"]["state"] == "delivered" else None

        record = await _until(delivered)
        assert receiver.seen[0]["at"] >= dead[0].lease - 0.05  # only once the lease ran out
        # the dead process' late report only adds its attempt: it no longer holds the lease
        late = await outbox.finish(dead[0], {"at": time.time(), "status": 0,
                                             "error": "could not connect"},
                                   final=None, backoff=backoff)
        assert late["webhook"]["state"] == "delivered" and len(late["deliveries"]) == 2
        assert await hook_services.redis.zcard(OUTBOX) == 0
    finally:
        await sender.stop(2)
        receiver.stop()
    assert len(receiver.seen) == 1 and _signed(receiver.seen[0])
    assert record["deliveries"][0]["status"] == 200


async def test_a_stopping_sender_gives_its_attempt_back_at_once(hook_services):
    receiver = Receiver([200], delay=3.0)  # slower than the stopping sender's grace
    queue = hook_services.job_queue()
    first = WebhookSender(hook_services)
    first.start()
    second = WebhookSender(hook_services)
    try:
        job_id = await _ended_job(queue, receiver.url)
        first.wake()

        async def posted() -> bool:
            return bool(receiver.seen)

        await _until(posted)
        await first.stop(0.2)  # cut off mid-attempt: given back, due now
        score = await hook_services.redis.zscore(OUTBOX, f"co1:{job_id}")
        assert score is not None and score <= time.time()
        second.start()

        async def delivered() -> Any:
            record = await queue.get("co1", job_id)
            return record if record["webhook"]["state"] == "delivered" else None

        record = await _until(delivered)
    finally:
        await first.stop(1)
        await second.stop(5)
        receiver.stop()
    assert len(receiver.seen) == 2 and [d["status"] for d in record["deliveries"]] == [200]


async def test_every_way_a_job_ends_schedules_its_webhook_once(hook_services):
    queue = JobQueue(hook_services.redis, claim_idle_ms=50, max_attempts=1)
    url = "http://127.0.0.1:9/hook"
    cancelled = await queue.submit("co1", "archive", {"key": "k"}, callback_url=url)
    await queue.cancel("co1", cancelled["id"])
    await queue.cancel("co1", cancelled["id"])  # already ended: nothing more
    abandoned = await queue.submit("co1", "archive", {"key": "k"}, callback_url=url)
    delivery = await queue.next("c1", block_ms=50)  # the cancelled job left the queue
    assert delivery is not None and delivery.job_id == abandoned["id"]
    assert (await queue.start(delivery, "c1"))["state"] == "running"
    # c1 died; once its entry has been idle past the claim limit, c2 takes it and finds it
    # started max_attempts times
    again = await eventually(lambda: queue.next("c2", block_ms=50), what="a claimable entry")
    assert await queue.start(again, "c2") is None
    silent = await queue.submit("co1", "archive", {"key": "k"})  # no callback_url
    await queue.update("co1", silent["id"], {"state": "done"})
    pending = await hook_services.redis.zrange(OUTBOX, 0, -1)
    assert sorted(pending) == sorted([f"co1:{cancelled['id']}", f"co1:{abandoned['id']}"])
    for job_id, state in ((cancelled["id"], "cancelled"), (abandoned["id"], "failed")):
        record = await queue.get("co1", job_id)
        assert record["state"] == state and record["webhook"]["state"] == "pending"
    assert "webhook" not in await queue.get("co1", silent["id"])


async def test_a_company_without_a_secret_gets_no_unsigned_delivery(hook_services):
    receiver = Receiver([200])
    queue = hook_services.job_queue()
    sender = WebhookSender(hook_services)
    sender.start()
    try:
        job_id = await _ended_job(queue, receiver.url, company="co2")  # co2 has no secret

        async def settled() -> Any:
            record = await queue.get("co2", job_id)
            return record if record["webhook"]["state"] != "pending" else None

        record = await _until(settled)
    finally:
        await sender.stop(2)
        receiver.stop()
    assert record["webhook"]["state"] == "refused"
    assert [d["error"] for d in record["deliveries"]] == ["refused: no webhook signing secret"]
    assert receiver.seen == []  # nothing sent unsigned, nothing retried
    assert await hook_services.redis.zcard(OUTBOX) == 0


def test_retry_settings_are_read_as_seconds_and_a_typo_stops_start_up():
    from tornado_app.settings import Settings

    s = Settings.from_env({"WEBHOOK_FIRST_RETRY_SECONDS": "0.5", "WEBHOOK_RETRY_SECONDS": "90",
                           "WEBHOOK_MAX_RETRY_GAP_SECONDS": "", "JOB_CLAIM_IDLE_SECONDS": "2"})
    assert (s.webhook_first_retry_seconds, s.webhook_retry_seconds,
            s.webhook_max_retry_gap_seconds, s.job_claim_idle_seconds) == (0.5, 90, 3600, 2)
    with pytest.raises(SystemExit, match=r"WEBHOOK_RETRY_SECONDS must be seconds .*, got '1 day'"):
        Settings.from_env({"WEBHOOK_RETRY_SECONDS": "1 day"})
