"""Slow small files (issue 30, item 4): what each of EVIL's files costs, and how long another
company's one-line ODT waits while two of them run.

Each of the four files of the finding (``bench/slow_inputs.py``, full size) is sent alone by
EVIL while GOOD's user calls ``me``: its answer and the time to it (goal: refused or done in
under 20 s; before: 30 to 104 s, or the time limit). Then GOOD converts a one-line ODT alone
(the reference), and again 0.5 s after EVIL has sent two of the slow files at once (goal:
under 5 s; before: 53.5 s, both workers held by EVIL). Part of ``just bench hostile`` (more
rows of its table); ``python -m bench.hostile_slow`` runs it alone against its own service.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from datetime import UTC, datetime

from bench import slow_inputs as si
from bench.common import machine, multipart, table
from bench.hostile_service import Hostile, Http, answer_code, attack, attacked_service

REFUSAL_GOAL_S = 20
WAIT_GOAL_S = 5


@dataclass
class _Sent:
    code: str = ""
    seconds: float = 0.0


def slow_inputs(quick: bool) -> list[Hostile]:
    """The four slow files of the finding (the same sizes with ``quick``: each is answered
    in seconds now, and their point is their size)."""
    del quick
    return [
        Hostile("RTF: one table of 100,000 rows (about 7 MB)", "/api/convert",
                {"export": "markdown"}, {"file": ("rows.rtf", si.big_table_rtf(100_000))}),
        Hostile("EPUB: its spine lists one 1 MB chapter 2,000 times", "/api/convert",
                {"export": "markdown"},
                {"file": ("again.epub", si.repeated_spine_epub(1.0, 2000))}),
        Hostile("DOCX (3 MB) showing one 2 MB PNG 3,000 times, export=html", "/api/convert",
                {"export": "html"}, {"file": ("pictures.docx", si.reused_image_docx(2.0, 3000))}),
        Hostile("XLSX with 1,500,000 shared strings", "/api/convert", {"export": "markdown"},
                {"file": ("strings.xlsx", si.shared_strings_xlsx(1_500_000))}),
    ]


def _send(http: Http, token: str, item: Hostile, out: _Sent) -> None:
    body, ctype = multipart(item.fields, item.files)
    t0 = time.perf_counter()
    try:
        status, data, rtype = http.call("POST", item.path, token=token, body=body, ctype=ctype)
        out.code = answer_code(status, data, rtype)
    except OSError as exc:
        out.code = f"error: {type(exc).__name__}"
    out.seconds = time.perf_counter() - t0


def slow_rows(http: Http, pid: int, victim: str, attacker: str, quick: bool = False
              ) -> list[list[object]]:
    """Rows of the hostile table: each slow file alone (answer, seconds, worst ``me``, peak
    RSS), then GOOD's one-line ODT alone and beside two of EVIL's slow files."""
    items = slow_inputs(quick)
    rows: list[list[object]] = []
    for item in items:
        out = attack(http, pid, victim, attacker, item)
        rows.append([f"{item.name} (goal < {REFUSAL_GOAL_S} s)", out.code, f"{out.seconds:.1f}",
                     f"{out.me_worst_ms:.0f} ({out.me_calls} calls)",
                     f"{out.peak_over_idle_mb:+.0f}"])
    odt = Hostile("one-line ODT", "/api/convert", {"export": "markdown"},
                  {"file": ("line.odt", si.one_line_odt())})
    for _ in range(2):  # the first one starts LibreOffice's profile in a worker
        alone = _Sent()
        _send(http, victim, odt, alone)
    rows.append(["GOOD's one-line ODT alone (the reference)", alone.code,
                 f"{alone.seconds:.1f}", "-", "-"])
    pair = [items[3], items[2]]  # the two that still take longest
    evil = [_Sent() for _ in pair]
    threads = [threading.Thread(target=_send, args=(http, attacker, item, sent), daemon=True)
               for item, sent in zip(pair, evil, strict=True)]
    for thread in threads:
        thread.start()
    time.sleep(0.5)
    beside = _Sent()
    _send(http, victim, odt, beside)
    for thread in threads:
        thread.join()
    rows.append([f"GOOD's one-line ODT sent 0.5 s after EVIL's XLSX and DOCX (goal < "
                 f"{WAIT_GOAL_S} s; EVIL's: {evil[0].code} in {evil[0].seconds:.1f} s, "
                 f"{evil[1].code} in {evil[1].seconds:.1f} s)", beside.code,
                 f"{beside.seconds:.1f}", "-", "-"])
    return rows


def run(quick: bool = False) -> None:
    """This part alone, against its own service (pool of two)."""
    with attacked_service(quick) as svc:
        rows = slow_rows(svc.http, svc.pid, svc.victim, svc.attacker, quick)
    when = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    table(f"Slow small files from one company ({when}, {machine()}, pool of 2)",
          ["input", "answer code", "seconds", "worst `me` ms", "peak RSS over idle MB"], rows)


if __name__ == "__main__":
    run()
