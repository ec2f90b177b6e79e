"""Spreadsheet cell values as the spreadsheet shows them (number formats, dates, percents).

Why: a converted sheet should read like the sheet on screen: ``12.5%`` not ``0.125``,
``1,234.50`` not ``1234.5``, ``2024-03-15`` not ``2024-03-15 00:00:00``. This covers the
formats people use (General, fixed decimals, thousands separators, percentages, currency
and other quoted literals, dates and times); anything stranger falls back to the General
rendering of the value, never to an error.
"""

from __future__ import annotations

import datetime as dt
import re

_QUOTED = re.compile(r'"([^"]*)"')
_BRACKET = re.compile(r"\[[^\]]*\]")
_DATE_TOKENS = re.compile(r"yyyy|yy|mmmmm|mmmm|mmm|mm|m|dddd|ddd|dd|d|hh|h|ss|s|am/pm|a/p", re.I)


def general(value: float | int) -> str:
    """Excel's General format: integers plain, other numbers with up to 11 significant
    digits and no float noise."""
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, int) or (isinstance(value, float) and value.is_integer()
                                  and abs(value) < 1e15):
        return str(int(value))
    text = f"{value:.11g}"
    return text


def _affixes(section: str) -> tuple[str, str]:
    """Literal text before and after the digits of a number format: quoted strings,
    ``[$€-407]`` currency tags, escaped characters and bare currency signs."""
    parts: tuple[list[str], list[str]] = ([], [])
    seen_digit = False
    i = 0
    while i < len(section):
        c = section[i]
        side = parts[1] if seen_digit else parts[0]
        if c == '"':
            j = section.find('"', i + 1)
            j = len(section) if j < 0 else j
            side.append(section[i + 1:j])
            i = j + 1
            continue
        if c == "[":
            j = section.find("]", i + 1)
            j = len(section) if j < 0 else j
            tag = section[i + 1:j]
            if tag.startswith("$"):
                side.append(tag[1:].split("-")[0])
            i = j + 1
            continue
        if c == "\\" and i + 1 < len(section):
            side.append(section[i + 1])
            i += 2
            continue
        if c in "_*":  # padding to the width of the next character
            i += 2
            continue
        if c in "0#?":
            seen_digit = True
        elif c in "$€£¥ ()-+":
            side.append(c)
        i += 1
    return "".join(parts[0]), "".join(parts[1])


def _number(value: float, fmt: str) -> str:
    section = fmt.split(";")[0]
    if value < 0 and ";" in fmt:
        section = fmt.split(";")[1] or section
        value = -value if "-" not in section else value
    core = _BRACKET.sub("", _QUOTED.sub("", section)).replace("\\", "").replace("_)", "")
    percent = "%" in core
    if percent:
        value *= 100
    digits = re.search(r"[0#?,]*[0#?](?:\.([0#?]+))?", core)
    if not digits:
        return general(value)
    decimals = len(digits.group(1) or "")
    thousands = "," in core[: digits.end()] or "#,#" in core
    text = f"{value:,.{decimals}f}" if thousands else f"{value:.{decimals}f}"
    if "E+" in core.upper():
        return f"{value:.{decimals}E}"
    prefix, suffix = _affixes(section)
    return f"{prefix}{text}{'%' if percent else ''}{suffix}".strip()


def _date(value: dt.datetime | dt.date | dt.time, fmt: str) -> str:
    core = _BRACKET.sub("", _QUOTED.sub(lambda m: m.group(1), fmt)).replace("\\", "")
    core = core.split(";")[0]
    has_time = bool(re.search(r"h|s", core, re.I))
    tokens = list(_DATE_TOKENS.finditer(core))
    if not tokens:
        return value.isoformat()
    if isinstance(value, dt.time):
        value = dt.datetime.combine(dt.date(1899, 12, 31), value)
    elif not isinstance(value, dt.datetime):
        value = dt.datetime(value.year, value.month, value.day)
    ampm = bool(re.search(r"am/pm|a/p", core, re.I))
    out: list[str] = []
    pos = 0
    for k, m in enumerate(tokens):
        out.append(core[pos:m.start()])
        tok = m.group(0).lower()
        prev = tokens[k - 1].group(0).lower() if k else ""
        nxt = tokens[k + 1].group(0).lower() if k + 1 < len(tokens) else ""
        minute = tok in ("m", "mm") and (prev.startswith("h") or nxt.startswith("s"))
        hour = value.hour % 12 or 12 if ampm else value.hour
        out.append({
            "yyyy": f"{value.year:04d}", "yy": f"{value.year % 100:02d}",
            "mmmmm": value.strftime("%B")[:1],  # the month's initial (J for January)
            "mmmm": value.strftime("%B"), "mmm": value.strftime("%b"),
            "mm": f"{value.minute:02d}" if minute else f"{value.month:02d}",
            "m": str(value.minute) if minute else str(value.month),
            "dddd": value.strftime("%A"), "ddd": value.strftime("%a"),
            "dd": f"{value.day:02d}", "d": str(value.day),
            "hh": f"{hour:02d}", "h": str(hour), "ss": f"{value.second:02d}",
            "s": str(value.second), "am/pm": "AM" if value.hour < 12 else "PM",
            "a/p": "A" if value.hour < 12 else "P",
        }[tok])
        pos = m.end()
    out.append(core[pos:])
    text = "".join(out).strip()
    return text if text else (value.isoformat() if has_time else value.date().isoformat())


def duration(value: dt.timedelta) -> str:
    """A duration as a spreadsheet shows it with ``[h]:mm:ss``: whole hours however many
    (``296296:17:37``), never Python's ``12345 days, 16:17:36.960000``."""
    seconds = round(value.total_seconds())
    sign, seconds = ("-", -seconds) if seconds < 0 else ("", seconds)
    hours, rest = divmod(seconds, 3600)
    return f"{sign}{hours}:{rest // 60:02d}:{rest % 60:02d}"


def shown(value: object, fmt: str | None) -> str:
    """The text a spreadsheet shows for ``value`` with number format ``fmt``."""
    if value is None:
        return ""
    fmt = fmt or "General"
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, (dt.datetime, dt.date, dt.time)):
        try:
            return _date(value, fmt)
        except (ValueError, KeyError, OverflowError):
            return value.isoformat()
    if isinstance(value, dt.timedelta):
        return duration(value)
    if isinstance(value, (int, float)):
        if fmt == "General" or fmt == "@" or len(fmt) > 255:  # Excel's own format limit
            return general(value)
        try:
            return _number(float(value), fmt)
        except (ValueError, OverflowError):
            return general(value)
    return str(value)
