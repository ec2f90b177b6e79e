"""``chunks=true`` on batches: a ``<name>.chunks.json`` beside each stored Markdown document,
over HTTP against the real SeaweedFS S3 server (archives now and as a job, server folders),
and the chunk options refused with 40001 as ``/api/convert`` refuses them."""

from __future__ import annotations

import dataclasses
import json
import re
from typing import Any

import pytest

from tests.archive_fixtures import zip_of
from tests.conftest import DOCS_CALLER_COMPANY, docs_caller_company, post_form
from tests.local_http import download
from tests.waiting import eventually
from tornado_app.app import make_app

_WORD = re.compile(r"\w+")


@pytest.fixture
def app(storage_services):
    return make_app(storage_services)


def _guide() -> bytes:
    paragraphs = "\n\n".join(
        f"Paragraph {i} explains step {i} of the guide in plain words. It has a second "
        f"sentence so the chunker can cut between sentences if it must." for i in range(12))
    return (f"# Guide\n\n{paragraphs}\n\n## Table\n\n| name | value |\n|---|---|\n"
            + "".join(f"| row{i} | {i * 7} |\n" for i in range(20))).encode()


ARCHIVE = {
    "docs/guide.md": _guide(),
    "page.html": b"<html><body><h1>Page</h1><p>Hello from the page.</p></body></html>",
    "img/a.png": b"\x89PNG\r\n\x1a\n",
}


def _ok(reply: Any) -> dict[str, Any]:
    assert reply.status == 200 and reply.body["code"] == 0, reply.body
    return reply.body["data"]


async def _keys(storage_services: Any, prefix: str) -> list[str]:
    store = await storage_services.storage.store(await docs_caller_company(storage_services))
    return sorted(o.object_name for o in store.client.list_objects(
        store.config.bucket, prefix=f"{store.config.prefix}/{prefix}/", recursive=True))


def _stored_chunks(entry: dict[str, Any]) -> tuple[str, list[dict[str, Any]]]:
    """The entry's stored Markdown and its stored chunks."""
    status, markdown = download(entry["storage_presigned_url"])
    assert status == 200
    status, chunks = download(entry["chunks"]["storage_presigned_url"])
    assert status == 200
    return markdown.decode(), json.loads(chunks)


async def test_archive_chunks_stored_beside_each_markdown(api, storage_services):
    data = _ok(await post_form(api, "/api/upload-archive",
                               {"prefix": "proj", "chunks": "true", "chunk_tokens": "64",
                                "chunk_merge": "false"},
                               {"file": ("site.zip", zip_of(ARCHIVE))}))
    entries = {e["source"]: e for e in data["files"]}
    guide = entries["docs/guide.md"]
    assert guide["chunks"]["storage_url"].endswith("/proj/docs/guide.chunks.json")
    markdown, chunks = _stored_chunks(guide)
    assert guide["chunks"]["count"] == len(chunks) > 3
    assert all(c["tokens"] <= 64 for c in chunks)
    assert chunks[0]["headings"] == ["Guide"]
    assert any(c["headings"] == ["Guide", "Table"] for c in chunks)
    # nothing lost, nothing doubled (table parts repeat their header row only)
    header = 0
    for c in chunks:
        header += c["text"].count("| name | value |")
    said = sorted(_WORD.findall(markdown) + ["name", "value"] * (header - 1))
    assert sorted(w for c in chunks for w in _WORD.findall(c["text"])) == said
    page = entries["page.html"]
    assert page["chunks"]["storage_url"].endswith("/proj/page.chunks.json")
    _, page_chunks = _stored_chunks(page)
    assert [c["headings"] for c in page_chunks] == [["Page"]]
    assert "Hello from the page." in page_chunks[0]["text"]
    keys = await _keys(storage_services, "proj")
    assert [k.rsplit("/proj/", 1)[1] for k in keys if k.endswith(".chunks.json")] == [
        "docs/guide.chunks.json", "page.chunks.json"]
    store = await storage_services.storage.store(await docs_caller_company(storage_services))
    stat = store.client.stat_object(store.config.bucket,
                                    next(k for k in keys if k.endswith("guide.chunks.json")))
    assert stat.content_type.startswith("application/json")


async def test_no_chunks_unless_asked(api, storage_services):
    data = _ok(await post_form(api, "/api/upload-archive", {"prefix": "plain"},
                               {"file": ("site.zip", zip_of(ARCHIVE))}))
    assert all("chunks" not in e for e in data["files"])
    assert not [k for k in await _keys(storage_services, "plain") if k.endswith(".json")]


@pytest.mark.parametrize("fields,words", [
    ({"chunks": "true", "chunk_token": "64"}, "chunk_token"),  # misspelled
    ({"chunk": "true"}, "unknown field"),
    ({"chunk_tokens": "64"}, "chunks=true"),  # without chunks=true
    ({"chunks": "yes please"}, "chunks must be true or false"),
    ({"chunks": "true", "chunk_tokens": "8"}, "chunk_tokens must be between"),
    ({"chunks": "true", "chunk_tokens": "64", "chunk_overlap": "32"}, "chunk_overlap"),
    ({"chunks": "true", "chunk_merge": "sometimes"}, "chunk_merge"),
    ({"chunks": "true", "chunk_tokenizer": "gpt9"}, "chunk_tokenizer"),
])
async def test_bad_chunk_options_refused_before_any_work(api, storage_services, fields, words):
    reply = await post_form(api, "/api/upload-archive", {"prefix": "bad", **fields},
                            {"file": ("site.zip", zip_of(ARCHIVE))})
    assert reply.body["code"] == 40001 and words in reply.body["msg"], reply.body
    assert await _keys(storage_services, "bad") == []


async def test_archive_job_and_folder_store_chunks(api, storage_services, job_consumer,
                                                   tmp_path, monkeypatch):
    job = _ok(await post_form(api, "/api/upload-archive",
                              {"prefix": "job", "async": "true", "chunks": "true",
                               "chunk_tokens": "128"},
                              {"file": ("site.zip", zip_of(ARCHIVE))}))

    async def ended() -> dict[str, Any]:
        state = _ok(await api.call("GET", job["status_url"]))
        return state if state["state"] not in ("queued", "running") else {}

    state = await eventually(ended, timeout=20, what="the job ended")
    assert state["state"] == "done", state
    entries = {e["source"]: e for e in state["result"]["files"]}
    _, chunks = _stored_chunks(entries["docs/guide.md"])
    assert chunks and all(c["tokens"] <= 128 for c in chunks)

    root = tmp_path / "root"
    (root / "book").mkdir(parents=True)
    (root / "book" / "a.md").write_text("# A\n\nSome text.\n")
    monkeypatch.setattr(storage_services, "settings", dataclasses.replace(
        storage_services.settings, company_folder_roots={DOCS_CALLER_COMPANY: (root,)}))
    r = await post_form(api, "/md/convert-folder", {"folder_path": str(root / "book"),
                                                     "prefix": "folder", "chunks": "true"})
    assert r.status == 200 and r.body["ok"] is True, r.body
    entry = r.body["files"][0]
    assert entry["chunks"]["storage_url"].endswith("/folder/a.chunks.json")
    _, chunks = _stored_chunks(entry)
    assert [c["text"] for c in chunks] == ["# A\n\nSome text."]
    r = await post_form(api, "/md/convert-folder", {"folder_path": str(root / "book"),
                                                     "chunk_overlap": "4"})
    assert r.status == 400 and r.body["ok"] is False and "chunks=true" in r.body["error"]
