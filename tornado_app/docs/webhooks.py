"""Webhooks: when a job with a ``callback_url`` ends, its public record is POSTed there, signed
with HMAC-SHA256 over ``<timestamp>.<body>`` (``X-Timestamp``, ``X-Signature: sha256=<hex>``,
secret ``WEBHOOK_SECRET``). A failed delivery is retried with exponential backoff
(``WEBHOOK_FIRST_RETRY_SECONDS``, doubling) for up to ``WEBHOOK_RETRY_SECONDS`` (24 h); every
attempt is recorded on the job under ``deliveries``.

The callback address passes the same guard as every remote fetch (``tornado_app/docs/fetch.py``):
http(s) only, no credentials, no private, loopback or link-local address (literal or resolved)
unless ``ALLOW_PRIVATE_URLS``; redirects are not followed.
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import json
import logging
import time
from typing import Any

from tornado.httpclient import AsyncHTTPClient, HTTPRequest

from store.job_queue import JobQueue, public_view
from tornado_app.docs.fetch import FetchRefused, GuardedResolver, _refuse_literal_private, check_url
from tornado_app.services import Services
from tornado_app.settings import Settings

log = logging.getLogger(__name__)


def check_callback(url: str, settings: Settings) -> str:
    """The callback address if the guard allows it ('' stays ''); 42201 otherwise."""
    from tornado_app.docs.base import DocsError

    if not url:
        return ""
    try:
        url = check_url(url)
        if not settings.allow_private_urls:
            _refuse_literal_private(url)
    except FetchRefused as exc:
        raise DocsError(42201, f"callback_url refused: {exc}") from exc
    return url


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
            _refuse_literal_private(url)
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


async def deliver(svc: Services, queue: JobQueue, record: dict[str, Any]) -> None:
    """POST the ended job to its callback until a 2xx or the retry window is over."""
    s = svc.settings
    company_id, job_id, url = record["company_id"], record["id"], record["callback_url"]
    body = json.dumps({k: v for k, v in public_view(record).items()
                       if k != "deliveries"}).encode()
    wait, began = s.webhook_first_retry_seconds, time.monotonic()
    while True:
        status, error = await post_once(url, body, s.webhook_secret,
                                        allow_private=s.allow_private_urls)
        current = await queue.get(company_id, job_id)
        if current is not None:
            attempt = {"at": time.time(), "status": status, "error": error}
            await queue.update(company_id, job_id,
                               {"deliveries": [*current.get("deliveries", []), attempt]},
                               unless=())
        if 200 <= status < 300 or error.startswith("refused"):
            return
        if time.monotonic() - began + wait > s.webhook_retry_seconds:
            log.warning("webhook given up", extra={"job": job_id})
            return
        await asyncio.sleep(wait)
        wait *= 2


def deliver_later(svc: Services, queue: JobQueue, record: dict[str, Any]) -> None:
    """Deliver in the background (kept referenced until it ends)."""
    task = asyncio.ensure_future(deliver(svc, queue, record))
    running: set[asyncio.Future[None]] = svc.extras.setdefault("webhook_tasks", set())
    running.add(task)
    task.add_done_callback(running.discard)
