"""Word recall on office files written by others (issue 32, item 6): ``realworld-office``.

For every file of ``../shared/corpus/realworld-office/`` of the kinds XLSX, XLS, ODT, ODS,
DOC, RTF, EPUB, HTML and CSV (slides are measured elsewhere), our engine converts it in
process (``convert_document(data, "markdown")``) and its words are scored against an
extraction that owes nothing to our readers:

- XLSX: openpyxl, every sheet (hidden ones too), the values the file saved;
- XLS: ``xlrd`` when installed, else LibreOffice's own CSV export of every sheet;
- ODT/ODS: the text of the ODF ``content.xml`` body, without what no reader shows as text
  (comments, which are left out by default as for DOCX, tracked deletions, shapes' alt text,
  index templates);
- DOC: ``antiword`` when installed, else LibreOffice's text export; RTF: LibreOffice's text;
- EPUB: the text of the spine's documents (lxml); HTML: lxml's ``text_content`` of the page's
  body without scripts and styles; CSV: the raw text.

A word is a run of letters and digits holding a letter (a CJK character is a word of its
own), lower-cased; numbers alone are left out (a number's written form depends on the
number format, which each tool shows its own way), and so are spreadsheet error values;
emphasis marks are taken out of our Markdown first (``Normal**8-Bold`` is one word where
the style changes inside it). Recall counts words with repeats:
``sum(min(ours, theirs)) / sum(theirs)``. A file whose reference holds no word is not
scored (broken and encrypted files, listed in ``KNOWN.tsv``, mostly end there). A failure
scores 0; a refusal (4xxxx) of a file in ``KNOWN.tsv`` is neither a failure nor scored
(column ``known``). Anything but a user error (4xxxx) is reported as 5xx-like.

Files are split by a hash of their name: a third held out (``held-out``), the rest for
tuning; both columns are printed, and a change counts only if both move.

References that need LibreOffice are made once per file content and kept in
``$BENCH_CACHE`` (default ``/tmp/office-recall-refs``).
"""

from __future__ import annotations

import hashlib
import importlib
import io
import os
import re
import shutil
import statistics
import subprocess
import tempfile
import time
import zipfile
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench.common import table

CORPUS = (
    Path(
        os.environ.get("BENCH_CORPUS") or Path(__file__).resolve().parents[2] / "shared" / "corpus"
    )
    / "realworld-office"
)
CACHE = Path(os.environ.get("BENCH_CACHE", "/tmp/office-recall-refs"))
KINDS = ("xlsx", "xls", "odt", "ods", "doc", "rtf", "epub", "html", "csv")
_WORD = re.compile(r"[\u3040-\u30ff\u3400-\u9fff\uf900-\ufaff\uac00-\ud7af]|[^\W_]+")
_SHEET_ERROR = re.compile(r"#(?:NAME\?|MACRO\?|VALUE!|REF!|DIV/0!|N/A|NUM!|NULL!|GETTING_DATA)")
_INLINE_MARKS = re.compile(r"</?(?:u|em|strong|b|i|s|del|ins|mark|sup|sub)>|\*+|~~")
_XML_DECL = re.compile(r"^\s*<\?xml[^>]*\?>")
_HTML_BREAKS = (
    "br",
    "p",
    "div",
    "td",
    "th",
    "tr",
    "li",
    "dt",
    "dd",
    "h1",
    "h2",
    "h3",
    "h4",
    "h5",
    "h6",
    "table",
    "section",
    "article",
    "header",
    "footer",
    "nav",
    "blockquote",
    "pre",
    "ul",
    "ol",
    "dl",
    "hr",
    "figure",
    "figcaption",
    "option",
)
_ODF_OFFICE = "urn:oasis:names:tc:opendocument:xmlns:office:1.0"
_ODF_TEXT_NS = "urn:oasis:names:tc:opendocument:xmlns:text:1.0"
_ODF_TABLE = "urn:oasis:names:tc:opendocument:xmlns:table:1.0"
_SVG = "urn:oasis:names:tc:opendocument:xmlns:svg-compatible:1.0"
# parts of an ODF body no reader shows as text: comments (left out by default, as for DOCX),
# tracked changes (deletions and who made them), shapes' alt text, index templates,
# declarations and forms
_ODF_HIDDEN = (
    f"{{{_ODF_OFFICE}}}annotation",
    f"{{{_ODF_TEXT_NS}}}tracked-changes",
    f"{{{_SVG}}}title",
    f"{{{_SVG}}}desc",
    f"{{{_ODF_TEXT_NS}}}bibliography-source",
    f"{{{_ODF_TEXT_NS}}}table-of-content-source",
    f"{{{_ODF_TEXT_NS}}}alphabetical-index-source",
    f"{{{_ODF_TEXT_NS}}}illustration-index-source",
    f"{{{_ODF_TEXT_NS}}}table-index-source",
    f"{{{_ODF_TEXT_NS}}}object-index-source",
    f"{{{_ODF_TEXT_NS}}}user-index-source",
    f"{{{_ODF_TEXT_NS}}}sequence-decls",
    f"{{{_ODF_TEXT_NS}}}variable-decls",
    f"{{{_ODF_TEXT_NS}}}user-field-decls",
    f"{{{_ODF_OFFICE}}}forms",
)
_ODF_BREAKS = (
    f"{{{_ODF_TEXT_NS}}}p",
    f"{{{_ODF_TEXT_NS}}}h",
    f"{{{_ODF_TEXT_NS}}}s",
    f"{{{_ODF_TEXT_NS}}}tab",
    f"{{{_ODF_TEXT_NS}}}line-break",
    f"{{{_ODF_TEXT_NS}}}note-citation",
    f"{{{_ODF_TABLE}}}table-cell",
)


