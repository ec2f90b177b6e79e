"""Chunks of a document with embedded images (``images=embed``: each image a ``data:`` URI
in its chunks' text) cost in proportion to their text.

A data URI is one long word: the chunks writer cuts it into pieces of the budget. Each piece
was found by counting candidate pieces again and again (a dozen counts of several thousand
characters per piece, about 20 times the text in all) and the counter walked its matches in
Python: about 16 s per 5 MB of base64, where the Markdown export of the same document takes
a fraction of a second. The built-in counters now say where a piece ends in one scan
(``tokens.prefix_rule``), and the output is the same: the last tests check the counters'
shortcuts against their rules."""

from __future__ import annotations

import base64
import random
import re
from collections.abc import Iterator
from typing import Any

import pytest

from render_pool.engine.chunks import tokens
from render_pool.engine.chunks.writer import chunk_document
from render_pool.engine.model import Document, Heading, Image, Paragraph, Resource, Text


def _document(images: int = 3, size: int = 1_000_000) -> Document:
    """Prose around ``images`` pictures of ``size`` random bytes each (a photograph's PNG
    does not compress either)."""
    rng = random.Random(11)
    doc = Document()
    doc.blocks.append(Heading(1, [Text("Report")]))
    for i in range(images):
        key = f"media/image{i}.png"
        doc.resources[key] = Resource(rng.randbytes(size), "image/png")
        doc.blocks += [
            Heading(2, [Text(f"Part {i + 1}")]),
            Paragraph([Text("What the picture below shows, in a sentence or two. " * 4)]),
            Paragraph([Image(key, alt=f"picture {i + 1}")]),
            Paragraph([Text(f"Figure {i + 1}: the picture's caption.")]),
        ]
    return doc


class _CountingPattern:
    """A stand-in for the counter's compiled pattern that adds up the characters it is
    asked to count (how much text the writer measures: no clock involved)."""

    def __init__(self, pattern: re.Pattern[str]) -> None:
        self.pattern = pattern
        self.characters = 0

    def findall(self, text: str) -> list[Any]:
        self.characters += len(text)
        return self.pattern.findall(text)

    def finditer(self, text: str) -> Iterator[re.Match[str]]:
        self.characters += len(text)
        return self.pattern.finditer(text)


def test_the_writer_measures_each_character_of_an_image_a_few_times_at_most(
        monkeypatch: pytest.MonkeyPatch) -> None:
    doc = _document()
    counted = [_CountingPattern(tokens._TOKEN)]
    monkeypatch.setattr(tokens, "_TOKEN", counted[0])
    if hasattr(tokens, "_TOKEN_A"):  # the pattern for ASCII text
        counted.append(_CountingPattern(tokens._TOKEN_A))
        monkeypatch.setattr(tokens, "_TOKEN_A", counted[1])
    chunks = chunk_document(doc)
    text = sum(len(c["text"]) for c in chunks)
    # each piece of a data URI is counted once (1.0x the text); the old writer counted every
    # candidate piece, about 20 times the text
    assert sum(p.characters for p in counted) <= 4 * text, ([p.characters for p in counted], text)


def test_every_image_is_in_the_chunks_whole_and_in_order() -> None:
    doc = _document(images=2, size=200_000)
    chunks = chunk_document(doc)
    text = "".join(c["text"] for c in chunks)
    for key, res in doc.resources.items():
        uri = f"data:image/png;base64,{base64.b64encode(res.data).decode()}"
        assert uri in text, key
    assert all(c["tokens"] == tokens.count_words(c["text"]) <= 512 for c in chunks)


_TOKEN = re.compile(rf"[{tokens._CJK}]|(?:(?![{tokens._CJK}])[^\W_])+|([^\w\s]|_)\1*")


def _reference(text: str) -> int:
    """The ``words`` rule as first written: a match of n characters is ceil(n / 10) tokens."""
    return sum(-(-(m.end() - m.start()) // 10) for m in _TOKEN.finditer(text))


def _random_text(rng: random.Random, length: int) -> str:
    parts = [*"aaabZ09_-+/.,|  \n\t", "中", "ー", "한", "é", "\u3000", "…", "x" * 13, "-" * 12]
    return "".join(rng.choice(parts) for _ in range(length))


def test_word_counts_match_the_rule() -> None:
    rng = random.Random(3)
    for _ in range(3000):
        text = _random_text(rng, rng.randint(0, 50))
        assert tokens.count_words(text) == _reference(text), text


def test_the_longest_piece_within_a_limit_is_the_one_counting_finds() -> None:
    rng = random.Random(5)
    for _ in range(1500):
        text = _random_text(rng, rng.randint(1, 40))
        start, limit = rng.randrange(len(text)), rng.randint(0, 10)
        for count in (tokens.count_words, tokens.count_chars):
            rule = tokens.prefix_rule(count, text)
            assert rule is not None
            longest = max(end for end in range(start, len(text) + 1)
                          if count(text[start:end]) <= limit)
            assert rule(start, limit) == longest, (text, start, limit)
            assert tokens.within(count, text[start:], limit) == (
                count(text[start:]) <= limit)
    assert tokens.prefix_rule(len, "abc") is None


def test_two_texts_joined_lose_at_most_one_token() -> None:
    rng = random.Random(7)
    for _ in range(2000):
        a, b = _random_text(rng, rng.randint(0, 30)), _random_text(rng, rng.randint(0, 30))
        sep = rng.choice(["", " ", "\n", ") ", "-"])
        for count in (tokens.count_words, tokens.count_chars):
            assert tokens.join_floor(count)
            assert count(a + sep + b) >= count(a) + count(b) - 1, (a, sep, b)
