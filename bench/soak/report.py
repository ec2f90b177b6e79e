"""The soak's tables and verdict."""

from __future__ import annotations

from collections import Counter

from bench.common import machine, percentile, table
from bench.soak import GROWTH_LIMIT
from bench.soak.jobs import JOB_BATCH, JOB_CLAIM_IDLE, JOB_DOCS, JOB_IMAGES, Jobs
from bench.soak.load import Record, Run


# ---------------------------------------------------------------- report
def report(run: Run, seconds: float, faults: bool, mem_start: dict, mem_end: dict,
           exit_code: int, leaks: list[int], clients: int, jobs: Jobs | None = None) -> bool:
    """Print the tables; True when every criterion holds."""
    routes: dict[str, list[Record]] = {}
    for r in run.records:
        routes.setdefault(r.route, []).append(r)
    rows = []
    total_err = total_fault_err = total_noanswer = 0
    for route in sorted(routes):
        recs = routes[route]
        lat = [(r.end - r.start) * 1000 for r in recs if r.outcome == "ok"]
        err = sum(1 for r in recs if r.outcome == "error" and not run.in_window(r))
        ferr = sum(1 for r in recs if r.outcome == "error" and run.in_window(r))
        noans = sum(1 for r in recs if r.outcome == "noanswer")
        total_err, total_fault_err, total_noanswer = (total_err + err, total_fault_err + ferr,
                                                      total_noanswer + noans)
        row: list[object] = [route, len(recs), err]
        if faults:
            row.append(ferr)
        row += [noans, f"{percentile(lat, 50):.0f}", f"{percentile(lat, 99):.0f}"]
        rows.append(row)
    header = ["route", "requests", "errors"]
    if faults:
        header.append("error answers in fault windows")
    header += ["no answer", "p50 ms", "p99 ms"]
    title = f"Soak{' with faults' if faults else ''}: {seconds:.0f} s, {clients} clients"
    table(title, header, rows)

    mem_rows = []
    growth_ok = True
    for name in sorted(set(mem_start) | set(mem_end)):
        n0, m0 = mem_start.get(name, (0, 0.0))
        n1, m1 = mem_end.get(name, (0, 0.0))
        growth = (m1 - m0) / m0 * 100 if m0 else float("nan")
        # a fault pass kills workers and Chromium on purpose: only the service is judged
        judged = name == "service" or (name in ("pool worker", "chromium") and not faults)
        if judged and not growth <= GROWTH_LIMIT:
            growth_ok = False
        mem_rows.append([name, f"{n0} -> {n1}", f"{m0:.0f}", f"{m1:.0f}",
                         f"{growth:+.1f}" + ("" if judged else " (not judged)")])
    table("Resident memory (MiB, summed RSS, lowest of 9 samples over 4 s, under load)",
          ["processes", "count", "after warm-up", "end", "growth %"], mem_rows)

    table("Resident memory over time (MiB, single samples)",
          ["t s", "service", "pool workers", "chromium"],
          [[f"{t:.0f}", f"{g.get('service', (0, 0))[1]:.0f}",
            f"{g.get('pool worker', (0, 0))[1]:.0f}", f"{g.get('chromium', (0, 0))[1]:.0f}"]
           for t, g in run.timeline])
    if faults:
        table("Faults", ["fault", "at s", "recovered after s", "window s"],
              [[w.name, f"{w.start - run.t0:.1f}", f"{(w.recovered_after or 0):.1f}",
                f"{w.end - w.start:.1f}"] for w in run.windows])
        answers: Counter[tuple[str, str, str]] = Counter()
        for r in run.records:
            hit = [w for w in run.windows
                   if w.excuses and r.start <= w.end and r.end >= w.start]
            if r.outcome == "error" and hit:  # a window's grace may reach the next fault
                w = max(hit, key=lambda w: w.start if w.start <= r.end else -1)
                answers[(w.name.split(" (")[0], r.route, r.detail)] += 1
        table("Error answers inside the fault windows (expected)",
              ["fault", "route", "answer (HTTP status, code)", "count"],
              [[*k, n] for k, n in sorted(answers.items())] or [["none", "", "", 0]])
    jobs_ok = True
    if jobs is not None:
        n = jobs.summary()
        kills = [f"{w.recovered_after:.1f}" for w in run.windows if not w.excuses]
        mid_job = sum(k.mid_job for k in jobs.kills)
        jobs_ok = n["accepted"] > 0 and n["done"] == n["accepted"] and mid_job > 0
        table(f"Archive jobs (async=true, {JOB_DOCS} Markdown files and {JOB_IMAGES} images "
              f"each, batches of {JOB_BATCH}) on two consumers: the service and a worker "
              f"(JOB_CLAIM_IDLE_SECONDS={JOB_CLAIM_IDLE})",
              ["accepted", "done", "failed", "cancelled", "lost", "re-run after a claim",
               "re-runs started at s", "worker SIGKILLs (mid-job)", "kill -9 -> its job done s",
               "end wait s"],
              [[n["accepted"], n["done"], n["failed"], n["cancelled"], n["lost"],
                n["re-run"], ", ".join(f"{t:.1f}" for t in jobs.rerun_starts(run.wall0)) or "-",
                f"{len(jobs.kills)} ({mid_job})", ", ".join(kills) or "-",
                f"{jobs.settled_after:.1f}"]])
        for job_id in [j for j in jobs.accepted
                       if jobs.latest.get(j, {}).get("state") != "done"][:10]:
            rec = jobs.latest.get(job_id, {})
            print(f"  job {job_id}: {rec.get('state', 'gone')} {rec.get('msg', '')}")
    done = len(run.records)
    ok = (total_err == 0 and total_noanswer == 0 and exit_code == 0 and not leaks
          and growth_ok and jobs_ok
          and all(w.recovered_after == w.recovered_after for w in run.windows))
    print(f"\nrequests {done} ({done / seconds:.1f}/s), errors {total_err}"
          + (f", error answers in fault windows {total_fault_err}" if faults else "")
          + f", no answer {total_noanswer}; service exit code on SIGTERM {exit_code}; "
          f"processes left behind {len(leaks)}"
          + (f"; jobs accepted {jobs.summary()['accepted']}, lost {jobs.summary()['lost']}"
             if jobs is not None else ""))
    bad = [r for r in run.records if r.outcome != "ok" and not run.in_window(r)]
    for r in bad[:10]:
        print(f"  {r.outcome}: {r.route} at {r.start - run.t0:.1f} s: {r.detail}")
    print(f"machine: {machine()}")
    print("verdict:", "PASS" if ok else "FAIL")
    return ok


