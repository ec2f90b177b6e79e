"""Tesseract 5: a page image in, words with boxes out.

Two ways in, one result: through its C++ API in this process (``tesserocr``, when it is
installed: the recommended set-up) or through the ``tesseract`` command line (one process per
call). The API keeps each language set's engine loaded in the worker between pages and jobs:
loading ``eng+deu+fra+spa`` costs about 0.5 s of CPU, which the command line pays on every
call (with process start-up, about 1 s for those four packs, as much as recognising an English
page). Which way is the worker's configuration (``OCR_ENGINE``, handed over by
:mod:`render_pool.engine.config`), looked at on each call: tesserocr is imported on the
first page read through it, never when this module loads. Either way the language packs
come from Debian's ``tesseract-ocr-*`` packages (the ``tessdata`` folder is the configured
one, ``TESSDATA_PREFIX``, or asked of the command line), each recognition runs on one thread
(``OMP_THREAD_LIMIT=1``: parallel pages must not oversubscribe the cores) and has a time
limit.

A page is recognised as hOCR, which gives per line the baseline and Tesseract's size
estimate (``x_size``) and per word its box and confidence. Rotation (0/90/180/270) is
detected with Tesseract's orientation and script detection (OSD, about 0.6 s of CPU a page) only
when needed: when the page looks sideways (its empty rows and columns of ink say the lines run
up the page) before reading it, or when the upright reading is poor (upside down) after,
so upright pages pay nothing for it. The same detection names the page's script: a page
the Latin-script packs read poorly is read again with the packs of its own script
(``chi_sim``, ``jpn``...) when the languages list them. Before recognition the page is
deskewed (projection profile) and cleaned (:mod:`render_pool.engine.ocr.clean`: specks, shading and
ruling lines removed; the rules are returned for table grids). A scan holding no detail
finer than half the rendered pixels (150 dpi or less, rendered at 300) is recognised at half
the resolution when its text is large enough: the same words for about 60% of the engine's
time (the style of each word is still measured on the full image).
"""

from __future__ import annotations

import io
import os
import re
import subprocess
import threading
import time
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np
from PIL import Image

from render_pool.engine import config as engine_config
from render_pool.engine.ocr.clean import (
    Segment,
    bullet_left_of,
    clean_page,
    line_height,
    sideways,
    skew_angle,
)
from render_pool.engine.ocr.style import (
    ink_of,
    leading_mark,
    raised_mark,
    read_mark,
    slant,
    stroke_width,
)
from render_pool.errors import ConversionError, TooLarge

TESSERACT = "tesseract"
# Not a setting: Tesseract's own limit. A wider or taller image makes its Recognize fail
# (reported as if it had run out of time); the PDF reader renders pages of at most 12
# megapixels, so only a page of an extreme shape gets here.
MAX_SIDE = 32_767
# text lines (ink rows, about 0.7 em) at least this tall in pixels read as well at half the
# resolution: about 8 pt type at 150 dpi
MIN_READ_HEIGHT = 12
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
_SCRIPT = re.compile(r"Script: (\w+)")


@dataclass(slots=True)
class OcrWord:
    """A recognised word: text, box in image pixels (top-down) and confidence 0-100."""

    text: str
    x0: int
    top: int
    x1: int
    bottom: int
    confidence: float
    stroke: float = 0.0  # mean stem width in pixels (style.stroke_width)
    slant: float = 0.0  # shear of the letters: about 0.2 for italic (style.slant)
    raised: bool = False  # a raised note mark cut from the end of the word before it


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
def _list_langs() -> tuple[str, frozenset[str]]:
    """(tessdata folder, installed packs) as the command line reports them; ("", {}) when
    the ``tesseract`` command is missing."""
    try:
        out = subprocess.run([TESSERACT, "--list-langs"], capture_output=True, timeout=30,
                             env=_child_env(), check=False).stdout.decode("utf-8", "replace")
    except (OSError, subprocess.TimeoutExpired):
        return "", frozenset()
    lines = out.splitlines()
    folder = re.search(r'"(.+)"', lines[0]) if lines else None
    langs = frozenset(x.strip() for x in lines[1:] if x.strip())
    return (folder.group(1) if folder else ""), langs


def tessdata_dir() -> str:
    """The folder of the language packs: the configured one (``TESSDATA_PREFIX``, Tesseract
    5's meaning: the folder holding the ``.traineddata`` files) when it is a folder, else
    where the command line finds them."""
    return _tessdata_dir(engine_config.current().tessdata_dir)


