"""OCR benchmark (``just bench ocr``): scans made from born-digital PDFs, read back.

Scanned set: each PDF below is rasterised at 200 dpi, turned slightly (0.6 degrees, the
sign alternating by page), speckled, its second page fed sideways (90 degrees), and the
pages assembled into an image-only PDF (:mod:`bench.scans`). In the same run each scan is
read by:

- ours in-process (``convert_document``, ``ocr=auto``: every page through Tesseract and the
  PDF layout logic; the pages of a document in parallel threads);
- ``ocrmypdf`` (pinned, its own virtualenv under ``bench/.peers/``, Debian's ``tesseract``:
  ``--rotate-pages --deskew --jobs 2``) and then its output read by pymupdf4llm and by
  markitdown (each in its own virtualenv, as in the conversion bench);
- plain ``tesseract`` text (the same page images, ``--psm 3``, no structure, nothing turned);
- ours through HTTP (``POST /api/convert``, the real service and its pool: the pages of a
  scan spread over the pool's workers) at 1 and 4 clients.

All OCR is in English (``eng``) except over HTTP, which uses the service's ``OCR_LANGUAGES``
(default ``eng+deu+fra+spa+chi_sim+jpn``: Latin packs first, the others by script).

Scores, against the born-digital PDF read by our reader (the text layer's answer):
- word recall: share of the born-digital words (multiset, normalised) found in the output;
- reading order: normalised indel similarity of the two word sequences (difflib's ratio,
  2*matches / total words);
- structure: per-category F1 (``bench.fidelity``) against the source DOCX (office set) or
  the born-digital reading (generated set), for born-digital and scan alike; the "structure"
  macro-F1 is over headings, heading levels, paragraphs, list items, table cells and tables
  (pictures, links and emphasis cannot come out of a scan read by Tesseract 5).
Cost: CPU seconds per page (user + system of every process involved: it does not depend on
what else runs on the machine) and pages/s of wall time on the machine's cores (it does).
"""

from __future__ import annotations

import difflib
import os
import resource
import statistics
import subprocess
import tempfile
import time
from collections import Counter
from pathlib import Path

from bench import peers
from bench.common import machine, table
from bench.convert_common import Doc, fmt, time_http
from bench.fidelity import PDF_CATEGORIES, Score, elements, normalise
from bench.scans import image_only_pdf, scan_pages
from render_pool.engine.formats import ReadRequest
from render_pool.engine.jobs import ConvertOptions

ROOT = Path(__file__).resolve().parents[1]
PDF = ROOT / "tests" / "data" / "pdf"
DOCS = [PDF / "office" / "report.pdf", PDF / "office" / "quotes.pdf",
        PDF / "generated" / "lists_tables.pdf", PDF / "generated" / "report.pdf"]
LONG = [PDF / "office" / "long.pdf"]
STRUCTURE = ("headings", "heading levels", "paragraphs", "list items", "table cells", "tables")
BORN, OURS, PLAIN = "born-digital (ours, text layer)", "scan: ours (OCR + layout)", \
    "scan: tesseract text"
OCRMYPDF_THEN = ("pymupdf4llm", "markitdown")  # readers of ocrmypdf's output
TOOLS = (BORN, OURS, *(f"scan: ocrmypdf + {r}" for r in OCRMYPDF_THEN), PLAIN)


