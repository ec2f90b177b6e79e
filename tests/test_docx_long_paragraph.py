"""A DOCX paragraph of many runs of one format reads in time linear in its runs, on the
one-pass path for ordinary paragraphs and on the full walk alike.

Why: both joined a run's text to the text before it by extending that text, which copies it
each time, so one paragraph of 400,000 short runs (a 1.3 MB file) took 14 s of CPU, 66 times
a quarter of it. The timing rule is :mod:`tests.test_linear_scanners`'s: 8 times the runs,
CPU time of this thread, a ratio under 16 (linear about 8, quadratic about 64)."""

from __future__ import annotations

import io
import zipfile

import pytest

from render_pool.engine.docx.reader import read_docx
from render_pool.engine.model import document_blocks, plain_text
from tests.test_linear_scanners import LIMIT, _growth

_W = "http://schemas.openxmlformats.org/wordprocessingml/2006/main"
_PARTS = {
    "[Content_Types].xml":
        '<?xml version="1.0"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/'
        'content-types"><Default Extension="rels" ContentType="application/vnd.openxmlformats-'
        'package.relationships+xml"/><Default Extension="xml" ContentType="application/xml"/>'
        '<Override PartName="/word/document.xml" ContentType="application/vnd.openxmlformats-'
        'officedocument.wordprocessingml.document.main+xml"/></Types>',
    "_rels/.rels":
        '<?xml version="1.0"?><Relationships xmlns="http://schemas.openxmlformats.org/package/'
        '2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/'
        'officeDocument/2006/relationships/officeDocument" Target="word/document.xml"/>'
        '</Relationships>',
}


def one_paragraph(runs: int, first: str = "") -> bytes:
    """A DOCX of one paragraph: ``first`` (raw WordprocessingML), then ``runs`` runs of one
    word each, all of one format (words vary, so the part compresses like text)."""
    words = "".join(f'<w:r><w:t xml:space="preserve">w{i * 7919 % 100003} </w:t></w:r>'
                    for i in range(runs))
    body = f'<w:document xmlns:w="{_W}"><w:body><w:p>{first}{words}</w:p></w:body></w:document>'
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as package:
        for name, text in {**_PARTS, "word/document.xml": body}.items():
            package.writestr(name, text)
    return out.getvalue()


# a tab before the runs sends the paragraph through the full walk
PATHS = {"one-pass path": "", "full walk": "<w:r><w:tab/></w:r>"}


@pytest.mark.parametrize("path", list(PATHS))
def test_every_run_is_read(path: str) -> None:
    text = plain_text(document_blocks(read_docx(one_paragraph(500, PATHS[path])))[0])
    assert text.split() == [f"w{i * 7919 % 100003}" for i in range(500)]


@pytest.mark.slow  # seconds of CPU on the large input
@pytest.mark.parametrize("path", list(PATHS))
def test_a_paragraph_of_many_runs_reads_in_linear_time(path: str) -> None:
    small, large = one_paragraph(25_000, PATHS[path]), one_paragraph(200_000, PATHS[path])
    ratios = _growth(lambda: read_docx(small), lambda: read_docx(large))
    assert min(ratios) < LIMIT, f"{path}: 8x the runs took {ratios}x the CPU time"
