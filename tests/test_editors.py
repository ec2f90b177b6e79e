"""Folders and archives as everyday editors write them (Typora, Obsidian, VS Code on Windows,
a static site): every local reference an editor would resolve is uploaded and rewritten, the
rest stays exactly as written. Pure planning/rewriting first, then over HTTP against the real
SeaweedFS fixture as zip, tar.gz and a folder under ``FOLDER_ROOTS``."""

from __future__ import annotations

import base64
import dataclasses
import re
from pathlib import Path
from urllib.parse import quote

import marko
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from render_pool.batch.links import (
    css_references,
    markdown_references,
    rewrite_css,
    rewrite_markdown,
)
from render_pool.batch.plan import plan_document
from tests.archive_fixtures import tgz_of, zip_of
from tests.conftest import DOCS_CALLER_COMPANY, post_form
from tests.local_http import download
from tests.pdf_fixtures import tiny_png
from tests.tree_walk import marko_nodes
from tornado_app.app import make_app

PNG = tiny_png()


def png(tag: str) -> bytes:
    """A distinct PNG-prefixed file per name (assets are stored by content hash)."""
    return PNG + b"\0" + tag.encode()


# --------------------------------------------------------------------------- helpers


def destinations(markdown: str) -> list[str]:
    """Link and image destinations as a CommonMark parser (marko) sees them (front matter
    left out, as renderers that know it do), plus the ``src`` of raw ``<img>`` tags
    (Obsidian embeds with a size become one)."""
    out: list[str] = []
    body = re.sub(r"\A---\r?\n.*?^---\r?$", "", markdown, count=1, flags=re.S | re.M)
    for node in marko_nodes(marko.Markdown().parse(body)):  # front matter is not Markdown
        if isinstance(node, marko.inline.Link | marko.inline.Image):
            out.append(node.dest)
        if isinstance(node, marko.inline.InlineHTML | marko.block.HTMLBlock):
            out.extend(re.findall(r'src="([^"]*)"', str(node.children)))
    return out


def rewrite_with_fake_links(source: str, text: str, files: list[str]) -> tuple[str, dict]:
    """Plan and rewrite ``text`` as the service does, with ``https://s.test/<n>?sig`` links."""
    plan = plan_document(source, text, files)
    urls = {f: f"https://s.test/{i}?X-Amz-Signature=x" for i, f in enumerate(sorted(files))}
    mapping = {r.target: r.link(urls[r.file]) for r in plan.resolved if r.file}
    return rewrite_markdown(text, mapping), {r.target: r for r in plan.refs}


# --------------------------------------------------------------------------- pure


def test_typora_reading_chosen_by_the_file_that_exists() -> None:
    files = ["n.md", "images/图片 (1).png", "foo (bar)", "foo"]
    text = ("![](images/图片 (1).png) ![](images/gone (2).png \"T\") [x](foo (bar))\n"
            "`![](images/图片 (1).png)`\n")
    out, refs = rewrite_with_fake_links("n.md", text, files)
    assert refs["images/图片 (1).png"].file == "images/图片 (1).png"
    # CommonMark reads `foo` with title `(bar)`; the Typora reading names an existing file
    assert refs["foo (bar)"].file == "foo (bar)" and "foo" not in refs
    assert refs["images/gone (2).png"].status == "missing"
    assert "![](images/gone (2).png \"T\")" in out and "`![](images/图片 (1).png)`" in out
    assert destinations(out)[0].startswith("https://s.test/")
    # without the file, CommonMark's reading wins
    _, refs = rewrite_with_fake_links("n.md", "[x](foo (bar))", ["n.md", "foo"])
    assert refs["foo"].file == "foo"


