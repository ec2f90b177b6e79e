"""Tesseract 5 through its command line: a page image in, words with boxes out.

Why the CLI and not a binding: Debian's ``tesseract-ocr`` and its language packs are the
whole install (no wheel to build against libtesseract), a run is a separate process that a
time limit can kill outright, and several pages can be recognised at once on several cores
without the GIL. Each run gets ``OMP_THREAD_LIMIT=1`` so parallel pages do not oversubscribe
the cores.

A page is recognised as hOCR, which gives per line the baseline and Tesseract's size
estimate (``x_size``) and per word its box and confidence. Rotation (0/90/180/270) is
detected with Tesseract's orientation script detection (``--psm 0``) only when the upright
reading is poor, so upright pages pay nothing for it. Before recognition the page is
deskewed (projection profile) and cleaned (:mod:`render_pool.ocr.clean`: specks, shading
and ruling lines removed; the rules are returned for table grids).
"""

from __future__ import annotations

import io
import os
import re
import subprocess
import time
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from functools import lru_cache

import numpy as np
from PIL import Image

from render_pool.errors import ConversionError
from render_pool.ocr.clean import Segment, bullet_left_of, clean_page, skew_angle

TESSERACT = "tesseract"
MIN_WORD_CONFIDENCE = 10  # below this a "word" is mostly speckle or a picture read as text
_GOOD_CONFIDENCE = 70  # an upright reading at least this confident skips rotation detection
_MIN_WORDS = 8
_NS = "{http://www.w3.org/1999/xhtml}"
_LINE_CLASSES = {"ocr_line", "ocr_header", "ocr_caption", "ocr_textfloat"}
_BBOX = re.compile(r"bbox (-?\d+) (-?\d+) (-?\d+) (-?\d+)")
_BASELINE = re.compile(r"baseline (-?[\d.]+) (-?\d+)")
_XSIZE = re.compile(r"x_size ([\d.]+)")
_WCONF = re.compile(r"x_wconf (\d+)")
_ROTATE = re.compile(r"Rotate: (\d+)")
_ORIENT_CONF = re.compile(r"Orientation confidence: ([\d.]+)")


@dataclass(slots=True)
class OcrWord:
    """A recognised word: text, box in image pixels (top-down) and confidence 0-100."""

    text: str
    x0: int
    top: int
    x1: int
    bottom: int
    confidence: float


@dataclass(slots=True)
class OcrLine:
    """A text line: its words left to right, the baseline (pixels from the top, at the
    line's left edge, skew removed) and the line's size estimate in pixels (about an em)."""

    words: list[OcrWord]
    baseline: float
    size: float
    x0: int
    x1: int


@dataclass(slots=True)
class OcrPage:
    """One recognised image: lines in Tesseract's reading order (blocks, then lines), the
    image size after rotation, the rotation applied (degrees clockwise) and the mean word
    confidence (0 when no word was found)."""

    lines: list[OcrLine] = field(default_factory=list)
    width: int = 0
    height: int = 0
    rotation: int = 0
    skew: float = 0.0  # degrees the image was turned counter-clockwise to level its lines
    rules: list[Segment] = field(default_factory=list)  # ruling lines found (pixels)

    @property
    def words(self) -> list[OcrWord]:
        return [w for line in self.lines for w in line.words]

    @property
    def confidence(self) -> float:
        words = self.words
        return sum(w.confidence for w in words) / len(words) if words else 0.0


@lru_cache(maxsize=1)
def available_languages() -> frozenset[str]:
    """The language packs Tesseract has installed (empty when Tesseract is missing)."""
    try:
        out = subprocess.run([TESSERACT, "--list-langs"], capture_output=True, timeout=30,
                             check=False).stdout.decode("utf-8", "replace")
    except (OSError, subprocess.TimeoutExpired):
        return frozenset()
    return frozenset(x.strip() for x in out.splitlines()[1:] if x.strip() and x != "osd")


def _languages(wanted: str) -> str:
    """``wanted`` ("eng+deu") restricted to installed packs; "eng" when none is left."""
    have = available_languages()
    keep = [x for x in wanted.replace(",", "+").split("+") if x.strip() in have]
    if not have:
        raise ConversionError("OCR is not available: the tesseract command is not installed")
    return "+".join(dict.fromkeys(x.strip() for x in keep)) or (
        "eng" if "eng" in have else sorted(have)[0])


def _run(image: Image.Image, args: list[str], timeout: float) -> str:
    """Run tesseract on ``image`` (fed as PGM on stdin) and return its standard output."""
    buf = io.BytesIO()
    image.save(buf, format="PPM")
    env = {**os.environ, "OMP_THREAD_LIMIT": "1"}
    try:
        done = subprocess.run([TESSERACT, "stdin", "stdout", *args], input=buf.getvalue(),
                              capture_output=True, timeout=timeout, env=env, check=False)
    except subprocess.TimeoutExpired:
        raise TimeoutError(f"OCR took longer than {timeout:.0f} s") from None
    return done.stdout.decode("utf-8", "replace")


