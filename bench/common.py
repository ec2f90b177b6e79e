"""Shared benchmark helpers: percentiles, tables, a bounded concurrent HTTP load."""

from __future__ import annotations

import asyncio
import os
import platform
import statistics
import time
from collections.abc import Awaitable, Callable

import urllib3

# The benches' services run on loopback with this operator token (DOCS_API_TOKEN) as their
# docs caller, and without a metrics listener (several may run at once).
OPERATOR_TOKEN = "bench-operator-token"
SERVICE_ENV = {"DOCS_API_TOKEN": OPERATOR_TOKEN, "METRICS_ADDRESS": "off"}
AUTH_HEADER = {"Authorization": f"Bearer {OPERATOR_TOKEN}"}


def percentile(values: list[float], p: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    k = min(len(ordered) - 1, max(0, round(p / 100 * (len(ordered) - 1))))
    return ordered[k]


def machine() -> str:
    return f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}"


def table(title: str, header: list[str], rows: list[list[object]]) -> None:
    widths = [max(len(str(x)) for x in col) for col in zip(header, *rows, strict=False)]
    print(f"\n## {title}\n")
    print("| " + " | ".join(h.ljust(w) for h, w in zip(header, widths, strict=True)) + " |")
    print("|" + "|".join("-" * (w + 2) for w in widths) + "|")
    for row in rows:
        print("| " + " | ".join(str(x).ljust(w) for x, w in zip(row, widths, strict=True)) + " |")


async def load(call: Callable[[], Awaitable[None]], *, concurrency: int, seconds: float
               ) -> tuple[int, list[float], float]:
    """Run ``call`` from ``concurrency`` tasks for ``seconds``; returns count, latencies, s."""
    latencies: list[float] = []
    deadline = time.perf_counter() + seconds

    async def worker() -> None:
        while time.perf_counter() < deadline:
            t0 = time.perf_counter()
            await call()
            latencies.append(time.perf_counter() - t0)

    t0 = time.perf_counter()
    await asyncio.gather(*(worker() for _ in range(concurrency)))
    return len(latencies), latencies, time.perf_counter() - t0


def summary(latencies: list[float]) -> tuple[float, float, float]:
    """p50, p99 (ms) and mean (ms)."""
    return (percentile(latencies, 50) * 1000, percentile(latencies, 99) * 1000,
            statistics.fmean(latencies) * 1000 if latencies else float("nan"))


def multipart(fields: dict[str, str], files: dict[str, tuple[str, bytes]] | None = None,
              file_type: str = "application/octet-stream") -> tuple[bytes, str]:
    """A multipart/form-data body and its content type (urllib3's encoder)."""
    parts: list[tuple[str, object]] = list(fields.items())
    parts += [(name, (filename, data, file_type))
              for name, (filename, data) in (files or {}).items()]
    return urllib3.encode_multipart_formdata(parts)
