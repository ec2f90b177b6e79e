"""One page's OCR reading as JSON and back, so a page recognised by one process can be read
by another (the pages of a scan shared between job consumers through Redis): plain JSON, not
pickle, since the text crosses between processes and machines through a shared store.

The reading is what ``render_pool.engine.jobs.ocr_page`` returns: the engine's
:class:`OcrPage` and the page's scale (pixels per point). Floats survive JSON exactly (Python
writes their shortest round-trip form), so a page read back lays out the same characters."""

from __future__ import annotations

from typing import Any

from render_pool.engine.ocr.tesseract import OcrLine, OcrPage, OcrWord

Reading = tuple[OcrPage, float]


def reading_to_json(reading: Reading) -> dict[str, Any]:
    """The reading as JSON-ready values (numbers made plain Python ones: the engine's may
    be numpy's)."""
    page, scale = reading
    return {
        "scale": float(scale),
        "width": int(page.width), "height": int(page.height),
        "rotation": int(page.rotation), "skew": float(page.skew),
        "rules": [[bool(h), int(p), int(s), int(e)] for h, p, s, e in page.rules],
        "lines": [{
            "baseline": float(line.baseline), "size": float(line.size),
            "x0": int(line.x0), "x1": int(line.x1),
            "words": [[w.text, int(w.x0), int(w.top), int(w.x1), int(w.bottom),
                       float(w.confidence), float(w.stroke), float(w.slant), bool(w.raised)]
                      for w in line.words],
        } for line in page.lines],
    }


def _word(value: list[Any]) -> OcrWord:
    """A word as :func:`reading_to_json` wrote it (its style measures are optional: a
    reading written before they were measured has none)."""
    text, x0, top, x1, bottom, confidence, *style = value
    stroke, slant, raised = (style + [0.0, 0.0, False][len(style):])[:3]
    return OcrWord(str(text), int(x0), int(top), int(x1), int(bottom), float(confidence),
                   float(stroke), float(slant), bool(raised))


def reading_from_json(value: dict[str, Any]) -> Reading:
    """The reading :func:`reading_to_json` wrote."""
    lines = [OcrLine([_word(w) for w in line["words"]],
                     float(line["baseline"]), float(line["size"]), int(line["x0"]),
                     int(line["x1"]))
             for line in value["lines"]]
    page = OcrPage(lines, int(value["width"]), int(value["height"]),
                   rotation=int(value["rotation"]), skew=float(value["skew"]),
                   rules=[(bool(h), int(p), int(s), int(e)) for h, p, s, e in value["rules"]])
    return page, float(value["scale"])
