"""Heading slugs by one translate pass for ASCII text, the same ids as the per-character
rule for any text (issue 34, item 1).

Why: every reader and writer makes heading ids with :func:`slugify` (DOCX, HTML, Markdown,
PDF and slide readers; HTML and Markdown writers), so a faster rule must give every id it
gave before or internal links break.
"""

from __future__ import annotations

import random
import unicodedata
from types import SimpleNamespace

import pytest

from render_pool.engine.common import slugs
from render_pool.engine.common.slugs import Slugger, slugify


def _by_character(text: str) -> str:
    """The rule as documented: NFKC, stripped, lower case; letters, digits, ``_`` and ``-``
    kept, each blank a hyphen, anything else dropped; ``section`` when nothing is left."""
    out = []
    for ch in unicodedata.normalize("NFKC", text).strip().lower():
        if ch.isalnum() or ch in "_-":
            out.append(ch)
        elif ch.isspace():
            out.append("-")
    return "".join(out) or "section"


def test_every_character_slugs_as_the_rule_says() -> None:
    for code in range(128):
        assert slugify(chr(code)) == _by_character(chr(code)), hex(code)
    for code in range(0, 0x110000, 8):  # each character once, amid seven others
        text = f"A{''.join(map(chr, range(code, min(code + 8, 0x110000))))} b"
        assert slugify(text) == _by_character(text), hex(code)


def test_random_headings_slug_as_the_rule_says() -> None:
    rng = random.Random(34)
    alphabets = ("".join(map(chr, range(128))),
                 "abc XYZ 012 .,:;!?()[]-_\t\n\u00a0\u2003\u00c9\u00df\u0130\ufb01\u2460\u0301"
                 "\u0416\u05d0\u4e2d\u0661\U0001d400")
    for _ in range(20000):
        alphabet = rng.choice(alphabets)
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 20)))
        assert slugify(text) == _by_character(text), repr(text)


def test_an_ascii_heading_needs_no_normalisation(monkeypatch: pytest.MonkeyPatch) -> None:
    def refused(form: str, text: str) -> str:
        raise AssertionError(f"normalised {text!r}")

    monkeypatch.setattr(slugs, "unicodedata", SimpleNamespace(normalize=refused))
    assert slugify("  3. Revenue & Growth_rate -- Q1\t2024 ") == "3-revenue--growth_rate----q1-2024"
    assert slugify("?!") == "section"


def test_ids_are_unique_in_document_order_and_respect_taken() -> None:
    plain = Slugger()
    assert [plain("Intro"), plain("Intro"), plain("intro-1"), plain("Intro")] == [
        "intro", "intro-1", "intro-1-1", "intro-2"]
    used = {"fn-1"}
    reserved = Slugger(used, taken=lambda slug: slug in ("results", "results-1", "fn-2"))
    assert [reserved("Results"), reserved("FN 1"), reserved("fn-2")] == [
        "results-2", "fn-1-1", "fn-2-1"]
    assert used == {"fn-1", "results-2", "fn-1-1", "fn-2-1"}