def test_obsidian_forms() -> None:
    files = ["Daily/today.md", "attachments/diagram.png", "Projects/Plan.md", "a/x.png",
             "b/x.png", "Daily/x.png"]
    text = ("![[diagram.png]] ![[diagram.png|300]] ![[diagram.png|300x200]] "
            "![[diagram.png|A diagram]]\n[[plan]] [[Projects/Plan|the plan]] "
            "![[Plan#Goals and Risks]] [[x.png]] [[a/x.png]] [[nothing]]\n")
    out, refs = rewrite_with_fake_links("Daily/today.md", text, files)
    assert refs["[[plan]]"].file == "Projects/Plan.md"  # by name, case-insensitive, .md implied
    assert refs["[[x.png]]"].file == "Daily/x.png"  # relative to the note first
    assert refs["[[a/x.png]]"].file == "a/x.png"
    assert refs["[[nothing]]"].status == "missing" and "[[nothing]]" in out
    pic = refs["![[diagram.png]]"].file
    assert pic == "attachments/diagram.png"
    assert re.search(r'<img src="https://s.test/\d\?X-Amz-Signature=x" alt="diagram.png" '
                     r'width="300">', out)
    assert 'width="300" height="200">' in out and "![A diagram](https://s.test/" in out
    assert "[the plan](https://s.test/" in out
    assert re.search(r"\[Plan > Goals and Risks\]\(https://s\.test/\d\?X-Amz-Signature=x"
                     r"#goals-and-risks\)", out)
    assert not [d for d in destinations(out) if not d.startswith("https://")]


def test_windows_paths_odd_case_and_front_matter() -> None:
    files = ["notes/readme.md", "notes/images/shot.png", "notes/images/_x.png",
             "Docs/Guide.md", "two/A.png", "two/a.PNG"]
    text = ("---\r\ntitle: \"![x](images/shot.png)\"\r\n---\r\n"
            "![a](images\\Shot.PNG) ![b](.\\images\\SHOT.png) ![c](images\\_x.png)\r\n"
            "[g](..\\docs\\guide.md#setup) ![d](../two/a.png)\r\n\r\n    ![x](images\\shot.png)\r\n")
    out, refs = rewrite_with_fake_links("notes/readme.md", text, files)
    assert refs["images\\Shot.PNG"].file == "notes/images/shot.png"
    assert refs[".\\images\\SHOT.png"].file == "notes/images/shot.png"
    assert refs["images\\_x.png"].file == "notes/images/_x.png"
    assert refs["..\\docs\\guide.md#setup"].file == "Docs/Guide.md"
    assert refs["../two/a.png"].status == "missing"  # two files differ only by case
    assert "#setup)" in out  # the fragment is kept on the new link
    assert out.startswith("---\r\ntitle: \"![x](images/shot.png)\"\r\n---\r\n")
    assert "    ![x](images\\shot.png)\r\n" in out


def test_front_matter_values_only_when_they_name_a_file() -> None:
    files = ["n.md", "images/cover one.png", "img/a.png"]
    text = ("---\ntitle: My.Notes v1.2\ncover: images/cover one.png\nthumb: 'img/a.png'\n"
            "gallery:\n  - img/a.png\n  - img/none.png\nsite: https://x.y/a.png\n---\n# T\n")
    plan = plan_document("n.md", text, files)
    assert {r.target: r.file for r in plan.refs} == {
        "images/cover one.png": "images/cover one.png", "img/a.png": "img/a.png"}
    assert plan.failed == []  # a value naming no file is no reference
    out = rewrite_markdown(text, {r.target: "https://s/a?x=1&y='2'#f" for r in plan.refs})
    assert out == ("---\ntitle: My.Notes v1.2\ncover: \"https://s/a?x=1&y='2'#f\"\n"
                   "thumb: 'https://s/a?x=1&y=''2''#f'\ngallery:\n  - \"https://s/a?x=1&y='2'#f\"\n"
                   "  - img/none.png\nsite: https://x.y/a.png\n---\n# T\n")


def test_css_files_and_markdown_data_uris() -> None:
    css = ("/* url(commented.png) */ body{background:url(\"../img/bg.png\")}\n"
           "@import 'theme.css'; .a{background:url(../img/a.png)} .r{x:url(https://e.x/r.png)}")
    assert [r.target for r in css_references(css)] == ["../img/bg.png", "theme.css",
                                                       "../img/a.png"]
    out = rewrite_css(css, {"../img/bg.png": 'https://s/"q"', "../img/a.png": "https://s/(1) x"})
    assert 'url("https://s/%22q%22")' in out and "url(https://s/%281%29%20x)" in out
    assert "url(commented.png)" in out and "url(https://e.x/r.png)" in out
    uri = "data:image/png;base64," + base64.b64encode(PNG).decode()
    md = f"![pasted]({uri}) `![code]({uri})`"
    from render_pool.batch.links import data_uri_images

    assert data_uri_images(md, markdown=True) == [(uri, PNG, "image/png")]
    assert rewrite_markdown(md, {uri: "https://s/p.png"}).startswith("![pasted](https://s/p.png)")


