"""Footnotes of a deck that keeps them on a slide of their own.

Why: a slide has no place for footnotes, so pandoc's PPTX writer numbers each note mark,
sets it as a raised digit that jumps to a closing slide, and lists the notes' texts there
as paragraphs ``1. text``, ``2. text`` (LibreOffice keeps all of it when it writes the deck
as ODP and back). Read as slides, the marks would be stray superscripts and the notes one
more slide of paragraphs. So, from the slides' structure alone: when raised digits jump to
a slide holding nothing but paragraphs numbered exactly by those digits (each number once,
each with its mark), the digits are note references, the numbered paragraphs their texts,
and that slide is not read as a slide. Anything less certain is read as it stands.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

A = "http://schemas.openxmlformats.org/drawingml/2006/main"
R = "http://schemas.openxmlformats.org/officeDocument/2006/relationships"
_A = f"{{{A}}}"
_NUMBERED = re.compile(r"^\s*(\d{1,4})[.)]\s+")
_TITLES = {"TITLE", "CENTER_TITLE", "VERTICAL_TITLE"}
_FURNITURE = {"DATE", "FOOTER", "SLIDE_NUMBER", "HEADER", "SLIDE_IMAGE"}


@dataclass
class NoteSlides:
    """The slides read as footnote texts: slide number -> mark -> the mark's paragraphs
    (``a:p`` elements, the first one starting with its number)."""

    slides: dict[int, dict[str, list[Any]]] = field(default_factory=dict)
    _numbers: dict[int, int] = field(default_factory=dict)  # id(slide part) -> number

    def note_id(self, run: Any, part: Any) -> str | None:
        """The note a run (``a:r``) of ``part`` refers to, when it is one of the marks."""
        target = _jump_target(run, part)
        if target is None:
            return None
        number = self._numbers.get(id(target))
        mark = _mark_text(run)
        if number in self.slides and mark in self.slides[number]:
            return note_key(number, mark)
        return None


def note_key(slide: int, mark: str) -> str:
    """The document's id of the note numbered ``mark`` on slide ``slide``."""
    return f"s{slide}-{mark}"


def _mark_text(run: Any) -> str | None:
    """The digits of a raised run (``a:r`` set above the baseline), or None."""
    rpr = run.find(_A + "rPr")
    if rpr is None or not rpr.get("baseline", "0").isdigit() or rpr.get("baseline") == "0":
        return None
    t = run.find(_A + "t")
    text = (t.text or "").strip() if t is not None else ""
    return text if text.isdigit() else None


def _jump_target(run: Any, part: Any) -> Any:
    """The slide part a raised digit's click jumps to, or None."""
    if _mark_text(run) is None:
        return None
    click = run.find(f"{_A}rPr/{_A}hlinkClick")
    rid = click.get(f"{{{R}}}id") if click is not None else None
    rel = part.rels.get(rid) if rid else None
    if rel is None or rel.is_external or not rel.reltype.endswith("/slide"):
        return None
    return rel.target_part


def _placeholder_type(shape: Any) -> str:
    try:
        return str(shape.placeholder_format.type).split(" ")[0].split(".")[-1]
    except (ValueError, AttributeError):
        return ""


def _numbered_paragraphs(slide: Any) -> dict[str, list[Any]] | None:
    """The slide's paragraphs grouped by their leading number, when the slide holds
    nothing else (besides its title and furniture); else None."""
    groups: dict[str, list[Any]] = {}
    current: list[Any] | None = None
    for shape in slide.shapes:
        kind = _placeholder_type(shape) if shape.is_placeholder else ""
        if kind in _TITLES or kind in _FURNITURE:
            continue
        if not getattr(shape, "has_text_frame", False) or not shape.has_text_frame:
            return None  # a table, picture or chart: not a slide of notes
        for p in shape.text_frame._txBody.iterchildren(_A + "p"):
            text = "".join(t.text or "" for t in p.iter(_A + "t"))
            if not text.strip():
                continue
            match = _NUMBERED.match(text)
            if match:
                if match.group(1) in groups:
                    return None
                current = groups[match.group(1)] = [p]
            elif current is None:
                return None
            else:
                current.append(p)  # a note's further paragraph
    return groups or None


def find_note_slides(slides: list[Any]) -> NoteSlides:
    """The slides of ``slides`` (python-pptx slides, in order) that hold footnote texts."""
    found = NoteSlides(_numbers={id(s.part): n for n, s in enumerate(slides, start=1)})
    marks: dict[int, set[str]] = {}
    for slide in slides:
        for run in slide._element.iter(_A + "r"):
            target = _jump_target(run, slide.part)
            number = found._numbers.get(id(target)) if target is not None else None
            mark = _mark_text(run)
            if number is not None and mark is not None:
                marks.setdefault(number, set()).add(mark)
    for number, wanted in marks.items():
        groups = _numbered_paragraphs(slides[number - 1])
        if groups is not None and set(groups) == wanted:
            found.slides[number] = groups
    return found