def words(text: str) -> Counter[str]:
    """The words of ``text`` with their counts (see the module's docstring); a spreadsheet's
    error values (``#NAME?``, ``#MACRO?``: each tool names an error its own way) are none."""
    text = _SHEET_ERROR.sub(" ", text)
    return Counter(w for w in _WORD.findall(text.lower()) if any(c.isalpha() for c in w))


def markdown_words(markdown: str) -> Counter[str]:
    """The words of our Markdown: emphasis marks taken out first, since they sit inside a
    word where a run's style changes (``Normal**8-Bold``) and would split it in two."""
    return words(_INLINE_MARKS.sub("", markdown))


def recall(ours: Counter[str], theirs: Counter[str]) -> float:
    """Share of the reference's words (with repeats) found in ours."""
    total = sum(theirs.values())
    return sum(min(n, ours[w]) for w, n in theirs.items()) / total if total else 1.0


def held_out(name: str) -> bool:
    """Whether a file is in the held-out third (by a hash of its name, never its content)."""
    return hashlib.sha256(name.encode()).digest()[0] % 3 == 0


# ------------------------------------------------------------------ reference extractions
def libreoffice_outputs(data: bytes, suffix: str, filter_name: str) -> list[bytes]:
    """The files LibreOffice writes converting ``data`` (an ``.suffix`` file) through
    ``filter_name``, in name order; cached by content. A private profile, so it never meets
    another instance's."""
    key = hashlib.sha256(data + filter_name.encode()).hexdigest()
    cached = CACHE / key
    if cached.is_dir():
        return [p.read_bytes() for p in sorted(cached.iterdir())]
    soffice = shutil.which("soffice") or shutil.which("libreoffice")
    if soffice is None:
        raise RuntimeError("LibreOffice is not installed")
    with tempfile.TemporaryDirectory(prefix="office-recall-") as tmp:
        source = Path(tmp) / f"input.{suffix}"
        source.write_bytes(data)
        out = Path(tmp) / "out"
        subprocess.run(
            [
                soffice,
                "--headless",
                "--norestore",
                "--nolockcheck",
                f"-env:UserInstallation=file://{tmp}/profile",
                "--convert-to",
                filter_name,
                "--outdir",
                str(out),
                str(source),
            ],
            capture_output=True,
            timeout=180,
            check=False,
        )
        parts = sorted(out.glob("*")) if out.exists() else []
        cached.mkdir(parents=True, exist_ok=True)
        for number, part in enumerate(parts):
            shutil.copyfile(part, cached / f"{number:04d}")
        return [part.read_bytes() for part in parts]


def _libreoffice(data: bytes, suffix: str, filter_name: str) -> str:
    """LibreOffice's text export of ``data`` through ``filter_name``, every output joined."""
    return "\n".join(part.decode("utf-8", "replace")
                     for part in libreoffice_outputs(data, suffix, filter_name))


def _ref_xlsx(data: bytes) -> str:
    import openpyxl

    # not read-only: that mode trusts each sheet's declared size, which writers get wrong
    wb = openpyxl.load_workbook(io.BytesIO(data), data_only=True)
    return "\n".join(
        str(v)
        for ws in wb.worksheets
        for row in ws.iter_rows(values_only=True)
        for v in row
        if v is not None
    )


