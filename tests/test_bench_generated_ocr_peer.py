"""The scans' peer of ``python -m bench generated`` (issue 32): ocrmypdf then pymupdf4llm read
each scan in the bench's own run and are scored beside ours; a scan either step fails on
scores as empty output and is counted (both steps stood in for here: no peers, no network)."""

from __future__ import annotations

from pathlib import Path

import pytest

from bench.fidelity import elements
from bench.generated.markdown import to_markdown
from bench.generated.sources import sources


def test_scans_are_read_by_ocrmypdf_then_pymupdf4llm_beside_ours(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    from bench.generated import bench, ocr_peer

    good, bad = sources()[:2]
    (tmp_path / "src").mkdir()
    (tmp_path / "scan").mkdir()
    for source in (good, bad):
        (tmp_path / "src" / f"{source.name}.md").write_text(to_markdown(source))
        (tmp_path / "scan" / f"{source.name}.pdf").write_bytes(b"%PDF-1.4 not a real scan")

    def fake_ocrmypdf(scan: Path, out: Path) -> tuple[str, float, float]:
        if scan.stem == bad.name:
            return "PriorOcrFoundError", 0.1, 0.1
        out.write_text(to_markdown(good))  # the text layer it would add
        return "", 0.1, 0.1

    def fake_reader(tool: str, mode: str,
                    jobs: list[dict[str, object]]) -> list[dict[str, object]]:
        assert (tool, mode) == ("pymupdf4llm", "text")
        return [{"text": Path(str(job["path"])).read_text(), "error": None} for job in jobs]

    monkeypatch.setattr(ocr_peer, "run_ocrmypdf", fake_ocrmypdf)
    monkeypatch.setattr(ocr_peer, "drive", fake_reader)
    assert "scan" in bench.PEERS[ocr_peer.OCR_PEER]
    results = bench.measure([good, bad], tmp_path, ("scan",), peers=(ocr_peer.OCR_PEER,))
    assert results.failures[ocr_peer.OCR_PEER, "scan"] == 1
    assert results.scores[ocr_peer.OCR_PEER, "scan", "all"].documents == 2
    headings = results.scores[ocr_peer.OCR_PEER, "scan", "all"].tallies["headings"]
    good_headings = sum(elements(to_markdown(good))["headings"].values())
    assert (headings.tp, headings.produced) == (good_headings, good_headings)
    assert headings.expected > good_headings  # the failed scan's headings are missed
    bench.report(results, ("scan",), [ocr_peer.OCR_PEER], 2)
    assert f"{ocr_peer.OCR_PEER} all" in capsys.readouterr().out
