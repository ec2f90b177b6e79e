"""The pdf-layout bench's peer comparison: a peer's output given as text or tables is scored
with the service's metrics, a failed file scores 0, and the driver gives each file its own
time limit (a fake peer interpreter stands in for the peers' venvs: no network, no peers)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from bench import pdf_scoring
from bench.pdf_peers import drive, score_tables, score_text

# pdftotext's reading of a two-column page: the left column, then the right one
LEFT = "the quick brown fox jumps over the lazy dog near the river bank today"
RIGHT = "seven small swans swim slowly south while rain falls on the hill"
REF = pdf_scoring.words(f"{LEFT}\n{RIGHT}", markdown=False)


def _interleaved() -> str:
    """Both columns' lines merged across the gutter, as a reader blind to columns does."""
    left, right = LEFT.split(), RIGHT.split()
    return "\n".join(" ".join(left[i:i + 4] + right[i:i + 4]) for i in range(0, 16, 4))


def test_reading_order_of_a_peer_text_scores_columns_read_in_turn_above_merged_lines():
    right = score_text(f"## {LEFT}\n\n**{RIGHT}**", REF)  # Markdown marks are no words
    merged = score_text(_interleaved(), REF)
    assert right["order"] == pytest.approx(1.0)
    assert right["recall"] == pytest.approx(1.0)
    assert right["ratio"] == pytest.approx(1.0)
    assert merged["recall"] == pytest.approx(1.0)  # the same words...
    assert merged["order"] < 0.7  # ...in the wrong order
    # a repeated paragraph shows in the words ratio, not in recall
    assert score_text(f"{LEFT}\n{RIGHT}\n{RIGHT}", REF)["ratio"] > 1.4


def test_a_failed_file_scores_zero():
    assert score_text(None, REF) == {"order": 0.0, "ratio": 0.0, "recall": 0.0}
    assert score_tables(None, [[["a", "b"]]])["f1"] == 0.0


def test_tables_found_by_a_peer_are_scored_by_cells_and_structure():
    expected = [[["Year", "Sales"], ["2020", "10"], ["2021", "12"]]]
    same = score_tables([[["Year", "Sales"], ["2020", "10"], ["2021", None]],
                         [["2021", "12"]]], expected)
    assert same["tables"] == 2
    assert same["one_col"] == 0
    assert 0.8 < same["f1"] < 1.0  # one cell found in the wrong table, one empty (None)
    whole = score_tables([[["Year", "Sales"], ["2020", "10"], ["2021", "12"]]], expected)
    assert whole["f1"] == pytest.approx(1.0)
    assert whole["structure"] == pytest.approx(1.0)
    # every row as one cell: the cells are wrong and the table is a one-column table
    lines = score_tables([[["Year Sales"], ["2020 10"], ["2021 12"]]], expected)
    assert lines["one_col"] == 1
    assert lines["f1"] == 0.0
    assert lines["structure"] < whole["structure"]


FAKE_PEER = """\
import json, sys, time
jobs = json.load(open(sys.argv[-1]))
print(json.dumps({"ready": True}), flush=True)
for i, job in enumerate(jobs):
    if "hang" in job["path"]:
        time.sleep(60)
    if "crash" in job["path"]:
        raise SystemExit(3)
    print(json.dumps({"i": i, "seconds": 0.01, "error": None,
                      "text": "read " + job["path"]}), flush=True)
"""


@pytest.mark.slow
def test_a_peer_that_hangs_or_dies_on_a_file_fails_that_file_only(tmp_path: Path):
    fake = tmp_path / "fake-python"
    fake.write_text(f"#!{sys.executable}\n{FAKE_PEER}")
    fake.chmod(0o755)
    jobs = [{"path": p, "page": None} for p in ("a.pdf", "hang.pdf", "b.pdf", "crash.pdf",
                                                "c.pdf")]
    res = drive("fake", "text", jobs, python=str(fake), limit=2.0)
    assert [r["error"] for r in res] == [None, "timed out after 2 s", None,
                                         "runner died (exit 3)", None]
    assert [r.get("text") for r in res] == ["read a.pdf", None, "read b.pdf", None,
                                            "read c.pdf"]


@pytest.mark.slow
def test_a_peer_that_cannot_start_fails_every_file(tmp_path: Path):
    jobs = [{"path": "a.pdf", "page": None}, {"path": "b.pdf", "page": 1}]
    res = drive("no-such-peer", "text", jobs, python=sys.executable)
    assert [r["error"] for r in res] == ["runner exited 1 before it was ready"] * 2
    json.dumps(res)  # plain data, as the tables need
