"""Word recall on slides written by others (issue 32, item 6): PPT, PPTX and ODP files of
``../shared/corpus/realworld-office/``.

The companion of :mod:`bench.office_recall` (the other office kinds), with the same words,
recall, held-out split and ``KNOWN.tsv``. Our engine converts each file in process
(``convert_document(data, "markdown")``, speaker notes included as by default) and its words
are scored against an extraction that owes nothing to our readers:

- PPTX: python-pptx, every shape of every slide (groups opened, table cells, placeholders
  of every kind, footers and dates too) and the slide's speaker notes;
- ODP: the paragraphs of the ODF ``content.xml`` (slides and speaker notes), each one's
  spans joined as set (``S`` + ``mall`` is one word);
- PPT: the ``content.xml`` text of LibreOffice's ODP export (made once per file content,
  kept in ``$BENCH_CACHE``): independent of our PPTX reading, not of LibreOffice's PPT
  import, which no Python package here replaces (``catppt`` reads less of most decks and
  repeats others; it is used only where LibreOffice is missing).

A failure scores 0; a refusal of a file listed in ``KNOWN.tsv`` is not a failure.
``--words`` prints, per file below 0.97, the reference's words our reading lacks.
"""

from __future__ import annotations

import io
import shutil
import subprocess
import zipfile
from collections import Counter
from collections.abc import Callable, Iterator
from typing import Any

from bench.common import table
from bench.office_recall import (
    CORPUS,
    Result,
    _known,
    held_out,
    libreoffice_outputs,
    read_one,
    recall_table,
)

KINDS = ("ppt", "pptx", "odp")
_TEXT = "urn:oasis:names:tc:opendocument:xmlns:text:1.0"


def _shape_texts(shapes: Any) -> Iterator[str]:
    """The text of python-pptx shapes: text frames, table cells, groups' members."""
    for shape in shapes:
        if getattr(shape, "shape_type", None) is not None and hasattr(shape, "shapes"):
            yield from _shape_texts(shape.shapes)  # a group
        if getattr(shape, "has_text_frame", False) and shape.has_text_frame:
            yield shape.text_frame.text
        if getattr(shape, "has_table", False) and shape.has_table:
            yield from (cell.text for row in shape.table.rows for cell in row.cells)


def _ref_pptx(data: bytes) -> str:
    from pptx import Presentation

    texts: list[str] = []
    for slide in Presentation(io.BytesIO(data)).slides:
        texts.extend(_shape_texts(slide.shapes))
        if slide.has_notes_slide and slide.notes_slide.notes_text_frame is not None:
            texts.append(slide.notes_slide.notes_text_frame.text)
    return "\n".join(texts)


def _ref_ppt(data: bytes) -> str:
    """LibreOffice's ODP of the file, its ``content.xml`` text; ``catppt`` where LibreOffice
    is missing (it repeats some decks' text and names the master, "Default Design")."""
    catppt = shutil.which("catppt")
    if catppt and not (shutil.which("soffice") or shutil.which("libreoffice")):
        done = subprocess.run(
            [catppt, "-dutf-8", "/dev/stdin"],
            input=data,
            capture_output=True,
            timeout=60,
            check=False,
        )
        return done.stdout.decode("utf-8", "replace")
    return _ref_odp(_libreoffice_odp(data))


def _libreoffice_odp(data: bytes) -> bytes:
    """LibreOffice's ODP of a PPT (cached by content; empty when it wrote none)."""
    return next(iter(libreoffice_outputs(data, "ppt", "odp")), b"")


def _paragraph_text(el: Any) -> Iterator[str]:
    """The text of one ODF paragraph, spans joined as they are set (no space between
    ``<text:span>S</text:span>mall``), spaces and breaks as spaces, nested paragraphs
    (a frame inside a paragraph) left to their own turn."""
    yield el.text or ""
    for child in el:
        name = child.tag.rsplit("}", 1)[-1] if isinstance(child.tag, str) else ""
        if name in ("s", "tab", "line-break"):
            yield " " * int(child.get(f"{{{_TEXT}}}c", "1") if name == "s" else 1)
        elif name not in ("p", "h") and name:
            yield from _paragraph_text(child)
        yield child.tail or ""


def _ref_odp(data: bytes) -> str:
    """The paragraphs of an ODF ``content.xml`` body (slides and speaker notes), one a line."""
    from lxml import etree

    with zipfile.ZipFile(io.BytesIO(data)) as zf:
        root = etree.fromstring(
            zf.read("content.xml"), etree.XMLParser(resolve_entities=False, no_network=True)
        )
    paragraphs = root.iter(f"{{{_TEXT}}}p", f"{{{_TEXT}}}h")
    return "\n".join("".join(_paragraph_text(p)) for p in paragraphs)


REFERENCES: dict[str, Callable[[bytes], str]] = {
    "ppt": _ref_ppt,
    "pptx": _ref_pptx,
    "odp": _ref_odp,
}


def run(kinds: tuple[str, ...] = KINDS, show_words: bool = False) -> list[Result]:
    """Read every slide file, print recall per format (tuning, held-out) and the problems."""
    if not CORPUS.exists():
        print(f"\n## Slide word recall (issue 32)\n\n{CORPUS} is absent: not measured.")
        return []
    known = _known()
    results: list[Result] = []
    lacking: dict[str, Counter[str]] = {}
    for kind in kinds:
        for path in sorted((CORPUS / kind).glob("*")) if (CORPUS / kind).exists() else []:
            result, missing = read_one(kind, path, known, REFERENCES)
            results.append(result)
            lacking[f"{kind}/{path.name}"] = missing
    recall_table("Slide word recall", results, kinds)
    problems = [
        r
        for r in results
        if (r.error and not r.known) or r.server_error or (r.recall is not None and r.recall < 0.97)
    ]
    if problems:
        table(
            "Files failed or below 0.97",
            ["file", "part", "error", "recall"],
            [
                [
                    f"{r.kind}/{r.name}"[:70],
                    "held-out" if held_out(r.name) else "tuning",
                    r.error or "-",
                    "-" if r.recall is None else f"{r.recall:.3f}",
                ]
                for r in problems
            ],
        )
    if show_words:
        for r in problems:
            missing = lacking[f"{r.kind}/{r.name}"]
            print(f"{r.kind}/{r.name}: " + " ".join(f"{w}x{n}" for w, n in missing.most_common(25)))
    return results


if __name__ == "__main__":
    import sys

    run(tuple(a for a in sys.argv[1:] if a in KINDS) or KINDS, "--words" in sys.argv)
