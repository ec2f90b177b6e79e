"""Folder roots per company and ADMIN only: ``FOLDER_ROOTS=ACME:/srv/acme;BETA:/srv/beta``
gives each company its own roots, bare paths (the old global form) serve only the operator
token, a path outside the caller's roots answers exactly like a missing folder, and only an
ADMIN converts a folder. Over HTTP against the real app, SeaweedFS and the render pool."""

from __future__ import annotations

import dataclasses

import pytest

from tests.conftest import add_user, login, post_form
from tornado_app.app import make_app
from tornado_app.settings import Settings

OPERATOR = "operator-token-for-folder-roots"


def test_the_setting_reads_per_company_roots_and_refuses_other_forms():
    s = Settings.from_env({"FOLDER_ROOTS": "ACME:/srv/acme;BETA:/srv/b1:/srv/b2; /ops:/ops2"})
    assert {k: [str(p) for p in v] for k, v in s.company_folder_roots.items()} == {
        "ACME": ["/srv/acme"], "BETA": ["/srv/b1", "/srv/b2"]}
    assert [str(p) for p in s.folder_roots] == ["/ops", "/ops2"]  # the operator's only
    assert Settings.from_env({}).company_folder_roots == {}
    for bad in ("ACME", "ACME:relative/path", "docs", "ACME :/srv/a", "ACME:"):
        with pytest.raises(SystemExit) as refused:
            Settings.from_env({"FOLDER_ROOTS": bad})
        assert "FOLDER_ROOTS=ACME:/srv/acme;BETA:/srv/beta" in str(refused.value), bad


@pytest.fixture
def app(storage_services):
    return make_app(storage_services)


@pytest.fixture
def roots(storage_services, tmp_path):
    """Folders of ACME, BETA and the operator, each holding one Markdown book."""
    made = {}
    for owner in ("acme", "beta", "ops"):
        book = tmp_path / owner / "book"
        book.mkdir(parents=True)
        (book / "a.md").write_text(f"# {owner}\n")
        made[owner] = book
    storage_services.settings = dataclasses.replace(
        storage_services.settings, docs_api_token=OPERATOR, folder_roots=(tmp_path / "ops",),
        company_folder_roots={"ACME": (tmp_path / "acme",), "BETA": (tmp_path / "beta",)})
    return made


async def test_each_company_converts_only_its_own_roots_and_only_as_admin(
        api, storage_services, roots, tmp_path):
    await add_user(storage_services, "ACME", "ada", role="ADMIN")
    await add_user(storage_services, "ACME", "ann", role="ANNOTATOR")
    await add_user(storage_services, "BETA", "bob", role="ADMIN")
    ada, ann, bob = (await login(api, "ACME", "ada"), await login(api, "ACME", "ann"),
                     await login(api, "BETA", "bob"))

    mine = await post_form(api, "/md/convert-folder", {"folder_path": str(roots["acme"])},
                           token=ada)
    assert mine.status == 200 and mine.body["count"] == 1, mine.body
    theirs = await post_form(api, "/md/convert-folder", {"folder_path": str(roots["beta"])},
                             token=bob)
    assert theirs.status == 200 and theirs.body["count"] == 1

    missing = await post_form(api, "/md/convert-folder",
                              {"folder_path": str(roots["acme"] / "nope")}, token=ada)
    assert missing.status == 404 and missing.body["ok"] is False
    # another company's root, the operator's, the machine's, an escape: like a missing one
    for path in (roots["beta"], roots["ops"], "/etc", roots["acme"] / ".." / ".." / "beta"):
        other = await post_form(api, "/md/convert-folder", {"folder_path": str(path)},
                                token=ada)
        assert (other.status, other.body) == (missing.status, missing.body), path
        queued = await post_form(api, "/md/convert-folder",
                                 {"folder_path": str(path), "async": "true"}, token=ada)
        assert (queued.status, queued.body) == (missing.status, missing.body), path

    # ADMIN only: an ANNOTATOR of ACME may not convert ACME's folder
    low = await post_form(api, "/md/convert-folder", {"folder_path": str(roots["acme"])},
                          token=ann)
    assert low.status == 403 and low.body["ok"] is False

    # the operator's (global) roots serve the operator token, and only its roots
    ops = await post_form(api, "/md/convert-folder", {"folder_path": str(roots["ops"])},
                          token=OPERATOR)
    assert ops.status == 200 and ops.body["count"] == 1
    refused = await post_form(api, "/md/convert-folder", {"folder_path": str(roots["acme"])},
                              token=OPERATOR)
    assert refused.status == 404

    # GET /config shows a company its own roots only
    shown = (await api.call("GET", "/config", token=ada)).body["folder_roots"]
    assert shown == [str(tmp_path / "acme")]
    assert (await api.call("GET", "/config", token=bob)).body["folder_roots"] == [
        str(tmp_path / "beta")]