@lru_cache(maxsize=4)
def _tessdata_dir(configured: str) -> str:
    if configured and Path(configured).is_dir():
        return configured.rstrip("/") + "/"
    return _list_langs()[0]


def available_languages() -> frozenset[str]:
    """The language packs installed (empty when Tesseract is missing); ``osd`` is not one."""
    return _packs(tessdata_dir())


@lru_cache(maxsize=4)
def _packs(folder: str) -> frozenset[str]:
    if folder and Path(folder).is_dir():
        packs = frozenset(p.stem for p in Path(folder).glob("*.traineddata"))
    else:
        packs = _list_langs()[1]
    return packs - {"osd"}


def _languages(wanted: str) -> str:
    """``wanted`` ("eng+deu") restricted to installed packs; "eng" when none is left."""
    have = available_languages()
    keep = [x for x in wanted.replace(",", "+").split("+") if x.strip() in have]
    if not have:
        raise ConversionError("OCR is not available: Tesseract or its language packs are "
                              "not installed")
    return "+".join(dict.fromkeys(x.strip() for x in keep)) or (
        "eng" if "eng" in have else sorted(have)[0])


# ------------------------------------------------------------------ engine: C++ API
@lru_cache(maxsize=1)
def _tesserocr() -> Any:
    """The ``tesserocr`` module, imported on first use; None when it is not installed."""
    # Not configuration but how a page is read: on one thread. A tesserocr built on a
    # Tesseract with OpenMP (Debian's is; the wheel's is not) reads this when the library
    # loads, so it is set for this process's native code first.
    os.putenv("OMP_THREAD_LIMIT", "1")
    try:
        import tesserocr
    except ImportError:
        return None
    return tesserocr


def _api() -> Any:
    """tesserocr when the configured engine is ``api`` and it is installed; None: the
    command line reads the page."""
    if engine_config.current().ocr_engine != "api":
        return None
    return _tesserocr()


_MAX_LANGUAGE_SETS = 3  # engines kept loaded per worker (each set: 40-60 MB)
_idle: dict[str, list[Any]] = {}  # language set -> loaded engines not in use
_idle_lock = threading.Lock()


def engine_name() -> str:
    """"tesserocr" (the API in this process) or "cli" (one process per call)."""
    return "tesserocr" if _api() is not None else "cli"


def _take(tesserocr: Any, langs: str, psm: int) -> Any:
    """A loaded engine for ``langs`` (reused from earlier pages when one is idle)."""
    key = f"{langs}/{psm}"
    with _idle_lock:
        ready = _idle.get(key)
        if ready:
            return ready.pop()
    return tesserocr.PyTessBaseAPI(path=tessdata_dir(), lang=langs, psm=psm)


def _give_back(langs: str, psm: int, api: Any) -> None:
    """Keep ``api`` loaded for the next page; the least recently used sets are dropped."""
    key = f"{langs}/{psm}"
    api.Clear()
    with _idle_lock:
        _idle[key] = [*_idle.pop(key, []), api]
        while len(_idle) > _MAX_LANGUAGE_SETS:
            for old in _idle.pop(next(iter(_idle))):
                old.End()


def _api_hocr(tesserocr: Any, image: Image.Image, langs: str, timeout: float) -> str:
    api = _take(tesserocr, langs, tesserocr.PSM.AUTO)
    try:
        api.SetImage(image)
        if not api.Recognize(timeout=max(1, int(timeout * 1000))):
            raise TimeoutError(f"OCR took longer than {timeout:.0f} s")
        body = api.GetHOCRText(0)
    finally:
        _give_back(langs, tesserocr.PSM.AUTO, api)
    return f'<html xmlns="http://www.w3.org/1999/xhtml"><body>{body}</body></html>'


def _api_osd(tesserocr: Any, image: Image.Image) -> tuple[int, float, str]:
    api = _take(tesserocr, "osd", tesserocr.PSM.OSD_ONLY)
    try:
        api.SetImage(image)
        got = api.DetectOrientationScript()
    finally:
        _give_back("osd", tesserocr.PSM.OSD_ONLY, api)
    if not got:
        return 0, 0.0, ""
    return ((360 - int(got["orient_deg"])) % 360, float(got["orient_conf"]),
            str(got.get("script_name") or ""))


# ------------------------------------------------------------------ engine: command line
def _child_env() -> dict[str, str]:
    """The ``tesseract`` command's environment: the one handed over, on one thread."""
    return {"PATH": "/usr/bin:/bin", **engine_config.current().environment,
            "OMP_THREAD_LIMIT": "1"}


