"""One table of issue 34's ratios, each against its baseline measured in the same run.

Sections record their figures here as they run (:func:`record`); ``python -m bench``
ends with this section, which prints them. Run alone (``just bench summary``), it first
runs the sections whose figures are missing (request cost, Markdown to PDF warm/cold,
paged OCR, cost against size), with ``--quick`` when asked.
"""

from __future__ import annotations

import importlib
import os
from dataclasses import dataclass

from bench.common import machine, table


@dataclass(frozen=True)
class Figure:
    """One ratio (or bound) of the issue: its value, its goal and what it is measured against."""

    item: str
    name: str
    value: float
    goal: float
    baseline: str
    higher_is_better: bool = False

    @property
    def met(self) -> bool:
        return self.value >= self.goal if self.higher_is_better else self.value <= self.goal


FIGURES: list[Figure] = []
# the item of the issue -> the section that measures it
SECTIONS = {"2": ("request_cost", "run"), "3": ("render", "run_ratio"), "4": ("paged_ocr", "run"),
            "5": ("scale", "run")}


def record(item: str, name: str, value: float, goal: float, baseline: str, *,
           higher_is_better: bool = False) -> None:
    """Keep one figure for the summary table (a section's run may record several)."""
    FIGURES.append(Figure(item, name, value, goal, baseline, higher_is_better))


def rows() -> list[list[object]]:
    out: list[list[object]] = []
    for figure in sorted(FIGURES, key=lambda f: f.item):
        sign = ">=" if figure.higher_is_better else "<="
        out.append([figure.item, figure.name, f"{figure.value:.2f}", f"{sign} {figure.goal:g}",
                    figure.baseline, "yes" if figure.met else "NO"])
    return out


def run(quick: bool = False) -> None:
    for item, (module, function) in SECTIONS.items():
        if not any(f.item == item for f in FIGURES):
            getattr(importlib.import_module(f"bench.{module}"), function)(quick=quick)
    load = " / ".join(f"{x:.1f}" for x in os.getloadavg())
    table(f"Issue 34 summary: every ratio against its baseline in this run ({machine()}, "
          f"load average {load})",
          ["item", "figure", "value", "goal", "baseline (same run)", "met"], rows())
