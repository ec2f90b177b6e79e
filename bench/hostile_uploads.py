"""Concurrent large uploads (issue 30, item 5): one company sends four 47 MB uploads of random
bytes at once to ``/api/convert`` while another company's user calls ``GET /api/auth/me`` back
to back. Before uploads were streamed, every multipart body was joined and split on the event
loop once it was in, and ``me`` waited up to 902 ms; the goal is a worst ``me`` under 100 ms.

Part of ``just bench hostile`` (one more row of its table); ``python -m bench.hostile_uploads``
runs this case alone against its own service and prints its row.
"""

from __future__ import annotations

import threading
import time

from bench import hostile_inputs as hi
from bench.common import machine, multipart, percentile, table
from bench.hostile_service import Http, answer_code, attacked_service, tree_rss_mb

UPLOADS = 4
UPLOAD_MB = 47
GOAL_MS = 100


def uploads_name() -> str:
    return (f"{UPLOADS} concurrent {UPLOAD_MB} MB uploads of random bytes (/api/convert; "
            f"goal: `me` < {GOAL_MS} ms)")


def concurrent_uploads(http: Http, pid: int, victim: str, attacker: str) -> list[object]:
    """Send the uploads at once while the victim calls ``me``; the table row: name, the
    answer codes, seconds until the last answer, worst ``me`` and peak RSS over idle."""
    body, ctype = multipart({"export": "markdown"},
                            {"file": ("noise.bin", hi.random_upload(UPLOAD_MB))})
    idle = tree_rss_mb(pid)
    codes: list[str] = []

    def send() -> None:
        try:
            status, data, rtype = http.call("POST", "/api/convert", token=attacker, body=body,
                                            ctype=ctype)
            codes.append(answer_code(status, data, rtype))
        except OSError as exc:
            codes.append(f"error: {type(exc).__name__}")

    t0 = time.perf_counter()
    threads = [threading.Thread(target=send, daemon=True) for _ in range(UPLOADS)]
    for thread in threads:
        thread.start()
    worst, calls, peak = 0.0, 0, idle
    while any(thread.is_alive() for thread in threads):
        t1 = time.perf_counter()
        http.call("GET", "/api/auth/me", token=victim, timeout=120)
        worst = max(worst, time.perf_counter() - t1)
        calls += 1
        peak = max(peak, tree_rss_mb(pid))
    seconds = time.perf_counter() - t0
    return [uploads_name(), ", ".join(sorted(set(codes))), f"{seconds:.1f}",
            f"{worst * 1000:.0f} ({calls} calls)", f"{peak - idle:+.0f}"]


def run(quick: bool = False) -> None:
    """This case alone: its own service, ``me`` at rest first, then the uploads."""
    with attacked_service(quick) as svc:
        rest = svc.me_at_rest()
        row = concurrent_uploads(svc.http, svc.pid, svc.victim, svc.attacker)
    table(f"Concurrent uploads from one company, another company's `me` meanwhile "
          f"({machine()}; `me` at rest: p50 {percentile(rest, 50) * 1000:.1f} ms, "
          f"max {max(rest) * 1000:.1f} ms)",
          ["hostile input", "answer code", "seconds", f"worst `me` ms (goal < {GOAL_MS})",
           "peak RSS over idle MB"], [row])


if __name__ == "__main__":
    run()
