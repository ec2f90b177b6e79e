"""Shared pieces of the conversion benchmarks: one input document, and the HTTP timing of
``/api/convert`` against the real service (used by the DOCX and the PDF sections)."""

from __future__ import annotations

import asyncio
import json
import time
from dataclasses import dataclass, field
from pathlib import Path

from bench.common import AUTH_HEADER, multipart

HTTP_CLIENTS = (1, 4)


@dataclass
class Doc:
    """One input document, its expected Markdown (if any) and its page count."""

    path: Path
    group: str
    expected: Path | None = None
    data: bytes = b""
    pages: int = 1
    pages_from: str = ""

    @property
    def kind(self) -> str:
        return self.path.suffix.lower().lstrip(".")

    @property
    def name(self) -> str:
        return f"{self.group}/{self.path.name}"


@dataclass
class HttpResult:
    """Latencies (s), wall time (s) and failed requests at one client count, the CPU
    seconds the service spent meanwhile (its process tree: pool workers and their children),
    and ``by_doc``: the latencies per document (its index in the list posted)."""

    clients: int
    latencies: list[float]
    seconds: float
    errors: int
    cpu: float = 0.0
    by_doc: dict[int, list[float]] = field(default_factory=dict)


def tree_cpu(pid: int) -> float:
    """CPU seconds (user + system) of ``pid`` and its descendants so far, with the children
    they have waited for (a pool worker's finished ``tesseract`` runs); 0 when it is gone."""
    import psutil

    total = 0.0
    try:
        tree = [psutil.Process(pid), *psutil.Process(pid).children(recursive=True)]
    except psutil.Error:
        return 0.0
    for proc in tree:
        try:
            t = proc.cpu_times()
        except psutil.Error:
            continue
        total += t.user + t.system + t.children_user + t.children_system
    return total


async def _http(base: str, docs: list[Doc], passes: int, pid: int = 0) -> list[HttpResult]:
    from tornado.httpclient import AsyncHTTPClient

    client = AsyncHTTPClient(max_clients=max(HTTP_CLIENTS))
    bodies = [multipart({"export": "markdown", "engine": "word2markdown"},
                        {"file": (doc.path.name, doc.data)})[::-1] for doc in docs]

    async def post(i: int) -> bool:
        ctype, body = bodies[i]
        resp = await client.fetch(f"{base}/api/convert", method="POST", body=body,
                                  headers={"Content-Type": ctype, **AUTH_HEADER},
                                  request_timeout=300, raise_error=False)
        try:
            return resp.code == 200 and json.loads(resp.body)["code"] == 0
        except (ValueError, KeyError, TypeError):
            return False

    async def measure(clients: int, work: list[int]) -> HttpResult:
        latencies: list[float] = []
        by_doc: dict[int, list[float]] = {}
        errors = 0
        todo = list(reversed(work))

        async def worker() -> None:
            nonlocal errors
            while todo:
                i = todo.pop()
                t0 = time.perf_counter()
                ok = await post(i)
                latencies.append(time.perf_counter() - t0)
                by_doc.setdefault(i, []).append(latencies[-1])
                errors += not ok
        t0, c0 = time.perf_counter(), tree_cpu(pid) if pid else 0.0
        await asyncio.gather(*(worker() for _ in range(clients)))
        return HttpResult(clients, latencies, time.perf_counter() - t0, errors,
                          tree_cpu(pid) - c0 if pid else 0.0, by_doc)

    results = {c: HttpResult(c, [], 0.0, 0) for c in HTTP_CLIENTS}
    try:
        await measure(max(HTTP_CLIENTS), list(range(len(docs))))  # warm every pool worker
        for _ in range(passes):  # interleaved, like the engine passes
            for c in HTTP_CLIENTS:
                one = await measure(c, list(range(len(docs))))
                total = results[c]
                total.latencies += one.latencies
                total.seconds += one.seconds
                total.errors += one.errors
                total.cpu += one.cpu
                for i, times in one.by_doc.items():
                    total.by_doc.setdefault(i, []).extend(times)
        return list(results.values())
    finally:
        client.close()


def time_http(docs: list[Doc], passes: int, tmp: Path) -> tuple[list[HttpResult], str]:
    """Start the real service (docs routes only) and post every document to /api/convert."""
    from bench.render import Service  # the same subprocess start and /health wait

    try:
        svc = Service(tmp)
    except (RuntimeError, OSError) as exc:
        return [], f"service did not start: {exc}"[:300]
    try:
        return asyncio.run(_http(svc.base, docs, passes, svc.proc.pid)), ""
    finally:
        svc.stop()


# ------------------------------------------------------------------ tables


def fmt(x: float | None, digits: int = 2) -> str:
    """A number for a table cell: "-" for a missing or NaN value."""
    return "-" if x is None or x != x else f"{x:.{digits}f}"
