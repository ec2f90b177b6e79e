"""The reader/writer registry: one registration adds a writer or an engine, and the pool job
uses it."""

from __future__ import annotations

import contextlib
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

from render_pool.engine import registry
from render_pool.engine.common.image_links import ImageResolver
from render_pool.engine.formats import ReadRequest
from render_pool.engine.jobs import convert_document
from render_pool.engine.link_fill import LinkQuoter, quote_nothing
from render_pool.engine.model import Document, Heading, plain_text
from render_pool.engine.options import WriterOptions
from render_pool.engine.page_ranges import parse_pages
from render_pool.errors import InvalidOption, UnsupportedFormat
from tests.docx_fixtures import build_feature_docx


@dataclass(frozen=True)
class HeadingsWriter:
    """A toy writer: one line per heading."""

    media_type: str = "text/plain; charset=utf-8"
    extension: str = "txt"
    quote_link: LinkQuoter = quote_nothing
    binary: bool = False
    holds_html: bool = True

    def write(self, doc: Document, resolve_image: ImageResolver | None,
              options: WriterOptions) -> str:
        return "".join(f"{'=' * b.level} {plain_text(b.children)}\n" for b in doc.blocks
                       if isinstance(b, Heading))


@dataclass(frozen=True)
class TrackOptions:
    track_changes: str = "accept"


@dataclass(frozen=True)
class ToyDocxReader:
    """A toy reader of DOCX for engine "toy": keeps only the option it takes."""

    kinds: tuple[str, ...] = ("docx",)
    engine: str = "toy"
    sniffed: bool = True

    def options(self, request: ReadRequest) -> TrackOptions:
        return TrackOptions(request.track_changes)

    def read(self, data: bytes, options: TrackOptions) -> Document:
        return Document(blocks=[Heading(1, [], "x")], meta={"track": options.track_changes})


def test_a_writer_is_one_registration(monkeypatch):
    monkeypatch.setitem(registry.WRITERS, "headings", HeadingsWriter())
    out = convert_document(build_feature_docx(), "headings")
    assert out.content.startswith("= Introduction\n== Custom styled section\n")
    assert out.media_type == "text/plain; charset=utf-8"


def test_an_engine_is_one_registration(monkeypatch):
    monkeypatch.setattr(registry, "READERS", [*registry.READERS, ToyDocxReader()])
    doc = registry.read(build_feature_docx(), "toy",
                        ReadRequest(track_changes="all", include_furniture=True))
    assert doc.meta == {"track": "all"}  # only the options its options type holds
    with pytest.raises(InvalidOption, match="pages applies to PDF and image input only"):
        registry.read(build_feature_docx(), "toy", ReadRequest(pages=parse_pages("1")))


def test_engine_without_a_reader_for_the_kind_falls_back_with_a_warning():
    pdf = (Path(__file__).parent / "data" / "pdf" / "multi_page.pdf").read_bytes()
    doc = registry.read(pdf, "alt_engine")
    assert ("The lenient engine (alt_engine) reads DOCX only; this PDF file was read by the "
            "PDF reader") in doc.read_notes
    assert "Christopher Latham Sholes" in plain_text(doc.blocks)


def test_unknown_inputs_and_exports_are_refused():
    with pytest.raises(UnsupportedFormat):
        registry.writer("rtf")
    with pytest.raises(UnsupportedFormat, match=r"only .*DOCX.*PDF.*PNG.*TIFF.*WEBP"):
        registry.sniff_kind(b"plain text")


def _seconds(data: bytes) -> float:
    best = float("inf")
    for _ in range(3):
        start = time.perf_counter()
        with contextlib.suppress(UnsupportedFormat):
            registry.sniff_kind(data)
        best = min(best, time.perf_counter() - start)
    return best


@pytest.mark.parametrize("make", [
    lambda n: b"<!---->" * n + b"x",  # comments before no HTML: once exponential in n
    lambda n: ("a" * n * 100 + ',"\n') * 2,  # two long lines: csv.Sniffer is quadratic
], ids=["html-comments", "csv-long-lines"])
def test_sniffing_text_is_linear(make):
    """Telling HTML and CSV from other text costs time linear in the input: 8x the input
    takes well under 16x the time (best of three, three tries on a busy machine)."""
    small, large = make(120), make(960)
    small = small.encode() if isinstance(small, str) else small
    large = large.encode() if isinstance(large, str) else large
    ratios = []
    for _ in range(3):
        ratios.append(_seconds(large) / max(_seconds(small), 1e-4))
        if ratios[-1] < 16:
            break
    assert min(ratios) < 16, ratios


def test_a_text_that_mentions_webp_is_no_image():
    with pytest.raises(UnsupportedFormat, match="unsupported file type"):
        registry.sniff_kind(b"WEBP notes: nothing here")
    assert registry.sniff_kind(b"RIFF\x00\x00\x00\x00WEBPVP8 ") == "webp"


@dataclass(frozen=True)
class OutlineWriter:
    """A toy file writer: the headings, and the one option it reads."""

    media_type: str = "application/x-outline"
    extension: str = "outline"
    quote_link: LinkQuoter = quote_nothing
    binary: bool = True
    holds_html: bool = True

    def write(self, doc: Document, resolve_image: ImageResolver | None,
              options: WriterOptions) -> bytes:
        return f"{options.header_text}|{plain_text(doc.blocks)}".encode()


def test_a_markdown_target_is_one_registration(monkeypatch):
    """/md/convert's targets are registry writers like the exports: a toy file writer added
    by one line renders Markdown through the registry's Markdown reader, with the options
    type every writer shares."""
    from render_pool.engine.jobs import RenderRequest, render_markdown

    monkeypatch.setitem(registry.WRITERS, "outline", OutlineWriter())
    out = render_markdown("# Title\n\nBody *text*\n", RenderRequest("outline", header_text="H"),
                          {}, {})
    assert (out.data, out.media_type, out.extension) == (b"H|TitleBody text",
                                                         "application/x-outline", "outline")
    assert set(registry.TARGETS) == {"pdf", "docx"} and "pdf" not in registry.EXPORTS
    with pytest.raises(UnsupportedFormat):
        convert_document(build_feature_docx(), "outline")  # a file target is no text export
    with pytest.raises(UnsupportedFormat, match="use pdf or docx"):
        render_markdown("x", RenderRequest("markdown"), {}, {})