def _ref_xls(data: bytes) -> str:
    try:
        xlrd = importlib.import_module("xlrd")
    except ImportError:  # LibreOffice's CSV of every sheet (-1), values as shown
        return _libreoffice(
            data,
            "xls",
            "csv:Text - txt - csv (StarCalc):44,34,76,1,,0,false,true,true,false,false,-1",
        )
    book = xlrd.open_workbook(file_contents=data)
    return "\n".join(
        str(sheet.cell_value(r, c))
        for sheet in book.sheets()
        for r in range(sheet.nrows)
        for c in range(sheet.ncols)
    )


def _drop_keeping_tail(el: Any) -> None:
    """Remove ``el`` from its tree, keeping the text that follows it."""
    parent = el.getparent()
    if parent is None:
        return
    if el.tail:
        before = el.getprevious()
        if before is not None:
            before.tail = (before.tail or "") + el.tail
        else:
            parent.text = (parent.text or "") + el.tail
    parent.remove(el)


def _ref_odf(data: bytes) -> str:
    from lxml import etree

    with zipfile.ZipFile(io.BytesIO(data)) as zf:
        root = etree.fromstring(
            zf.read("content.xml"), etree.XMLParser(resolve_entities=False, no_network=True)
        )
    body = root.find(f"{{{_ODF_OFFICE}}}body")
    body = body if body is not None else root
    for el in list(body.iter(*_ODF_HIDDEN)):  # not shown: metadata, templates, deletions
        _drop_keeping_tail(el)
    for el in body.iter(*_ODF_BREAKS):  # a paragraph, cell, note or break ends a word
        el.text = "\n" + (el.text or "")
        el.tail = "\n" + (el.tail or "")
    return "".join(body.itertext())


def _ref_doc(data: bytes) -> str:
    antiword = shutil.which("antiword")
    if antiword:
        done = subprocess.run(
            [antiword, "-w", "0", "-"], input=data, capture_output=True, timeout=60, check=False
        )
        if done.returncode == 0:
            return done.stdout.decode("utf-8", "replace")
    return _libreoffice(data, "doc", "txt:Text (encoded):UTF8")


def _html_text(data: bytes) -> str:
    import lxml.html

    try:  # bytes that are UTF-8 are read so, whatever the page declares
        text = _XML_DECL.sub("", data.decode("utf-8").lstrip("\ufeff"), count=1)
        root = lxml.html.document_fromstring(text)
    except UnicodeDecodeError:
        root = lxml.html.document_fromstring(data)
    for bad in root.xpath("//script|//style|//noscript|//template"):
        bad.drop_tree()
    for el in root.iter(*_HTML_BREAKS):  # a line break or block ends a word
        el.tail = "\n" + (el.tail or "")
    body = root.find("body")  # the page's text; its <title> is metadata
    return str((body if body is not None else root).text_content())


def _ref_epub(data: bytes) -> str:
    from lxml import etree

    parser = etree.XMLParser(resolve_entities=False, no_network=True, recover=True)
    with zipfile.ZipFile(io.BytesIO(data)) as zf:
        container = etree.fromstring(zf.read("META-INF/container.xml"), parser)
        opf_path = container.xpath("//*[local-name()='rootfile']/@full-path")[0]
        opf = etree.fromstring(zf.read(opf_path), parser)
        base = opf_path.rsplit("/", 1)[0] + "/" if "/" in opf_path else ""
        hrefs = {i.get("id"): i.get("href") for i in opf.xpath("//*[local-name()='item']")}
        texts = []
        for idref in opf.xpath("//*[local-name()='itemref']/@idref"):
            href = hrefs.get(idref)
            if href:
                from urllib.parse import unquote

                texts.append(_html_text(zf.read(base + unquote(href))))
        return "\n".join(texts)


def _ref_csv(data: bytes) -> str:
    for encoding in ("utf-8-sig", "cp1252", "latin-1"):
        try:
            return data.decode(encoding)
        except UnicodeDecodeError:
            continue
    return ""


REFERENCES: dict[str, Callable[[bytes], str]] = {
    "xlsx": _ref_xlsx,
    "xls": _ref_xls,
    "odt": _ref_odf,
    "ods": _ref_odf,
    "doc": _ref_doc,
    "rtf": lambda d: _libreoffice(d, "rtf", "txt:Text (encoded):UTF8"),
    "epub": _ref_epub,
    "html": _html_text,
    "csv": _ref_csv,
}


