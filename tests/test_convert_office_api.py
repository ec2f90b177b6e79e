"""``POST /api/convert`` with the office formats over HTTP, through the real process pool:
every export and ``save=true`` per format, options, and hostile inputs answering clear codes
with the service healthy."""

from __future__ import annotations

import json
import re
import urllib.request

import pytest

from tests.conftest import post_form
from tests.office_fixtures import (
    big_deck,
    big_xlsx,
    build_office_set,
    encrypted_odt,
    has_libreoffice,
    ole_file,
    pptx_entity_bomb,
    xlsx_bomb,
)
from tornado_app.app import make_app

FORMATS = ("pptx", "xlsx", "csv", "html", "epub")
EXPORTS = {"markdown": "text/markdown; charset=utf-8", "html": "text/html; charset=utf-8",
           "json": "application/json", "doctags": "text/plain; charset=utf-8"}
PROBES = {"pptx": "Revenue overview", "xlsx": "1,234.50", "csv": "Málaga",
          "html": "Annual report", "epub": "Chapter Two", "odt": "Next steps"}


@pytest.fixture(scope="module")
def office_set(tmp_path_factory) -> dict[str, tuple[bytes, str]]:
    return build_office_set(tmp_path_factory.mktemp("office-api"), with_libreoffice=False)


@pytest.fixture
def app(docs_services):
    return make_app(docs_services)


def _ok(reply) -> dict:
    assert reply.status == 200, reply.body
    assert reply.body["code"] == 0, reply.body
    return reply.body["data"]


def _code(reply) -> int:
    assert reply.status == 200, reply.body
    assert "Traceback" not in (reply.body.get("msg") or "")
    return reply.body["code"]


@pytest.mark.parametrize("kind", FORMATS)
async def test_every_export_of_every_format(api, office_set, kind):
    data, _ = office_set[kind]
    for export, media in EXPORTS.items():
        out = _ok(await post_form(api, "/api/convert", {"export": export},
                                  {"file": (f"upload.{kind}", data)}))
        assert out["media_type"] == media
        assert PROBES[kind] in out["content"], (kind, export)
        if export == "json":
            assert any(b["type"] in ("Heading", "Table") for b in
                       json.loads(out["content"])["blocks"])


@pytest.mark.skipif(not has_libreoffice(), reason="LibreOffice (soffice) not installed")
async def test_doc_named_docx_is_read_as_doc_through_libreoffice(api, tmp_path, office_set):
    from tests.office_fixtures import soffice_convert

    (tmp_path / "doc.docx").write_bytes(office_set["docx"][0])
    soffice_convert([tmp_path / "doc.docx"], "doc", tmp_path, tmp_path / "profile")
    legacy = (tmp_path / "doc.doc").read_bytes()
    out = _ok(await post_form(api, "/api/convert", {"export": "html"},
                              {"file": ("renamed.docx", legacy)}))
    assert "<h2" in out["content"] and "Next steps" in out["content"]
    assert any("DOC was converted" in n for n in out["notes"])  # a fact: a note


async def test_notes_option(api, office_set):
    deck = office_set["pptx"][0]
    with_notes = _ok(await post_form(api, "/api/convert", {}, {"file": ("d.pptx", deck)}))
    without = _ok(await post_form(api, "/api/convert", {"notes": "false"},
                                  {"file": ("d.pptx", deck)}))
    assert "Mention the audit" in with_notes["content"]
    assert "Mention the audit" not in without["content"]
    assert _code(await post_form(api, "/api/convert", {"notes": "maybe"},
                                 {"file": ("d.pptx", deck)})) == 40001


def _download(url: str) -> bytes:
    with urllib.request.urlopen(url, timeout=10) as r:
        return r.read()


@pytest.mark.parametrize("kind", ["pptx", "epub", "xlsx", "csv"])
async def test_saved_output_equals_inline_output(api, storage_services, office_set, kind):
    data, _ = office_set[kind]
    inline = _ok(await post_form(api, "/api/convert", {"images": "embed"},
                                 {"file": (f"f.{kind}", data)}))
    saved = _ok(await post_form(api, "/api/convert", {"save": "true"},
                                {"file": (f"f.{kind}", data)}))
    stored = _download(saved["storage_presigned_url"]).decode("utf-8")
    link = re.compile(r"(!\[[^\]]*\]\()([^)\s]+)")
    inline_links = [m.group(2) for m in link.finditer(inline["content"])]
    stored_links = [m.group(2) for m in link.finditer(stored)]
    assert len(inline_links) == len(stored_links)
    assert all(u.startswith("data:image/") for u in inline_links)
    assert not [u for u in stored_links if u.startswith("data:")]
    assert link.sub(r"\1IMAGE", stored) == link.sub(r"\1IMAGE", inline["content"])


async def test_hostile_office_inputs_answer_codes_and_the_service_stays_up(api):
    cases = {
        "protected.docx": (ole_file(["EncryptionInfo", "EncryptedPackage"]), 40003),
        "protected.xlsx": (ole_file(["EncryptionInfo", "EncryptedPackage"]), 40003),
        "protected.odt": (encrypted_odt(), 40003),
        "broken.pptx": (b"PK\x03\x04" + b"\x00broken" * 100, 40003),
        "bomb.xlsx": (xlsx_bomb(), 41301),
        "entities.pptx": (pptx_entity_bomb(), 40003),  # a DTD is a document's, not an archive's
        # the type comes from the bytes: a broken PNG named .docx is a corrupt image
        "image.png.docx": (b"\x89PNG\r\n\x1a\n" + b"\x00" * 64, 40003),
        "animation.gif.docx": (b"GIF89a" + b"\x00" * 64, 40002),
    }
    for name, (payload, code) in cases.items():
        assert _code(await post_form(api, "/api/convert", {},
                                     {"file": (name, payload)})) == code, name
    assert (await api.call("GET", "/health")).status == 200


async def test_big_sheet_and_big_deck_are_answered(api, docs_services):
    sheet = _ok(await post_form(api, "/api/convert", {}, {"file": ("big.xlsx", big_xlsx())}))
    # cut at whichever bound comes first (three cells a row): the cells or the rows
    st = docs_services.settings
    kept = min(st.sheet_max_cells // 3, st.table_max_rows)
    assert any("cell limit" in w or f"only its first {kept:,}" in w for w in sheet["warnings"])
    assert sheet["content"].count("\n| ") <= kept + 2
    deck = _ok(await post_form(api, "/api/convert", {}, {"file": ("big.pptx", big_deck())}))
    assert "Slide title 1000" in deck["content"]
    assert (await api.call("GET", "/health")).status == 200
