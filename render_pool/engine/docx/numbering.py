"""Numbering definitions of a DOCX (numbering.xml) and the counters Word keeps while reading.

Why: whether a paragraph is a bullet or a numbered item, its nesting level, and the number it
shows all come from ``w:num`` -> ``w:abstractNum`` -> ``w:lvl`` with overrides. Word keeps one
counter set per abstract definition (separate ``w:num`` instances continue the count unless
they carry a ``startOverride``), and a higher level item resets the deeper levels.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field

from lxml import etree

from render_pool.engine.docx.package import W

_W = f"{{{W}}}"


@dataclass
class Level:
    """One level of a list definition."""

    start: int = 1
    fmt: str = "decimal"
    text: str = ""
    restart: int | None = None  # lvlRestart: restart after this (1-based) level


@dataclass
class NumInstance:
    """A ``w:num``: which abstract list it uses and its overrides."""

    abstract: str
    overrides: dict[int, Level] = field(default_factory=dict)
    start_overrides: dict[int, int] = field(default_factory=dict)


def _int(el: etree._Element | None, default: int) -> int:
    if el is None:
        return default
    try:
        return int(el.get(_W + "val", default))
    except (TypeError, ValueError):
        return default


def _parse_level(el: etree._Element) -> Level:
    fmt = el.find(_W + "numFmt")
    text = el.find(_W + "lvlText")
    restart = el.find(_W + "lvlRestart")
    return Level(
        start=_int(el.find(_W + "start"), 1),
        fmt=(fmt.get(_W + "val", "decimal") if fmt is not None else "decimal"),
        text=(text.get(_W + "val", "") if text is not None else ""),
        restart=_int(restart, 0) if restart is not None else None,
    )


def _roman(n: int) -> str:
    vals = [(1000, "m"), (900, "cm"), (500, "d"), (400, "cd"), (100, "c"), (90, "xc"),
            (50, "l"), (40, "xl"), (10, "x"), (9, "ix"), (5, "v"), (4, "iv"), (1, "i")]
    out = ""
    for v, s in vals:
        while n >= v:
            out += s
            n -= v
    return out or "0"


def _letters(n: int) -> str:
    if n <= 0:
        return "0"
    return chr(ord("a") + (n - 1) % 26) * ((n - 1) // 26 + 1)


def format_number(value: int, fmt: str) -> str:
    """Render one counter in a numbering format (decimal, letters, roman...)."""
    if fmt == "lowerLetter":
        return _letters(value)
    if fmt == "upperLetter":
        return _letters(value).upper()
    if fmt == "lowerRoman":
        return _roman(value)
    if fmt == "upperRoman":
        return _roman(value).upper()
    if fmt == "decimalZero":
        return f"{value:02d}"
    if fmt in ("bullet", "none"):
        return ""
    return str(value)


class Numbering:
    """Parsed numbering definitions plus running counters."""

    def __init__(self, root: etree._Element | None, styles_num: dict[str, str] | None = None):
        self.abstracts: dict[str, dict[int, Level]] = {}
        self.abstract_style_link: dict[str, str] = {}
        self.nums: dict[str, NumInstance] = {}
        self.counters: dict[str, dict[int, int]] = {}
        self._started: set[str] = set()
        self._styles_num = styles_num or {}
        # numId -> its abstract definition's id (see _abstract_id): the definitions never
        # change once parsed, so the copies of fresh() share it
        self._abstract_ids: dict[str, str | None] = {}
        if root is None:
            return
        for ab in root.iter(_W + "abstractNum"):
            aid = ab.get(_W + "abstractNumId", "")
            levels = {}
            for lvl in ab.findall(_W + "lvl"):
                try:
                    ilvl = int(lvl.get(_W + "ilvl", "0"))
                except ValueError:
                    continue
                levels[ilvl] = _parse_level(lvl)
            self.abstracts[aid] = levels
            link = ab.find(_W + "numStyleLink")
            if link is not None:
                self.abstract_style_link[aid] = link.get(_W + "val", "")
        for num in root.iter(_W + "num"):
            nid = num.get(_W + "numId", "")
            abs_el = num.find(_W + "abstractNumId")
            inst = NumInstance(abstract=abs_el.get(_W + "val", "") if abs_el is not None else "")
            for ov in num.findall(_W + "lvlOverride"):
                try:
                    ilvl = int(ov.get(_W + "ilvl", "0"))
                except ValueError:
                    continue
                so = ov.find(_W + "startOverride")
                if so is not None:
                    inst.start_overrides[ilvl] = _int(so, 1)
                lvl = ov.find(_W + "lvl")
                if lvl is not None:
                    inst.overrides[ilvl] = _parse_level(lvl)
            self.nums[nid] = inst

    def fresh(self) -> Numbering:
        """A copy that shares the parsed definitions (never changed after parsing) and has
        counters of its own, as a newly parsed one would."""
        twin = copy.copy(self)
        twin.counters = {}
        twin._started = set()
        return twin

    def _abstract_id(self, num_id: str) -> str | None:
        """The id of the abstract definition ``num_id`` uses, through numbering style links;
        kept per numId, as every list item asks for it several times."""
        try:
            return self._abstract_ids[num_id]
        except KeyError:
            found = self._abstract_ids[num_id] = self._find_abstract_id(num_id)
            return found

    def _find_abstract_id(self, num_id: str) -> str | None:
        inst = self.nums.get(num_id)
        if inst is None:
            return None
        aid = inst.abstract
        # numStyleLink: the real definition hangs off a numbering style's numId.
        for _ in range(3):
            style = self.abstract_style_link.get(aid)
            if not style:
                break
            linked_num = self._styles_num.get(style)
            linked = self.nums.get(linked_num or "")
            if linked is None or linked.abstract == aid:
                break
            aid = linked.abstract
        return aid

    def level(self, num_id: str, ilvl: int) -> Level | None:
        """Effective level definition of a paragraph's (numId, ilvl), or None if not a list."""
        inst = self.nums.get(num_id)
        if inst is None:
            return None
        if ilvl in inst.overrides:
            return inst.overrides[ilvl]
        aid = self._abstract_id(num_id)
        levels = self.abstracts.get(aid or "", {})
        if ilvl in levels:
            return levels[ilvl]
        return Level(fmt="bullet") if not levels else None

    def is_list(self, num_id: str | None) -> bool:
        """Whether a numId points at a real list (numId 0 removes numbering)."""
        return bool(num_id) and num_id != "0" and num_id in self.nums

    def list_key(self, num_id: str) -> str:
        """Identity of the list a numId belongs to (its abstract definition)."""
        return self._abstract_id(num_id) or num_id

    def advance(self, num_id: str, ilvl: int) -> tuple[int, list[int]]:
        """Count one item at (num_id, ilvl); returns its value and the values of all levels."""
        key = self.list_key(num_id)
        counters = self.counters.setdefault(key, {})
        inst = self.nums.get(num_id)
        if inst is not None and num_id not in self._started:
            self._started.add(num_id)
            if inst.start_overrides:
                for lv, start in inst.start_overrides.items():
                    counters[lv] = start - 1
                    for deeper in list(counters):
                        if deeper > lv:
                            del counters[deeper]
        lvl = self.level(num_id, ilvl) or Level()
        if ilvl in counters:
            counters[ilvl] += 1
        else:
            counters[ilvl] = lvl.start
        for deeper in list(counters):
            if deeper > ilvl:
                dl = self.level(num_id, deeper)
                if dl is None or dl.restart != 0:
                    del counters[deeper]
        for i in range(ilvl):  # a skipped parent level counts as shown at its start value
            if i not in counters:
                counters[i] = (self.level(num_id, i) or Level()).start
        values = [counters[i] for i in range(ilvl + 1)]
        return counters[ilvl], values

    def label(self, num_id: str, ilvl: int, values: list[int]) -> str:
        """Number text as Word shows it ("1.2.", "a)"), empty for bullets."""
        lvl = self.level(num_id, ilvl)
        if lvl is None or lvl.fmt in ("bullet", "none"):
            return ""
        text = lvl.text or f"%{ilvl + 1}."
        for i, v in enumerate(values):
            li = self.level(num_id, i) or Level()
            text = text.replace(f"%{i + 1}", format_number(v, li.fmt))
        return text
