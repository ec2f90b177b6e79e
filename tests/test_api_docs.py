"""docs/api.md's endpoint reference is generated from openapi.json and must not go stale."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from tornado_app import api_docs
from tornado_app.openapi import DESCRIPTION


def load_spec() -> dict:
    return json.loads(DESCRIPTION.read_text(encoding="utf-8"))


def generated_block(page: str) -> str:
    return page[page.index(api_docs.BEGIN) + len(api_docs.BEGIN):page.index(api_docs.END)]


def test_api_page_matches_openapi_json() -> None:
    """Fails when openapi.json changed and `python -m tornado_app.api_docs` was not run."""
    page = api_docs.API_PAGE.read_text(encoding="utf-8")
    assert generated_block(page) == "\n" + api_docs.render(load_spec())


def test_every_operation_has_a_row() -> None:
    block = api_docs.render(load_spec())
    for path, item in load_spec()["paths"].items():
        for method in item:
            if method in api_docs.METHODS:
                assert f"| {method.upper()} | `{path}` |" in block


def test_rows_say_who_may_call_and_what_is_sent() -> None:
    rows = {line.split(" | ")[1] + " " + line.split(" | ")[0].strip("| "): line
            for line in api_docs.render(load_spec()).splitlines()
            if line.startswith("| ") and "`/" in line}
    assert "| none | JSON `companyCode`, `username`, `password` |" in rows["`/api/auth/login` POST"]
    assert "| Bearer, ADMIN |" in rows["`/api/keys` POST"]
    assert "| Bearer, ADMIN | JSON `username`, `password`, `realName`, `role` |" in \
        rows["`/api/users` POST"]  # fields behind a $ref
    assert "| Bearer, any role | multipart `file`, `source_url`, `export`," in \
        rows["`/api/convert` POST"]
    assert "| none |" in rows["`/health` GET"]
    assert "| none, or Bearer |" in rows["`/metrics` GET"]


def test_a_changed_description_makes_the_page_stale(tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    """A new operation shows up in the block, and `--check` refuses the old page (exit 1)
    while the plain run rewrites it (then `--check` passes)."""
    spec = copy.deepcopy(load_spec())
    spec["paths"]["/api/new-thing"] = {"get": {
        "tags": ["operations"], "summary": "A new thing (ADMIN)", "security": [{"bearerAuth": []}],
        "responses": {"200": {"description": "ok"}}}}
    assert "| GET | `/api/new-thing` | A new thing (ADMIN) | Bearer, ADMIN | - | 200 |" in \
        api_docs.render(spec)

    described = tmp_path / "openapi.json"
    described.write_text(json.dumps(spec), encoding="utf-8")
    page = tmp_path / "api.md"
    page.write_text(api_docs.API_PAGE.read_text(encoding="utf-8"), encoding="utf-8")
    monkeypatch.setattr(api_docs, "DESCRIPTION", described)
    monkeypatch.setattr(api_docs, "API_PAGE", page)
    assert api_docs.main(["--check"]) == 1
    assert "stale" in capsys.readouterr().err
    assert api_docs.main([]) == 0
    assert "/api/new-thing" in page.read_text(encoding="utf-8")
    assert api_docs.main(["--check"]) == 0