# --------------------------------------------------------------------------- property

NAME_CHARS = st.sampled_from(list("abcXYZ019 -_.()[]#%&+'") + list("图片笔记中文") + ["😀", "🎉"])


def _balanced(name: str) -> bool:
    depth = 0
    for ch in name:
        depth += ch == "("
        depth -= ch == ")"
        if depth < 0:
            return False
    return depth == 0


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.text(NAME_CHARS, min_size=1, max_size=16))
def test_any_file_name_round_trips(stem: str) -> None:
    name = stem.strip() + ".png"
    files = ["notes/a.md", f"notes/img/{name}", "notes/img/other.png"]
    forms = [f"![]({quote('img/' + name)})"]  # percent-encoded, as most editors write
    if "<" not in name and ">" not in name:
        forms.append(f"![](<img/{name}>)")  # CommonMark angle brackets
    if _balanced(name) and "[" not in name and "]" not in name:
        forms.append(f"![](img/{name})")  # Typora: raw spaces, %, # and parentheses
    if not set(name) & set("[]|#^"):
        forms.append(f"![[{name}]]")  # Obsidian embed, found by name
    for form in forms:
        text = f"before {form} after\n"
        out, refs = rewrite_with_fake_links("notes/a.md", text, files)
        assert [r.file for r in refs.values()] == [f"notes/img/{name}"], (form, refs)
        url = f"https://s.test/{sorted(files).index(f'notes/img/{name}')}?X-Amz-Signature=x"
        assert destinations(out) == [url], (form, out)
        assert out.startswith("before ") and out.endswith(" after\n")
        assert [r.target for r in markdown_references(out)] == []


# --------------------------------------------------------------------------- vaults

DATA_PNG = png("pasted")
DATA_URI = "data:image/png;base64," + base64.b64encode(DATA_PNG).decode()


@dataclasses.dataclass
class Vault:
    """Files of one editor's folder, what each document's references must resolve to
    (original text -> source file) and what must stay as written (missing)."""

    name: str
    files: dict[str, bytes]
    resolved: dict[str, dict[str, str]]
    missing: dict[str, set[str]]
    kept: dict[str, list[str]]  # text that must survive byte for byte in the stored document


def typora() -> Vault:
    doc = ("# 笔记\n\n![](images/图片 (1).png)\n\n![shot](images/screen shot.png \"Shot\")\n\n"
           f"![pasted]({DATA_URI})\n\n[spec](docs/spec v2.pdf) and ![](images/missing (2).png)\n\n"
           "Code: `![](images/图片 (1).png)` and [web](https://typora.io/#x) [top](#笔记)\n")
    return Vault("typora", {
        "Typora/笔记.md": doc.encode(),
        "Typora/images/图片 (1).png": png("tu"),
        "Typora/images/screen shot.png": png("shot"),
        "Typora/docs/spec v2.pdf": b"%PDF-1.4 spec v2",
    }, {"Typora/笔记.md": {"images/图片 (1).png": "Typora/images/图片 (1).png",
                          "images/screen shot.png": "Typora/images/screen shot.png",
                          "docs/spec v2.pdf": "Typora/docs/spec v2.pdf"}},
        {"Typora/笔记.md": {"images/missing (2).png"}},
        {"Typora/笔记.md": ["`![](images/图片 (1).png)`", "![](images/missing (2).png)",
                           "[web](https://typora.io/#x)", "[top](#笔记)"]})


def obsidian() -> Vault:
    daily = ("# Today\n\n![[diagram.png]]\n\n![[diagram.png|300]]\n\n[[Plan]] and "
             "[[plan|the plan]] and ![[Plan#Goals]]\n\n[[Missing note]] ![[nope.png]]\n\n"
             "```\n![[diagram.png]]\n```\n")
    return Vault("obsidian", {
        "Vault/Daily/2024-01-01.md": daily.encode(),
        "Vault/Projects/plan.md": b"# Plan\n\n## Goals\n\nShip.\n",
        "Vault/attachments/diagram.png": png("diagram"),
    }, {"Vault/Daily/2024-01-01.md": {"![[diagram.png]]": "Vault/attachments/diagram.png",
                                      "![[diagram.png|300]]": "Vault/attachments/diagram.png",
                                      "[[Plan]]": "Vault/Projects/plan.md",
                                      "[[plan|the plan]]": "Vault/Projects/plan.md",
                                      "![[Plan#Goals]]": "Vault/Projects/plan.md"}},
        {"Vault/Daily/2024-01-01.md": {"[[Missing note]]", "![[nope.png]]"}},
        {"Vault/Daily/2024-01-01.md": ["```\n![[diagram.png]]\n```", "[[Missing note]]",
                                       "![[nope.png]]"]})