def _run(image: Image.Image, args: list[str], timeout: float) -> str:
    """Run tesseract on ``image`` (fed as PGM on stdin) and return its standard output."""
    buf = io.BytesIO()
    image.save(buf, format="PPM")
    folder = tessdata_dir()
    where = ["--tessdata-dir", folder] if folder else []
    try:
        done = subprocess.run([TESSERACT, "stdin", "stdout", *where, *args],
                              input=buf.getvalue(), capture_output=True, timeout=timeout,
                              env=_child_env(), check=False)
    except subprocess.TimeoutExpired:
        raise TimeoutError(f"OCR took longer than {timeout:.0f} s") from None
    return done.stdout.decode("utf-8", "replace")


def _hocr(image: Image.Image, langs: str, timeout: float) -> str:
    """Tesseract's hOCR of ``image`` read in ``langs`` (page segmentation: automatic)."""
    tesserocr = _api()
    if tesserocr is not None:
        return _api_hocr(tesserocr, image, langs, timeout)
    return _run(image, ["-l", langs, "--psm", "3", "hocr"], timeout)


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


def _orientation(image: Image.Image, timeout: float) -> tuple[int, str]:
    """Degrees to turn ``image`` clockwise so its text stands upright (0 when unsure), and
    the script OSD sees (``Latin``, ``Han``, ``Japanese``, ``Cyrillic``...; "" when none).

    On half the resolution: OSD needs no fine detail (a quarter was too coarse: it misread
    the bench's sideways pages)."""
    small = image.reduce(2) if max(image.size) > 2000 else image
    tesserocr = _api()
    if tesserocr is not None:
        rotate, conf, script = _api_osd(tesserocr, small)
    else:
        out = _run(small, ["--psm", "0"], timeout)
        found, sure, named = _ROTATE.search(out), _ORIENT_CONF.search(out), _SCRIPT.search(out)
        rotate = int(found.group(1)) if found else 0
        conf = float(sure.group(1)) if sure else 0.0
        script = named.group(1) if named else ""
    return (rotate % 360 if conf >= 1.5 else 0), script


# the script OSD names for the text each language pack reads; a pack not listed reads Latin
_PACK_SCRIPTS = {
    "chi_sim": {"Han"}, "chi_tra": {"Han"}, "jpn": {"Japanese", "Han", "Katakana", "Hiragana"},
    "kor": {"Hangul", "Korean"}, "rus": {"Cyrillic"}, "ukr": {"Cyrillic"},
    "bul": {"Cyrillic"}, "srp": {"Cyrillic"}, "ell": {"Greek"}, "ara": {"Arabic"},
    "fas": {"Arabic"}, "urd": {"Arabic"}, "heb": {"Hebrew"}, "hin": {"Devanagari"},
    "tha": {"Thai"},
}


def _split_by_script(langs: str) -> tuple[str, dict[str, str]]:
    """``langs`` ("eng+deu+chi_sim") as the packs a page is read with first (those for Latin
    text; all of them when none is) and, per other script, the packs read when OSD sees that
    script (with the first packs' ``eng``, for the Latin words such pages carry)."""
    packs = langs.split("+")
    latin = [p for p in packs if p not in _PACK_SCRIPTS]
    first = "+".join(latin) or langs
    if not latin:
        return first, {}
    by_script: dict[str, list[str]] = {}
    for pack in packs:
        for script in _PACK_SCRIPTS.get(pack, ()):
            by_script.setdefault(script, []).append(pack)
    extra = ["eng"] if "eng" in latin else []
    return first, {script: "+".join([*found, *extra]) for script, found in by_script.items()}


def _read(image: Image.Image, langs: str, timeout: float, rotation: int, detail: float
          ) -> OcrPage:
    """Deskew, clean and recognise one upright candidate of the page (at the resolution
    :func:`_reduction` chooses; the style measures use the full image)."""
    skew = skew_angle(image)
    if skew:
        image = image.rotate(skew, resample=Image.Resampling.BILINEAR, fillcolor=255)
    cleaned, rules = clean_page(image)
    factor = _reduction(cleaned, detail)
    small = cleaned.reduce(factor) if factor > 1 else cleaned
    lines = _parse_hocr(_hocr(small, langs, timeout))
    if factor > 1:
        _enlarge(lines, factor)
    _read_bars(lines)
    _measure_words(np.asarray(cleaned), lines, langs)
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