# ------------------------------------------------------------------------------ the run
@dataclass
class Result:
    """One file's reading."""

    kind: str
    name: str
    ref_words: int
    recall: float | None  # None: not scored (the reference has no word)
    error: str = ""  # "<code> <message>" of a failure
    server_error: bool = False  # anything but a user error (4xxxx)
    known: bool = False  # listed in KNOWN.tsv (broken, encrypted, unsupported on purpose)
    seconds: float = 0.0
    limited: bool = False  # a documented limit (the cell limit, SHEET_MAX_CELLS) cut it


def _known() -> set[str]:
    path = CORPUS / "KNOWN.tsv"
    if not path.exists():
        return set()
    return {
        line.split("\t", 1)[0]
        for line in path.read_text().splitlines()
        if line and not line.startswith("#")
    }


def read_one(kind: str, path: Path, known: set[str],
             references: dict[str, Callable[[bytes], str]] | None = None
             ) -> tuple[Result, Counter[str]]:
    """Our reading of one file scored against its reference (``references``, by kind:
    :data:`REFERENCES` unless given), and the reference's words our reading lacks."""
    from render_pool.engine.jobs import convert_document
    from render_pool.errors import ConversionError

    data = path.read_bytes()
    rel = f"{kind}/{path.name}"
    try:
        theirs = words((references or REFERENCES)[kind](data))
    except Exception:  # no reference: the file is not scored
        theirs = Counter()
    result = Result(kind, path.name, sum(theirs.values()), None, known=rel in known)
    t0 = time.perf_counter()
    ours: Counter[str] | None
    try:
        converted = convert_document(data, "markdown")
        ours = markdown_words(converted.content)
        result.limited = any("limit" in w for w in converted.warnings)
    except ConversionError as exc:
        result.error = f"{exc.code} {exc.message}"[:160]
        result.server_error = exc.code >= 50000
        ours = None
    except Exception as exc:  # a crash is a data point
        result.error = f"crash {type(exc).__name__}: {exc}"[:160]
        result.server_error = True
        ours = None
    result.seconds = time.perf_counter() - t0
    refused_as_known = result.known and result.error[:1] == "4"
    if result.ref_words and not refused_as_known:  # a clear refusal of a KNOWN file is fine
        result.recall = recall(ours, theirs) if ours is not None else 0.0
    return result, theirs - (ours or Counter())


def _mean(values: list[float]) -> str:
    return f"{statistics.fmean(values):.3f}" if values else "-"


def recall_table(title: str, results: list[Result], kinds: tuple[str, ...]) -> None:
    """Print recall per kind over the tuning and held-out files, failures and 5xx answers."""
    load = Path("/proc/loadavg").read_text().split()[:3] if Path("/proc/loadavg").exists() else []
    rows: list[list[object]] = []
    for kind in kinds:
        mine = [r for r in results if r.kind == kind]
        tune = [r.recall for r in mine if r.recall is not None and not held_out(r.name)]
        held = [r.recall for r in mine if r.recall is not None and held_out(r.name)]
        rows.append([kind.upper(), len(mine), len(tune) + len(held), _mean(tune + held),
                     _mean(tune), _mean(held), sum(1 for r in mine if r.error and not r.known),
                     sum(1 for r in mine if r.error and r.known),
                     sum(1 for r in mine if r.server_error)])
    table(f"{title}, realworld-office (failures count 0; load {' '.join(load)})",
          ["kind", "files", "scored", "recall", "tuning", "held-out", "failed", "known", "5xx"],
          rows)


def run(quick: bool = False, kinds: tuple[str, ...] = KINDS) -> list[Result]:
    """Read every file (``quick``: every third), print recall per format and the failures."""
    if not CORPUS.exists():
        print(f"\n## Office word recall (issue 32)\n\n{CORPUS} is absent: not measured.")
        return []
    known = _known()
    results: list[Result] = []
    for kind in kinds:
        paths = sorted((CORPUS / kind).glob("*")) if (CORPUS / kind).exists() else []
        if quick:
            paths = paths[::3]
        results.extend(read_one(kind, p, known)[0] for p in paths)
    recall_table("Office word recall", results, kinds)
    problems: list[list[object]] = [
        [
            f"{r.kind}/{r.name}"[:70],
            r.error[:90] or ("cut by a limit (warned)" if r.limited else "-"),
            "-" if r.recall is None else f"{r.recall:.3f}",
        ]
        for r in results
        if (r.error and not r.known) or r.server_error or (r.recall is not None and r.recall < 0.97)
    ]
    if problems:
        table("Files failed or below 0.97", ["file", "error", "recall"], problems)
    return results


if __name__ == "__main__":
    import sys

    run("--quick" in sys.argv, tuple(a for a in sys.argv[1:] if a in KINDS) or KINDS)
