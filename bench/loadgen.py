"""A small, cheap HTTP/1.1 load generator for the benches, run as its own process.

Each of ``connections`` keep-alive connections sends one request, reads the whole answer
(``Content-Length`` bodies only, which is what Tornado sends for these endpoints) and sends
the next, for ``seconds``. Written on raw asyncio streams because a full HTTP client costs
more CPU per request than the server under test, which would measure the client. Prints
one JSON object: requests, seconds, statuses and latency percentiles (ms).

    python -m bench.loadgen '{"port": 8080, "path": "/health", "connections": 32,
                              "seconds": 5}'
"""

from __future__ import annotations

import asyncio
import json
import sys
import time
from collections import Counter
from typing import Any

from bench.common import percentile


def _request(spec: dict[str, Any]) -> bytes:
    body = spec.get("body", "").encode()
    headers = "".join(f"{k}: {v}\r\n" for k, v in spec.get("headers", {}).items())
    return (f"{spec.get('method', 'GET')} {spec['path']} HTTP/1.1\r\nHost: 127.0.0.1\r\n"
            f"{headers}Content-Length: {len(body)}\r\n\r\n").encode() + body


async def _connection(port: int, request: bytes, deadline: float, latencies: list[float],
                      statuses: Counter[int]) -> None:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    try:
        while time.perf_counter() < deadline:
            t0 = time.perf_counter()
            writer.write(request)
            head = await reader.readuntil(b"\r\n\r\n")
            status = int(head[9:12])
            length = 0
            for line in head.split(b"\r\n"):
                if line[:15].lower() == b"content-length:":
                    length = int(line[15:])
            if length:
                await reader.readexactly(length)
            latencies.append(time.perf_counter() - t0)
            statuses[status] += 1
    finally:
        writer.close()


async def run(spec: dict[str, Any]) -> dict[str, Any]:
    latencies: list[float] = []
    statuses: Counter[int] = Counter()
    request = _request(spec)
    t0 = time.perf_counter()
    deadline = t0 + float(spec["seconds"])
    await asyncio.gather(*(_connection(int(spec["port"]), request, deadline, latencies,
                                       statuses) for _ in range(int(spec["connections"]))))
    seconds = time.perf_counter() - t0
    return {
        "requests": len(latencies), "seconds": seconds, "rps": len(latencies) / seconds,
        "statuses": {str(k): v for k, v in statuses.items()},
        "p50_ms": percentile(latencies, 50) * 1000, "p99_ms": percentile(latencies, 99) * 1000,
        "latencies_ms": [round(x * 1000, 3) for x in latencies] if spec.get("raw") else [],
    }


if __name__ == "__main__":
    print(json.dumps(asyncio.run(run(json.loads(sys.argv[1])))), flush=True)