def _reduction(cleaned: Image.Image, detail: float) -> int:
    """How many times smaller than ``cleaned`` the page is recognised: 2 when the page's
    content holds no detail finer than half its pixels (``detail``: a scan of 150 dpi or
    less rendered at 300) and its text lines stay at least ``MIN_READ_HEIGHT`` pixels tall
    there, else 1. Tesseract's layout analysis costs by the pixel; at half resolution such
    a page reads the same words in about 60% of the time."""
    if detail > 0.51:  # a 150 dpi image's own figure may be 150.00001
        return 1
    return 2 if line_height(cleaned) >= 2 * MIN_READ_HEIGHT else 1


def _enlarge(lines: list[OcrLine], factor: int) -> None:
    """Boxes, baselines and sizes read on an image reduced ``factor`` times, in place, in
    the pixels of the full image."""
    for line in lines:
        line.baseline *= factor
        line.size *= factor
        line.x0, line.x1 = line.x0 * factor, line.x1 * factor
        for word in line.words:
            word.x0, word.top = word.x0 * factor, word.top * factor
            word.x1, word.bottom = word.x1 * factor, word.bottom * factor


# what the engine makes of a raised note number glued to its word (quotes, marks, digits)
_NOT_WORD_TAIL = "\u2019\u2018'`\"\u201d\u201c!?\u00ae\u00a9\u00b0*^1234567890"


def _measure_words(pixels: np.ndarray, lines: list[OcrLine], langs: str) -> None:
    """Stroke and slant of every word, and raised note marks cut from word ends into
    words of their own (``raised``), read again as digits (see :mod:`.style`)."""
    for line in lines:
        out: list[OcrWord] = []
        for word in line.words:
            crop = ink_of(pixels[max(0, word.top):word.bottom + 1,
                                 max(0, word.x0):word.x1 + 1])
            base = line.baseline - word.top
            word.stroke = stroke_width(crop, line.size)
            word.slant = slant(crop, base)
            out.append(word)
            mark = raised_mark(crop, base, line.size) if len(word.text) >= 2 else None
            if mark is None:
                continue
            number = read_mark(pixels, mark, word.x0, word.top, _digits)
            if not number:
                continue
            text, top = word.text, word.top
            stop = text[-1] if text[-1] in ".,;:" and len(text) > 1 else ""
            core = text[:-1] if stop else text
            core = core.rstrip(_NOT_WORD_TAIL) or core
            if core.endswith(number) and len(core) > len(number):
                core = core[: -len(number)]
            word.text = core
            rows = np.nonzero(crop[:, :mark.x0].any(axis=1))[0]
            if rows.size:  # the word's own box, without the mark that rose above it
                word.top, word.bottom = word.top + int(rows[0]), word.top + int(rows[-1]) + 1
            word.x1 = word.x0 + mark.x0 - 1
            out.append(OcrWord(number, word.x0 + mark.x0, top + mark.top,
                               word.x0 + mark.x1 + 1, top + mark.bottom + 1,
                               word.confidence, word.stroke, 0.0, True))
            if stop:
                out.append(OcrWord(stop, out[-1].x1, int(line.baseline) - 3, out[-1].x1 + 4,
                                   int(line.baseline), word.confidence, word.stroke))
        line.words = out
        _lead_mark(pixels, line)


# what the engine makes of a raised note number starting a word
_NOT_WORD_HEAD = "\u2019\u2018'`\"\u201d\u201c*^\u00b0\u00b9\u00b2\u00b3"


def _lead_mark(pixels: np.ndarray, line: OcrLine) -> None:
    """A raised note number starting the line (a footnote's, at the page foot) split off
    its first word, in place, into a word of its own (``raised``) read again as digits."""
    if len(line.words) < 2:
        return
    word = line.words[0]
    rest = line.words[1:4]
    rising = line.baseline - min(w.top for w in rest)
    crop = ink_of(pixels[max(0, word.top):word.bottom + 1, max(0, word.x0):word.x1 + 1])
    mark = leading_mark(crop, line.baseline - word.top, rising)
    if mark is None:
        return
    number = read_mark(pixels, mark, word.x0, word.top, _digits)
    if not number:
        return
    raised = OcrWord(number, word.x0 + mark.x0, word.top + mark.top, word.x0 + mark.x1 + 1,
                     word.top + mark.bottom + 1, word.confidence, word.stroke, 0.0, True)
    tail = crop[:, mark.x1 + 1:]
    cols = np.nonzero(tail.any(axis=0))[0]
    text = word.text.lstrip(_NOT_WORD_HEAD)
    if text == word.text and text.startswith(number) and len(text) > len(number):
        text = text[len(number):]  # read as the digits it is, glued to the word
    if not cols.size:  # the mark was the whole word
        line.words[0] = raised
        return
    if not text:
        return
    word.x0 = word.x0 + mark.x1 + 1 + int(cols[0])
    word.text = text
    line.words.insert(0, raised)


