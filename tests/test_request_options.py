"""The options of a conversion request are checked once, before any work: a misspelled field
is 40001 naming it, never silently ignored; ``pages`` for an input whose reader does not
take it is 40001 naming the option and the input's kind."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import post_form
from tornado_app.app import make_app

DOCX = Path(__file__).parent / "data" / "docx" / "docling" / "docx_lists.docx"


@pytest.fixture
def app(docs_services):
    return make_app(docs_services)


async def test_a_misspelled_md_convert_field_is_named(api):
    """``tocs=true`` for ``toc=true``: before, the DOCX was rendered without a contents."""
    reply = await post_form(api, "/md/convert", {"markdown_text": "# a", "target": "docx",
                                                 "tocs": "true"})
    assert reply.body["code"] == 40001, reply.body
    assert reply.body["msg"].startswith("unknown field(s) tocs; /md/convert reads ")


async def test_every_md_convert_field_the_browser_app_sends_is_known(api):
    fields = {"markdown_text": "# a", "target": "docx", "css_text": "", "header_text": "h",
              "footer_text": "f", "product_name": "p", "product_version": "1",
              "document_name": "d", "document_version": "2", "copyright_text": "c",
              "filename": "out", "toc": "true", "save": "false"}
    reply = await post_form(api, "/md/convert", fields)
    assert reply.status == 200, reply.body
    assert reply.headers["Content-Type"].startswith("application/vnd.openxmlformats"), reply.body
    assert reply.raw.startswith(b"PK")


async def test_pages_of_a_docx_names_the_option_and_the_kind(api):
    reply = await post_form(api, "/api/convert", {"pages": "1"},
                            {"file": ("a.docx", DOCX.read_bytes())})
    assert reply.body["code"] == 40001, reply.body
    assert "pages applies to PDF and image input only, not DOCX" in reply.body["msg"]