def vscode_windows() -> Vault:
    doc = ("---\r\ntitle: \"see ![x](images/shot.png)\"\r\ndate: 2024.01.01\r\n"
           "cover: images\\sub\\pic.png\r\n---\r\n# Readme\r\n\r\n"
           "![a](images\\Shot.PNG)\r\n\r\n![b](.\\images\\sub\\Pic.png)\r\n\r\n"
           "[guide](..\\Docs\\GUIDE.md#setup)\r\n\r\n    ![x](images\\shot.png)\r\n\r\n"
           "![gone](images\\gone.png)\r\n")
    return Vault("vscode", {
        "proj/notes/readme.md": doc.encode(),
        "proj/notes/images/shot.png": png("shot-win"),
        "proj/notes/images/sub/pic.png": png("pic"),
        "proj/docs/guide.md": b"# Guide\r\n\r\n## Setup\r\n",
    }, {"proj/notes/readme.md": {"images\\Shot.PNG": "proj/notes/images/shot.png",
                                 "images\\sub\\pic.png": "proj/notes/images/sub/pic.png",
                                 ".\\images\\sub\\Pic.png": "proj/notes/images/sub/pic.png",
                                 "..\\Docs\\GUIDE.md#setup": "proj/docs/guide.md"}},
        {"proj/notes/readme.md": {"images\\gone.png"}},
        {"proj/notes/readme.md": ["title: \"see ![x](images/shot.png)\"", "date: 2024.01.01",
                                  "    ![x](images\\shot.png)", "![gone](images\\gone.png)"]})


def static_site() -> Vault:
    index = ('<!doctype html><html><head><link rel="stylesheet" href="css/site.css">'
             "<style>.hero{background:url(img/hero.jpg)}</style></head><body><h1>Site</h1>"
             '<img src="img/a.png" srcset="img/a-1x.png 1x, img/a-2x.png 2x" alt="A">'
             '<picture><source srcset="img/b.webp"><img src="img/a.png" alt="B"></picture>'
             '<video poster="img/poster.jpg" src="media/v.mp4"></video>'
             "<div style=\"background-image:url('img/bg.png')\">x</div>"
             '<img src="img/missing.png" alt="gone"><a href="notes.md">notes</a></body></html>')
    notes = ('# Notes\n\n<img srcset="img/a-2x.png 2x" src="img/a.png">\n\n'
             '<p style="background:url(img/bg.png)">styled</p>\n\n`<img src="img/a.png">`\n')
    return Vault("site", {
        "site/index.html": index.encode(),
        "site/notes.md": notes.encode(),
        "site/css/site.css": (b"/* url(img/commented.png) */\nbody{background:url(\"../img/bg.png\")}"
                              b"\n.f{src:url(../fonts/missing.woff)}\n"),
        "site/img/hero.jpg": b"\xff\xd8\xffhero",
        "site/img/a.png": png("a"), "site/img/a-1x.png": png("a1"), "site/img/a-2x.png": png("a2"),
        "site/img/b.webp": b"RIFFwebp", "site/img/poster.jpg": b"\xff\xd8\xffposter",
        "site/media/v.mp4": b"\0\0\0\x18ftypmp42", "site/img/bg.png": png("bg"),
    }, {"site/index.html": {"css/site.css": "site/css/site.css",
                            "img/hero.jpg": "site/img/hero.jpg", "img/a.png": "site/img/a.png",
                            "img/a-1x.png": "site/img/a-1x.png", "img/a-2x.png": "site/img/a-2x.png",
                            "img/b.webp": "site/img/b.webp", "img/poster.jpg": "site/img/poster.jpg",
                            "media/v.mp4": "site/media/v.mp4", "img/bg.png": "site/img/bg.png",
                            "notes.md": "site/notes.md"},
        "site/notes.md": {"img/a-2x.png": "site/img/a-2x.png", "img/a.png": "site/img/a.png",
                          "img/bg.png": "site/img/bg.png"}},
        {"site/index.html": {"img/missing.png", "css/site.css: ../fonts/missing.woff"},
         "site/notes.md": set()},
        {"site/notes.md": ['`<img src="img/a.png">`']})


