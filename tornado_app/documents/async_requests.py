"""``async=true`` requests become jobs: the request's input is stored in object storage (under
the company's ``_staging/``, dropped when the job ends), a job is queued, and the answer is its
id. Shared by the archive endpoints and by ``/api/convert`` and ``/md/convert``, whose form
(fields and files) is stored as it came and run by the job worker
(:mod:`tornado_app.documents.job_worker`) with the same code as a direct request.

``Idempotency-Key``: the same key and body within 24 h answer the first job; the same key with
another body is refused (40001).

A company with ``JOB_QUEUE_LIMIT_PER_COMPANY`` jobs queued or running is refused (50301 with
``Retry-After``) before anything is stored; a refused request leaves no job, no staged input
and no bound ``Idempotency-Key``.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import hashlib
import json
import uuid
from typing import Any

from store.job_queue import IdempotencyConflict, QueueFull
from store.staging import StagedArchives
from tornado_app import request_base
from tornado_app.documents.base import DocsError, DocsHandler
from tornado_app.documents.webhooks import check_callback, require_secret

MAX_IDEMPOTENCY_KEY = 200  # characters; part of the API contract, not a tunable


def form_digest(fields: dict[str, str], files: dict[str, tuple[str, bytes]]) -> str:
    """SHA-256 over every field and file (names, file names and bytes), order-independent."""
    digest = hashlib.sha256()
    for name in sorted(fields):
        digest.update(f"\0f\0{name}\0{fields[name]}".encode())
    for name in sorted(files):
        filename, data = files[name]
        digest.update(f"\0b\0{name}\0{filename}\0".encode())
        digest.update(hashlib.sha256(data).digest())
    return digest.hexdigest()


async def earlier_job(handler: DocsHandler, job_id: str, body_digest: str) -> str | None:
    """With an ``Idempotency-Key`` header: the job an earlier request with the same key and body
    made (None when this request is the first, or there is no key)."""
    key = handler.request.headers.get("Idempotency-Key", "").strip()
    if not key:
        return None
    if len(key) > MAX_IDEMPOTENCY_KEY:
        raise DocsError(40001, f"Idempotency-Key is longer than {MAX_IDEMPOTENCY_KEY} "
                               "characters")
    try:
        bound = await handler.services.job_queue().claim_idempotency(
            handler.company_id, key, body_digest, job_id)
    except IdempotencyConflict as exc:
        raise DocsError(40001, "Idempotency-Key was used with a different request within "
                               "24 hours; use a new key") from exc
    return None if bound == job_id else bound


MAX_JOB_NAME = 200  # characters of a job's name kept in its record


def job_name(kind: str, files: dict[str, tuple[str, bytes]], job_input: dict[str, Any]) -> str:
    """What a job is listed as, on any tab or device: the uploaded file's name (an archive,
    a document), else the folder's; '' when there is none (Markdown typed in). Only the
    last path part, without control characters."""
    candidates = [filename for filename, _ in files.values()]
    if isinstance(job_input.get("name"), str) and job_input["name"] != kind:
        candidates.append(job_input["name"])
    for raw in candidates:
        last = raw.replace("\\", "/").rsplit("/", 1)[-1]
        name = "".join(c for c in last if c.isprintable()).strip()[:MAX_JOB_NAME]
        if name:
            return name
    return ""


def answer(handler: DocsHandler, job_id: str) -> None:
    handler.success({"job_id": job_id, "status_url": f"/api/jobs/{job_id}"})


async def submit(handler: DocsHandler, kind: str, fields: dict[str, str],
                 files: dict[str, tuple[str, bytes]], input_bytes: bytes | None,
                 job_input: dict[str, Any]) -> str:
    """Queue a job of ``kind`` (storing ``input_bytes`` first unless None); its id (an earlier
    job's for a repeated ``Idempotency-Key``)."""
    svc = handler.services
    if svc.storage is None:
        raise DocsError(50201, "storage not configured")
    callback = check_callback((fields.get("callback_url") or "").strip(), svc.settings)
    if callback:
        await require_secret(svc, handler.company_id)
    queue = svc.job_queue()
    job_id = uuid.uuid4().hex
    # hashing a large upload takes time: off the event loop, like every other pass over it
    earlier = await earlier_job(handler, job_id,
                                await asyncio.to_thread(form_digest, fields, files))
    if earlier is not None:
        return earlier
    try:
        limit = svc.settings.job_queue_limit_per_company
        await queue.check_room(handler.company_id, limit)
        store = await svc.storage.store(handler.company_id)
        if input_bytes is not None:
            key = StagedArchives.new(store.config.prefix, kind, len(input_bytes)).key
            await svc.storage.put(store, key, input_bytes, "application/octet-stream")
            job_input = {**job_input, "key": key, "owned": True}
        # the job's links name the address its caller used (tornado_app.request_base)
        job_input = {**job_input, "base": request_base.current()}
        await queue.submit(handler.company_id, kind, job_input, callback_url=callback,
                           job_id=job_id, limit=limit, name=job_name(kind, files, job_input))
    except QueueFull as exc:
        await _undo(handler, job_id, job_input)
        raise DocsError(50301, str(exc), retry_after=exc.retry_after) from exc
    return job_id


async def _undo(handler: DocsHandler, job_id: str, job_input: dict[str, Any]) -> None:
    """A refused submit: drop its staged input and free its ``Idempotency-Key``
    (the same request may be sent again)."""
    svc = handler.services
    key = handler.request.headers.get("Idempotency-Key", "").strip()
    with contextlib.suppress(Exception):
        if key:
            await svc.job_queue().release_idempotency(handler.company_id, key, job_id)
        if job_input.get("owned") and svc.storage is not None:
            store = await svc.storage.store(handler.company_id)
            await svc.storage.io(store.remove, job_input["key"])


def pack_form(fields: dict[str, str], files: dict[str, tuple[str, bytes]]) -> bytes:
    """A request form as stored job input."""
    return json.dumps({"fields": fields, "files": {
        name: [filename, base64.b64encode(data).decode()]
        for name, (filename, data) in files.items()}}).encode()


def unpack_form(raw: bytes) -> tuple[dict[str, str], dict[str, tuple[str, bytes]]]:
    """The form :func:`pack_form` stored."""
    packed = json.loads(raw)
    return packed["fields"], {name: (filename, base64.b64decode(data))
                              for name, (filename, data) in packed["files"].items()}


async def enqueue_form(handler: DocsHandler, kind: str, fields: dict[str, str],
                       files: dict[str, tuple[str, bytes]]) -> None:
    """``/api/convert`` or ``/md/convert`` with ``async=true``: store the form, queue the job
    (its result is saved to object storage, as with ``save=true``)."""
    packed = await asyncio.to_thread(pack_form, fields, files)  # base64 + JSON of the upload
    answer(handler, await submit(handler, kind, fields, files, packed, {"name": kind}))