def _read_bars(lines: list[OcrLine]) -> None:
    """Vertical bars the engine read, in place: a bar before a lower-case word (``| saw``,
    ``|t``) is the capital I it so often takes for one; a lone bar at either end of a line
    is the edge of a table rule or a frame, left out; a line of nothing else goes."""
    for line in lines:
        words = line.words
        keep: list[OcrWord] = []
        for n, word in enumerate(words):
            text = word.text
            after = words[n + 1].text if n + 1 < len(words) else ""
            if text and set(text) == {"|"}:
                if len(text) == 1 and after[:1].isalpha() and after[:1].islower():
                    word.text = "I"
                elif n == 0 or n == len(words) - 1:
                    continue
            elif text[:1] == "|" and text[1:2].isalpha() and text[1:].rstrip(".,;:").islower():
                word.text = "I" + text[1:]
            keep.append(word)
        line.words = keep
    lines[:] = [line for line in lines if line.words]


def _digits(cut: np.ndarray) -> str:
    """The digits in a small cut-out (a raised note number), read on their own."""
    image = Image.fromarray(cut.astype(np.uint8))
    scale = max(1, round(36 / max(1, cut.shape[0])))
    if scale > 1:
        image = image.resize((image.width * scale, image.height * scale),
                             Image.Resampling.BICUBIC)
    image = Image.fromarray(np.pad(np.asarray(image), 12, constant_values=255))
    tesserocr = _api()
    if tesserocr is not None:
        api = _take(tesserocr, "eng", tesserocr.PSM.SINGLE_WORD)
        try:
            api.SetVariable("tessedit_char_whitelist", "0123456789")
            api.SetImage(image)
            text = str(api.GetUTF8Text() or "")
        finally:
            _give_back("eng", tesserocr.PSM.SINGLE_WORD, api)
        return "".join(text.split())
    out = _run(image, ["-l", "eng", "--psm", "8", "-c", "tessedit_char_whitelist=0123456789"],
               10.0)
    return "".join(out.split())


def recognise(image: Image.Image, languages: str = "eng", timeout: float = 60.0,
              detail: float = 1.0) -> OcrPage:
    """Words, lines and rules of a page image; the image is turned upright first when needed.

    ``detail`` is the share of the image's resolution its content carries (a 100 dpi scan
    rendered at 300 dpi: 1/3; a photo or a page drawn as vectors: 1): a page with no finer
    detail than half its pixels is recognised at half the resolution when its text is
    large enough (:func:`_reduction`), the words' boxes given back in the image's pixels.

    A page is read with the Latin-script packs of ``languages`` first (the other packs,
    such as ``chi_sim`` or ``jpn``, would cost time on every page and read noise as their
    characters). A page that looks sideways is turned by OSD before it is read; a page read
    poorly is checked by OSD after: turned when it is upside down, and read with the packs
    of the script OSD sees when that is another one of ``languages``; the better reading
    (more words, more confident) is kept. Raises TimeoutError when Tesseract takes longer
    than ``timeout`` seconds in all, TooLarge (41301) for an image over ``MAX_SIDE``.
    """
    if max(image.size) > MAX_SIDE:
        raise TooLarge(f"The page image is {image.width:,} x {image.height:,} pixels; OCR "
                       f"reads at most {MAX_SIDE:,} pixels a side")
    deadline = time.monotonic() + timeout
    first, other = _split_by_script(_languages(languages))
    image = image.convert("L")
    turn, script, asked = 0, "", False
    if sideways(image):
        (turn, script), asked = _orientation(image, timeout), True
    langs = other.get(script, first)
    page = _read(image.rotate(-turn, expand=True) if turn else image, langs,
                 deadline - time.monotonic(), turn, detail)  # PIL turns anticlockwise
    if len(page.words) >= _MIN_WORDS and page.confidence >= _GOOD_CONFIDENCE:
        return page
    left = deadline - time.monotonic()
    if not asked and left > 1:
        turn, script = _orientation(image, left)
    again_langs = other.get(script, first)
    left = deadline - time.monotonic()
    if (turn == page.rotation and again_langs == langs) or left <= 1:
        return page
    again = _read(image.rotate(-turn, expand=True) if turn else image, again_langs, left, turn,
                  detail)
    if _score(again) > _score(page):
        return again
    return page


def _score(page: OcrPage) -> float:
    """How well a reading went: its words weighted by their mean confidence."""
    return len(page.words) * max(page.confidence, 1)
