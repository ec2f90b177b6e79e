"""``python -m tornado_app convert``: the service's conversion from the command line.

The command runs as a user runs it (a child process, no servers) and its Markdown is held to
what ``POST /api/convert`` answers for the same files.
"""

from __future__ import annotations

import random
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import CORPUS, post_form
from tornado_app.app import make_app

pytestmark = pytest.mark.slow
ROOT = Path(__file__).resolve().parents[1]
DATA = Path(__file__).parent / "data"
OWN_SAMPLE = [DATA / "docx/docling/word_tables.docx", DATA / "docx/docling/docx_lists.docx",
              DATA / "pdf/multi_page.pdf", DATA / "pdf/code_and_formula.pdf"]


def cli(*args: str | Path, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "tornado_app", "convert", *map(str, args)],
                          cwd=cwd, capture_output=True, text=True, timeout=600)


def corpus_sample() -> list[Path]:
    """Six PDFs and six DOCX files of the realworld corpus, the same each run, when the
    corpus is beside the checkout."""
    if not (CORPUS / "realworld").is_dir():
        return []
    rng = random.Random(20261128)
    picked: list[Path] = []
    for kind in ("pdf", "docx"):
        files = sorted((CORPUS / "realworld" / kind).glob(f"*.{kind}"))
        picked += rng.sample(files, min(6, len(files)))
    return picked


@pytest.fixture
def app(docs_services):
    return make_app(docs_services)


async def test_the_command_writes_what_the_service_answers(api, tmp_path):
    inputs = OWN_SAMPLE + corpus_sample()
    out = tmp_path / "out"
    done = cli(*inputs, "-o", out, "--progress", "always")
    failed = {m.group(1) for m in re.finditer(r"^  (.+): \d{5} ", done.stderr, re.M)}
    assert f"{len(inputs) - len(failed)} of {len(inputs)} converted" in done.stderr
    assert "[" + "#" * 30 + f"] {len(inputs)}/{len(inputs)}" in done.stderr  # the bar's end
    compared = 0
    for path in inputs:
        reply = await post_form(api, "/api/convert", {},
                                {"file": (path.name, path.read_bytes())})
        assert reply.status == 200, reply.body
        if str(path) in failed:
            assert reply.body["code"] != 0, (path, reply.body)
            assert f"{path}: {reply.body['code']} " in done.stderr
            continue
        assert reply.body["code"] == 0, (path, reply.body)
        written = (out / f"{path.stem}.md").read_text(encoding="utf-8")
        assert written == reply.body["data"]["content"], path
        for warning in reply.body["data"]["warnings"]:  # what the service warns, it says too
            assert f"warning: {path}: {warning}" in done.stderr
        compared += 1
    assert compared >= len(OWN_SAMPLE)
    assert done.returncode == (1 if failed else 0)


def test_one_file_prints_its_output_and_a_failure_sets_the_status(tmp_path):
    docx = DATA / "docx/docling/word_tables.docx"
    done = cli(docx, "--export", "html")
    assert done.returncode == 0, done.stderr
    assert "<table" in done.stdout and "Header 0.0" in done.stdout
    assert done.stderr == ""  # no summary, no logs for one good file
    broken = tmp_path / "broken.docx"
    broken.write_bytes(docx.read_bytes()[:2000])  # a cut zip
    done = cli(docx, broken, "-o", tmp_path / "out", "--progress", "never")
    assert done.returncode == 1
    assert "1 of 2 converted, 1 failed:" in done.stderr
    assert f"{broken}: 40003 " in done.stderr
    assert "Traceback" not in done.stderr
    assert (tmp_path / "out" / "word_tables.md").is_file()
    assert not (tmp_path / "out" / "broken.md").exists()


def test_folders_are_walked_and_names_kept_apart(tmp_path):
    docx = (DATA / "docx/docling/word_tables.docx").read_bytes()
    (tmp_path / "in" / "a").mkdir(parents=True)
    (tmp_path / "in" / "b").mkdir()
    (tmp_path / "in" / "a" / "report.docx").write_bytes(docx)
    (tmp_path / "in" / "b" / "report.docx").write_bytes(docx)
    (tmp_path / "in" / "notes.txt").write_text("not picked up by a folder walk")
    (tmp_path / "in" / ".hidden").mkdir()
    (tmp_path / "in" / ".hidden" / "secret.docx").write_bytes(docx)
    done = cli(tmp_path / "in", "-o", tmp_path / "out", "--progress", "never")
    assert done.returncode == 0, done.stderr
    assert "2 of 2 converted" in done.stderr
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["report-2.md", "report.md"]


def test_wrong_command_lines_say_why(tmp_path):
    docx = DATA / "docx/docling/word_tables.docx"
    two = cli(docx, docx)
    assert two.returncode == 2 and "give -o DIR" in two.stderr
    missing = cli(tmp_path / "nothing.pdf")
    assert missing.returncode == 2 and "no such file or folder" in missing.stderr
    bad = cli(docx, "--export", "pptx")
    assert bad.returncode == 2 and "invalid choice" in bad.stderr


def test_a_warning_of_one_file_is_printed_beside_its_output(tmp_path):
    import openpyxl

    book = openpyxl.Workbook()  # openpyxl saves formulas without a computed value
    book.active["A1"], book.active["A2"] = 2, "=A1*3"
    book.save(tmp_path / "sums.xlsx")
    done = cli(tmp_path / "sums.xlsx")
    assert done.returncode == 0, done.stderr
    assert "| 2 |" in done.stdout
    assert done.stderr.startswith(f"warning: {tmp_path / 'sums.xlsx'}: "), done.stderr
    assert "(A2)" in done.stderr