VAULTS = {v.name: v for v in (typora(), obsidian(), vscode_windows(), static_site())}


@pytest.fixture
def app(storage_services):
    return make_app(storage_services)


async def run_vault(api, storage_services, monkeypatch, tmp_path: Path, vault: Vault,
                    transport: str) -> list[dict]:
    if transport == "folder":
        root = tmp_path / "roots"
        for name, data in vault.files.items():
            path = root / vault.name / name
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(data)
        monkeypatch.setattr(storage_services, "settings", dataclasses.replace(
            storage_services.settings, company_folder_roots={DOCS_CALLER_COMPANY: (root,)}))
        reply = await post_form(api, "/md/convert-folder",
                                {"folder_path": str(root / vault.name), "prefix": vault.name})
        assert reply.status == 200 and reply.body["ok"] is True, reply.body
        return reply.body["files"]
    data = zip_of(vault.files) if transport == "zip" else tgz_of(vault.files)
    reply = await post_form(api, "/api/upload-archive", {"prefix": vault.name},
                            {"file": (f"{vault.name}.{transport}", data)})
    assert reply.status == 200 and reply.body["code"] == 0, reply.body
    return reply.body["data"]["files"]


@pytest.mark.parametrize("transport", ["zip", "tar.gz", "folder"])
@pytest.mark.parametrize("editor", list(VAULTS))
async def test_editor_vault(api, storage_services, monkeypatch, tmp_path, editor, transport):
    vault = VAULTS[editor]
    entries = {e["source"]: e for e in await run_vault(api, storage_services, monkeypatch,
                                                       tmp_path, vault, transport)}
    assert set(vault.resolved) <= set(entries)
    for source, expected in vault.resolved.items():
        entry = entries[source]
        froms = {m["from"]: m["to"] for m in entry["mappings"]}
        assert set(froms) == set(expected), (source, froms)
        assert {f["ref"] for f in entry["failed"]} == vault.missing[source], entry["failed"]
        for original, file in expected.items():
            status, body = download(froms[original])
            assert status == 200, (original, froms[original])
            if file.endswith(".css"):
                css = body.decode()
                assert "url(../fonts/missing.woff)" in css and "../img/bg.png" not in css
                bg = re.search(r'url\("([^"]+)"\)', css).group(1)
                assert download(bg) == (200, vault.files["site/img/bg.png"])
            elif file.endswith(".md"):
                assert body.startswith(b"# ")  # the stored converted note
            else:
                assert body == vault.files[file], original
        status, stored = download(entry["storage_presigned_url"])
        assert status == 200
        text = stored.decode()
        for keep in vault.kept.get(source, []):
            assert keep in text, keep
        assert "data:image" not in text
        local = [d for d in destinations(text) if not d.startswith(("https://", "http://", "#"))]
        assert set(local) <= vault.missing[source], local  # only the missing ones, as written
        assert all(m in text for m in vault.missing[source] if ":" not in m)
    if editor == "typora":
        text = download(entries["Typora/笔记.md"]["storage_presigned_url"])[1].decode()
        pasted = re.search(r"!\[pasted\]\((\S+)\)", text).group(1)
        assert download(pasted) == (200, DATA_PNG)


def test_hostile_lines_are_read_in_bounded_time() -> None:
    """Runs of openers that never close (a quadratic scan would hang this test) and a long
    line of Typora links: each is read once, correctly."""
    assert plan_document("n.md", "![](" * 20000, ["n.md"]).refs == []
    assert plan_document("n.md", "[a](b " * 20000 + "[[" * 20000, ["n.md"]).refs == []
    text = "[x](a b.png) " * 5000
    out, refs = rewrite_with_fake_links("n.md", text, ["n.md", "a b.png"])
    assert list(refs) == ["a b.png"] and out.count("](https://s.test/0?") == 5000