def _parse_hocr(text: str) -> list[OcrLine]:
    """Lines with their words from Tesseract's hOCR output."""
    if not text.strip():
        return []
    root = ET.fromstring(text)  # noqa: S314 - our own tesseract's output, entities escaped
    lines: list[OcrLine] = []
    for span in root.iter(f"{_NS}span"):
        if span.get("class") not in _LINE_CLASSES:
            continue
        title = span.get("title", "")
        box = _BBOX.search(title)
        if box is None:
            continue
        lx0, _, lx1, lbottom = map(int, box.groups())
        base = _BASELINE.search(title)
        slope, offset = (float(base.group(1)), int(base.group(2))) if base else (0.0, 0)
        size_m = _XSIZE.search(title)
        words: list[OcrWord] = []
        for w in span.iter(f"{_NS}span"):
            if w.get("class") != "ocrx_word":
                continue
            wtitle = w.get("title", "")
            wbox = _BBOX.search(wtitle)
            conf = _WCONF.search(wtitle)
            word = "".join(w.itertext()).strip()
            if not word or wbox is None:
                continue
            confidence = float(conf.group(1)) if conf else 0.0
            if confidence < MIN_WORD_CONFIDENCE:
                continue
            x0, top, x1, bottom = map(int, wbox.groups())
            words.append(OcrWord(word, x0, top, x1, bottom, confidence))
        if not words:
            continue
        height = max(w.bottom for w in words) - min(w.top for w in words)
        size = float(size_m.group(1)) if size_m else float(height)
        # baseline at the line's middle: offset is from the box bottom at its left edge
        baseline = lbottom + offset + slope * (lx1 - lx0) / 2
        lines.append(OcrLine(words, baseline, size, lx0, lx1))
    return lines


def _rotation(image: Image.Image, timeout: float) -> int:
    """Degrees to turn ``image`` clockwise so its text stands upright (0 when unsure)."""
    small = image
    if max(image.size) > 2000:  # orientation needs no fine detail
        small = image.reduce(2)
    out = _run(small, ["--psm", "0"], timeout)
    rotate, conf = _ROTATE.search(out), _ORIENT_CONF.search(out)
    if rotate is None or conf is None or float(conf.group(1)) < 1.5:
        return 0
    return int(rotate.group(1)) % 360


def _read(image: Image.Image, args: list[str], timeout: float, rotation: int) -> OcrPage:
    """Deskew, clean and recognise one upright candidate of the page."""
    skew = skew_angle(image)
    if skew:
        image = image.rotate(skew, resample=Image.Resampling.BILINEAR, fillcolor=255)
    cleaned, rules = clean_page(image)
    lines = _parse_hocr(_run(cleaned, args, timeout))
    pixels = np.asarray(image)  # before the clean-up, which may thin a bullet away
    for line in lines:
        first = line.words[0]
        if len(first.text) == 1 and not first.text.isalnum():
            continue  # the engine read something there already
        mark = bullet_left_of(pixels, first.x0, line.baseline, line.size)
        if mark:
            side = max(2, int(line.size * 0.3))
            line.words.insert(0, OcrWord(mark, first.x0 - int(line.size * 0.9),
                                         int(line.baseline) - side, first.x0 - int(
                                             line.size * 0.9) + side, int(line.baseline), 50.0))
            line.x0 = min(line.x0, line.words[0].x0)
    return OcrPage(lines, *image.size, rotation=rotation, skew=skew, rules=rules)


def recognise(image: Image.Image, languages: str = "eng", timeout: float = 60.0) -> OcrPage:
    """Words, lines and rules of a page image; the image is turned upright first when needed.

    Raises TimeoutError when Tesseract takes longer than ``timeout`` seconds in all.
    """
    deadline = time.monotonic() + timeout
    args = ["-l", _languages(languages), "--psm", "3", "hocr"]
    image = image.convert("L")
    page = _read(image, args, timeout, 0)
    words = page.words
    if len(words) >= _MIN_WORDS and page.confidence >= _GOOD_CONFIDENCE:
        return page
    left = deadline - time.monotonic()
    turn = _rotation(image, left) if left > 1 else 0
    left = deadline - time.monotonic()
    if not turn or left <= 1:
        return page
    again = _read(image.rotate(-turn, expand=True), args, left, turn)  # PIL turns anticlockwise
    if len(again.words) * max(again.confidence, 1) > len(words) * max(page.confidence, 1):
        return again
    return page
