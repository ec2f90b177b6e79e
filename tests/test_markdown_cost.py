"""Markdown parsing cost is capped before parsing: hostile inputs answer 40003 at once, with
the figure and the limit in the message; legitimate large documents still pass.

Why: ``/md/convert target=docx`` with ``"[a](" * 25000`` (100 KB) held two pool workers for
120 s, and 50,000 footnotes for 100 s. Times are compared with a trivial conversion measured
in the same test (a ratio), never with a fixed number of seconds.
"""

from __future__ import annotations

import dataclasses
import time

import pytest

from render_pool.engine.markdown.limits import MarkdownLimits, check_cost, check_markdown
from render_pool.errors import CorruptDocument
from tests.conftest import post_form
from tornado_app.app import make_app
from tornado_app.settings import Settings

HOSTILE = {
    "link openers": ("[a](" * 25000, "25000 link openers"),
    "image openers": ("![a](" * 25000, "25000 link openers"),
    "footnotes": ("".join(f"[^{i}]: note\n\n" for i in range(50000)),
                  "50000 footnote definitions"),
    "reference definitions": ("".join(f"[r{i}]: http://x/{i}\n" for i in range(5000)),
                              "5000 link reference definitions in one block"),
    "delimiter runs": ("*a _b " * 200000, "400000 emphasis delimiter runs"),
    "nesting": ("> " * 200 + "deep\n", "deeper than 32 levels"),
}


def legit_readme(sections: int) -> str:
    """A large, ordinary README: headings, links, images, badges, lists, code, footnotes
    and reference definitions."""
    parts = [f"## Section {i}\n\nSome text with a [link {i}](https://example.com/p/{i}), "
             f"![image](img/{i}.png), `code`, *emphasis*, **strong**, snake_case_name"
             f"[^{i % 300}] and a [reference][r{i % 500}].\n\n- item [x](y{i}.md)\n"
             f"- [![badge](https://img.example/b{i}.svg)](https://ci.example/{i})"
             "[![c](https://img.example/c.svg)](https://ci.example)\n\n"
             "```python\nprint('[a](' * 3)\n```\n\n" for i in range(sections)]
    parts += [f"[^{i}]: note {i}\n" for i in range(300)]
    parts += [f"[r{i}]: https://example.com/r/{i}\n" for i in range(500)]
    return "".join(parts)


def test_legit_two_megabyte_readme_passes() -> None:
    text = legit_readme(6500)
    assert len(text) > 2_000_000
    check_markdown(text, MarkdownLimits())  # no 40003


@pytest.mark.parametrize("name", list(HOSTILE))
def test_hostile_inputs_refused_with_figure_and_limit(name: str) -> None:
    text, figure = HOSTILE[name]
    with pytest.raises(CorruptDocument) as caught:
        check_markdown(text, MarkdownLimits())
    assert figure in caught.value.message
    assert "limit" in caught.value.message


def test_limits_are_settings() -> None:
    settings = Settings.from_env({"MARKDOWN_MAX_FOOTNOTES": "10"})
    assert settings.markdown_max_footnotes == 10
    from tornado_app.documents.markdown import markdown_limits

    limits = markdown_limits(settings)
    assert limits.footnotes == 10
    message = check_cost("".join(f"[^{i}]: n\n" for i in range(11)), limits,
                         raise_error=False)
    assert message == "Markdown has 11 footnote definitions; the limit is 10"


@pytest.fixture
def app(docs_services):
    return make_app(docs_services)


async def _timed(api, text: str, target: str):
    start = time.perf_counter()
    reply = await post_form(api, "/md/convert", {"markdown_text": text, "target": target})
    return reply, time.perf_counter() - start


@pytest.mark.parametrize("target", ["docx", "pdf"])
async def test_hostile_markdown_answers_40003_fast_over_http(api, target):
    # at rest: a small ordinary document, converted for real (the ratio's unit)
    ok, at_rest = await _timed(api, legit_readme(3), target)
    assert ok.status == 200 and ok.raw[:2] in (b"PK", b"%P"), ok.body
    for name, (text, figure) in HOSTILE.items():
        if len(text.encode()) > 10 * 1024 * 1024:
            continue
        reply, took = await _timed(api, text, target)
        assert reply.status == 200 and reply.body["code"] == 40003, (name, reply.body)
        assert figure in reply.body["msg"] and "the limit is" in reply.body["msg"], name
        # refused before any parse: not slower than converting a tiny document
        assert took < 3 * at_rest, (name, took, at_rest)


async def test_cost_limits_follow_the_settings_over_http(api, docs_services, monkeypatch):
    monkeypatch.setattr(docs_services, "settings", dataclasses.replace(
        docs_services.settings, markdown_max_link_openers=10))
    reply = await post_form(api, "/md/convert", {"markdown_text": "[a](b) " * 11,
                                                 "target": "docx"})
    assert reply.body["code"] == 40003
    assert reply.body["msg"] == "Markdown has 11 link openers (']('); the limit is 10"
    reply = await post_form(api, "/md/convert", {"markdown_text": "[a](b) " * 10,
                                                 "target": "docx"})
    assert reply.status == 200 and reply.raw[:2] == b"PK"