def _cpu() -> float:
    """CPU seconds used so far by this process and its waited-for children."""
    me, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(
        resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime


def _markdown(data: bytes) -> tuple[str, list[str], float, float]:
    """(Markdown, warnings, wall s, CPU s) of our in-process conversion."""
    from render_pool.engine.jobs import convert_document

    t0, c0 = time.perf_counter(), _cpu()
    try:
        result = convert_document(data, "markdown", options=ConvertOptions(
            read=ReadRequest(ocr_languages="eng")))
    except Exception as exc:  # an error is a data point
        return "", [f"{type(exc).__name__}: {exc}"[:120]], time.perf_counter() - t0, \
            _cpu() - c0
    # the OCR facts (pages read, confidence) are notes, the problems warnings
    return (result.content, [*result.warnings, *result.notes], time.perf_counter() - t0,
            _cpu() - c0)


def _tesseract_text(images: list, tmp: Path) -> tuple[str, float, float]:
    """Plain tesseract text of the page images (the peer without structure)."""
    out = []
    t0, c0 = time.perf_counter(), _cpu()
    for n, image in enumerate(images):
        path = tmp / f"page{n}.png"
        image.save(path)
        done = subprocess.run(["tesseract", str(path), "-", "-l", "eng", "--psm", "3"],
                              capture_output=True, check=False, timeout=300,
                              env={**os.environ, "OMP_THREAD_LIMIT": "1"})
        out.append(done.stdout.decode("utf-8", "replace"))
    return "\n\n".join(out), time.perf_counter() - t0, _cpu() - c0


def run_ocrmypdf(scan: Path, out: Path) -> tuple[str, float, float]:
    """Run ocrmypdf on ``scan`` into ``out``: ("" or the error, wall s, CPU s)."""
    exe = peers.PEERS_DIR / "ocrmypdf" / "bin" / "ocrmypdf"
    t0, c0 = time.perf_counter(), _cpu()
    try:
        done = subprocess.run([str(exe), "-l", "eng", "--rotate-pages", "--deskew",
                               "--output-type", "pdf", "--optimize", "0", "--jobs", "2",
                               "--quiet", str(scan), str(out)],
                              capture_output=True, timeout=900, check=False)
        error = "" if done.returncode == 0 else \
            done.stderr.decode("utf-8", "replace").strip()[-160:] or f"exit {done.returncode}"
    except (OSError, subprocess.SubprocessError) as exc:
        error = str(exc)[:160]
    return error, time.perf_counter() - t0, _cpu() - c0


def _words(markdown: str) -> list[str]:
    return normalise(markdown.replace("|", " ")).split()


def _recall(produced: list[str], expected: list[str]) -> float:
    got, want = Counter(produced), Counter(expected)
    return sum((got & want).values()) / max(1, sum(want.values()))


def _order(produced: list[str], expected: list[str]) -> float:
    return difflib.SequenceMatcher(None, produced, expected, autojunk=False).ratio()


def _macro(score: Score, categories: tuple[str, ...]) -> float | None:
    f1s = [score.tallies[c].f1 for c in categories]
    known = [x for x in f1s if x is not None]
    return statistics.fmean(known) if known else None


def run(quick: bool = False) -> None:
    """Build the scanned set, read it with ours and the peers, print the tables."""
    print(f"\n## OCR ({machine()}; load average {os.getloadavg()[0]:.1f} at the start)")
    paths = [p for p in DOCS + ([] if quick else LONG) if p.is_file()]
    installed = {t: peers._install(t) for t in ("ocrmypdf", *OCRMYPDF_THEN)}
    scores = {t: Score(categories=PDF_CATEGORIES) for t in TOOLS}
    wall = dict.fromkeys(TOOLS, 0.0)
    cpu = dict.fromkeys(TOOLS, 0.0)
    problems: dict[str, str] = {}
    texts: dict[str, dict[Path, str]] = {t: {} for t in TOOLS}
    pages: dict[Path, int] = {}
    expected: dict[Path, str] = {}
    confidence: dict[Path, str] = {}
    scans: list[Doc] = []
    with tempfile.TemporaryDirectory() as tmpdir:
        tmp = Path(tmpdir)
        ocred: dict[Path, Path] = {}
        for path in paths:
            data = path.read_bytes()
            images = scan_pages(data, 200.0, turn={1: 90})
            scan = image_only_pdf(images, 200.0)
            scan_path = tmp / f"{path.parent.name}-{path.stem}.scan.pdf"
            scan_path.write_bytes(scan)
            scans.append(Doc(scan_path, "scan", data=scan, pages=len(images)))
            pages[path] = len(images)
            born, _, t_born, c_born = _markdown(data)
            ours, warnings, t_ours, c_ours = _markdown(scan)
            plain, t_plain, c_plain = _tesseract_text(images, tmp)
            docx = path.with_suffix(".docx")
            expected[path] = _markdown(docx.read_bytes())[0] if docx.is_file() else born
            for tool, text, t, c in ((BORN, born, t_born, c_born), (OURS, ours, t_ours, c_ours),
                                     (PLAIN, plain, t_plain, c_plain)):
                texts[tool][path] = text
                wall[tool] += t
                cpu[tool] += c
            conf = [w for w in warnings if w.startswith("OCR read")]
            confidence[path] = conf[0].split("(")[-1].rstrip(")") if conf else "-"
            if installed["ocrmypdf"] == "ok":
                out = tmp / f"{scan_path.stem}.ocrmypdf.pdf"
                error, t, c = run_ocrmypdf(scan_path, out)
                if error:
                    problems["ocrmypdf"] = error
                else:
                    ocred[path] = out
                for reader in OCRMYPDF_THEN:
                    wall[f"scan: ocrmypdf + {reader}"] += t
                    cpu[f"scan: ocrmypdf + {reader}"] += c
            else:
                problems["ocrmypdf"] = installed["ocrmypdf"]
        for reader in OCRMYPDF_THEN:
            tool = f"scan: ocrmypdf + {reader}"
            if installed[reader] != "ok" or not ocred:
                problems.setdefault(tool, installed[reader] if installed[reader] != "ok"
                                    else "no ocrmypdf output")
                continue
            got = peers.run_peer(reader, list(ocred.values()), 1, tmp)
            if "error" in got:
                problems[tool] = str(got["error"])[:160]
                continue
            for path, out in ocred.items():
                doc = got["docs"][str(out)]
                wall[tool] += sum(doc["seconds"])
                cpu[tool] += sum(doc["cpu"])  # the conversion itself, as for the others
                texts[tool][path] = doc["markdown"] or ""
                if doc["error"]:
                    problems[tool] = doc["error"][:160]
        _report(paths, pages, texts, expected, confidence, scores, wall, cpu, problems)
        total = sum(pages.values())
        results, problem = time_http(scans, 1, tmp)
        if not results:
            print(f"\nOCR HTTP throughput: not measured ({problem})")
            return
        http_rows = []
        for r in results:
            done = total * len(r.latencies) / len(scans)
            http_rows.append([r.clients, len(r.latencies), round(done),
                              fmt(done / r.seconds, 2), fmt(r.cpu / done, 2),
                              fmt(2 * done / r.cpu if r.cpu else None, 2),
                              fmt(max(r.latencies), 1), r.errors])
        table(f"OCR through HTTP POST /api/convert (the scans above, {os.cpu_count()} cores, "
              f"{total} pages a pass, pages spread over the pool; load average "
              f"{os.getloadavg()[0]:.1f} at the end; the issue asks >= 1 page/s at 200 dpi on "
              "2 cores)",
              ["clients", "requests", "pages", "pages/s", "service CPU s/page",
               "2 cores / CPU s/page", "slowest request s", "errors"],
              http_rows)


def _report(paths: list[Path], pages: dict[Path, int], texts: dict[str, dict[Path, str]],
            expected: dict[Path, str], confidence: dict[Path, str],
            scores: dict[str, Score], wall: dict[str, float], cpu: dict[str, float],
            problems: dict[str, str]) -> None:
    """The per-document and per-tool tables."""
    rows: list[list[object]] = []
    for path in paths:
        want = _words(texts[BORN][path])
        for tool in TOOLS:
            if path not in texts[tool]:
                continue
            text = texts[tool][path]
            scores[tool].add_elements(elements(text), elements(expected[path]))
            if tool == BORN:
                continue
            got = _words(text)
            rows.append([f"{path.parent.name}/{path.name}", pages[path], tool,
                         fmt(_recall(got, want), 3), fmt(_order(got, want), 3),
                         confidence[path] if tool == OURS else "-"])
    table("OCR: words against the born-digital reading (200 dpi scans, 0.6 degree skew, "
          "speckles, page 2 sideways)",
          ["document", "pages", "tool", "word recall", "reading order", "confidence"], rows)
    total = sum(pages.values())
    born_f1 = _macro(scores[BORN], STRUCTURE) or 0.0
    f1_rows = []
    for tool in TOOLS:
        done = sum(pages[p] for p in texts[tool])
        if not done:
            f1_rows.append([tool, *(["-"] * (len(PDF_CATEGORIES) + 5)),
                            f"unavailable: {problems.get(tool) or problems.get('ocrmypdf')}"])
            continue
        score = scores[tool]
        macro = _macro(score, STRUCTURE)
        f1_rows.append([tool, *(fmt(score.tallies[c].f1) for c in PDF_CATEGORIES),
                         fmt(macro), fmt(macro / born_f1 if macro and born_f1 else None),
                         fmt(_macro(score, PDF_CATEGORIES)), fmt(cpu[tool] / done, 2),
                         fmt(done / wall[tool] if wall[tool] else None, 2),
                         problems.get(tool, "")])
    table(f"OCR: structure F1 per category ({len(paths)} documents, {total} pages; the issue "
          "asks a scan/born-digital structure ratio >= 0.85). CPU s/page: all processes; "
          "pages/s: wall time, one document at a time",
          ["tool", *PDF_CATEGORIES, "structure macro F1", "ratio to born-digital",
           "all macro F1", "CPU s/page", "pages/s", "note"], f1_rows)


