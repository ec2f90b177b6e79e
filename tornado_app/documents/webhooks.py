"""Webhooks: when a job with a ``callback_url`` ends, its public record is POSTed there, signed
with HMAC-SHA256 over ``<timestamp>.<body>`` (``X-Timestamp``, ``X-Signature: sha256=<hex>``)
with the signing secret of the job's company (:mod:`store.webhook_secrets`, made and rotated
by an ADMIN with ``POST /api/webhook-secret``). A ``callback_url`` is refused (40001) while
the company has none, so no delivery is ever signed with a key others could know.
``WEBHOOK_SECRET`` is only the operator's fallback: it signs the jobs of the operator token
and of ``DOCS_AUTH=none`` while those have no secret of their own. A failed delivery is
retried with exponential backoff (``WEBHOOK_FIRST_RETRY_SECONDS``, doubling, each gap at most
``WEBHOOK_MAX_RETRY_GAP_SECONDS``) for up to ``WEBHOOK_RETRY_SECONDS`` (24 h); every attempt
is recorded on the job under ``deliveries``.

Delivery is durable: the pending delivery is written to Redis with the job's final state
(:mod:`store.webhook_outbox`) and every process running a job consumer runs a
:class:`WebhookSender`, so the retries survive the process that ended the job.

The callback address passes the same guard as every remote fetch (``documents/fetch.py``):
http(s) only, no credentials, no private, loopback or link-local address (literal or resolved)
unless ``ALLOW_PRIVATE_URLS``; redirects are not followed.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import hmac
import json
import logging
import time
from typing import Any

from tornado.httpclient import AsyncHTTPClient, HTTPRequest

from store import webhook_secrets
from store.job_queue import public_view
from store.webhook_outbox import Backoff, Claim, WebhookOutbox
from tornado_app.documents.fetch import (
    FetchRefused,
    GuardedResolver,
    check_url,
    refuse_literal_private,
)
from tornado_app.services import Services
from tornado_app.settings import Settings

log = logging.getLogger(__name__)

LEASE_FACTOR = 3  # an attempt holds its delivery for this many POST timeouts
CLAIM_BATCH = 16  # deliveries claimed per round; more rounds follow at once, so not a tunable


def check_callback(url: str, settings: Settings) -> str:
    """The callback address if the guard allows it ('' stays ''); 42201 otherwise."""
    from tornado_app.documents.base import DocsError

    if not url:
        return ""
    try:
        url = check_url(url)
        if not settings.allow_private_urls:
            refuse_literal_private(url)
    except FetchRefused as exc:
        raise DocsError(42201, f"callback_url refused: {exc}") from exc
    return url


async def signing_secret(svc: Services, company_id: str) -> str:
    """The key that signs the deliveries of ``company_id``'s jobs ('' while there is none):
    the company's own secret; for the operator token and ``DOCS_AUTH=none`` also
    ``WEBHOOK_SECRET``."""
    from tornado_app.callers import LOCAL_COMPANY, OPERATOR_COMPANY

    stored = await webhook_secrets.signing_key(svc.db, company_id)
    if stored:
        return stored
    if company_id in (OPERATOR_COMPANY, LOCAL_COMPANY):
        return svc.settings.webhook_secret
    return ""


async def require_secret(svc: Services, company_id: str) -> None:
    """40001 while ``company_id`` has no signing secret (a ``callback_url`` would be sent
    signed with a key anyone could forge)."""
    from tornado_app.documents.base import DocsError

    if not await signing_secret(svc, company_id):
        raise DocsError(40001, "callback_url needs a webhook signing secret: an ADMIN makes "
                               "one with POST /api/webhook-secret (shown once; the Keys "
                               "screen has it), then send the request again")


def sign(secret: str, timestamp: str, body: bytes) -> str:
    """``sha256=<hex>`` of HMAC-SHA256(secret, ``timestamp.body``)."""
    mac = hmac.new(secret.encode(), timestamp.encode() + b"." + body, hashlib.sha256)
    return "sha256=" + mac.hexdigest()


async def post_once(url: str, body: bytes, secret: str, *, allow_private: bool,
                    timeout: float = 10.0) -> tuple[int, str]:
    """One signed POST; (HTTP status or 0, error text)."""
    timestamp = str(int(time.time()))
    client = AsyncHTTPClient(force_instance=True,
                             resolver=GuardedResolver(allow_private=allow_private))
    try:
        if not allow_private:
            refuse_literal_private(url)
        response = await client.fetch(HTTPRequest(
            url, method="POST", body=body, follow_redirects=False, connect_timeout=timeout,
            request_timeout=timeout, headers={
                "Content-Type": "application/json", "User-Agent": "docservice-webhook/1",
                "X-Timestamp": timestamp, "X-Signature": sign(secret, timestamp, body)}),
            raise_error=False)
        if isinstance(response.error, FetchRefused):
            return 0, f"refused: {response.error}"
        if response.code == 599:
            return 0, "could not connect"
        return response.code, ""
    except FetchRefused as exc:
        return 0, f"refused: {exc}"
    except OSError as exc:
        return 0, type(exc).__name__
    finally:
        client.close()


def payload(record: dict[str, Any]) -> bytes:
    """The POSTed body: the job's public record without the delivery bookkeeping (the same
    bytes at every attempt)."""
    return json.dumps({k: v for k, v in public_view(record).items()
                       if k not in ("deliveries", "webhook")}).encode()


class WebhookSender:
    """The delivery loop every job consumer's process runs beside it: takes due deliveries
    from the Redis outbox (:mod:`store.webhook_outbox`), POSTs them, records each attempt on
    the job and reschedules or settles it. Any process may make any attempt, so a receiver
    that is down when the job's process dies is retried by another."""

    def __init__(self, svc: Services) -> None:
        s = svc.settings
        self.svc = svc
        self.queue = svc.job_queue()
        self.outbox = WebhookOutbox(self.queue)
        self.backoff = Backoff(first=s.webhook_first_retry_seconds,
                               cap=s.webhook_max_retry_gap_seconds,
                               window=s.webhook_retry_seconds)
        self.poll_seconds = min(1.0, max(0.05, s.webhook_first_retry_seconds / 4))
        self._wake = asyncio.Event()
        self._stopping = False
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        """Begin delivering in the background."""
        self._task = asyncio.ensure_future(self._loop())

    def wake(self) -> None:
        """A job ended here: look at the outbox now rather than at the next poll."""
        self._wake.set()

    async def stop(self, grace_seconds: float) -> None:
        """Take no more deliveries; attempts in flight get ``grace_seconds`` to end, then
        are given back to the outbox (due at once) for another process."""
        self._stopping = True
        self._wake.set()
        task = self._task
        if task is None or task.done():
            return
        await asyncio.wait([task], timeout=grace_seconds)
        if not task.done():
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task

    async def _loop(self) -> None:
        while not self._stopping:
            self._wake.clear()
            try:
                claims = await self.outbox.claim(
                    time.time(), LEASE_FACTOR * self.svc.settings.webhook_timeout_seconds,
                    CLAIM_BATCH)
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # Redis away: wait and try again
                log.warning("webhook outbox unavailable", extra={"error": str(exc)})
                await asyncio.sleep(1)
                continue
            if claims:
                await asyncio.gather(*(self._attempt(c) for c in claims))
                if len(claims) == CLAIM_BATCH:
                    continue  # more may be due
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(self._wake.wait(), self.poll_seconds)

    async def _attempt(self, claim: Claim) -> None:
        """One POST of one claimed delivery, recorded and settled."""
        s = self.svc.settings
        try:
            record = await self.queue.get(claim.company_id, claim.job_id)
            if record is None or not record.get("callback_url"):
                await self.outbox.drop(claim)  # expired: nothing left to send
                return
            secret = await signing_secret(self.svc, claim.company_id)
            if secret:
                status, error = await post_once(
                    record["callback_url"], payload(record), secret,
                    allow_private=s.allow_private_urls, timeout=s.webhook_timeout_seconds)
            else:  # never sent unsigned (a secret that existed at submission is gone)
                status, error = 0, "refused: no webhook signing secret"
            final = ("delivered" if 200 <= status < 300
                     else "refused" if error.startswith("refused") else None)
            ended = await self.outbox.finish(
                claim, {"at": time.time(), "status": status, "error": error}, final=final,
                backoff=self.backoff)
        except asyncio.CancelledError:
            with contextlib.suppress(Exception):  # stopping: another process takes it now
                await self.outbox.release(claim, time.time())
            raise
        except Exception:
            log.exception("webhook attempt failed", extra={"job": claim.job_id})
            return  # the lease runs out and the attempt is made again
        if final is not None:
            outcome = final
        elif ended is not None and ended.get("webhook", {}).get("state") == "failed":
            outcome = "gave_up"
            log.warning("webhook given up", extra={"job": claim.job_id})
        else:
            outcome = "retry"
        self.svc.metrics.webhook_deliveries.labels(outcome).inc()
