"""Cost bounds of the readers and writers, set once in each pool worker from the settings.

Why a module of its own: some readers are reached through others (ODT, RTF and DOC come back
from LibreOffice as DOCX and go on to the DOCX reader; ODS and XLS as XLSX), so a bound
passed as a request option would have to travel through every reader on the way. The
service passes these to :class:`render_pool.runtime.pool.RenderPool` (``reader_limits``), which
applies them in every worker when it starts, like the browser's limits; outside the pool
(tests, scripts) the defaults hold. Each bound is a setting (``tornado_app/settings.py``),
whose default is the one here.
"""

from __future__ import annotations

from dataclasses import dataclass, fields, replace
from typing import Any

_MB = 1024 * 1024


@dataclass(frozen=True)
class ReaderLimits:
    """What one conversion may cost, checked before the costly work.

    - ``table_max_rows``: rows of one table the DOCX and XLSX readers keep (so also of an
      ODT, RTF, DOC, ODS or XLS after LibreOffice); the rest is left out with a warning.
    - ``office_max_text_cells``: table cells of an ODT, DOC or RTF that LibreOffice may lay
      out; counted before it starts, past it the file is refused (41301). Writer's table
      layout grows faster than the cells: 6,000 cells took 2 s, 30,000 took 38 s here.
    - ``office_max_sheet_cells``: cells of an ODS or XLS LibreOffice may convert (Calc
      converted 300,000 in 9 s), likewise.
    - ``embedded_images_max_bytes``: base64 image data one HTML or Markdown output may
      embed (``images=embed``); an image shown 3,000 times counts 3,000 times. Past it the
      conversion is refused (41301) before anything is written.
    """

    table_max_rows: int = 10_000
    office_max_text_cells: int = 10_000
    office_max_sheet_cells: int = 200_000
    embedded_images_max_bytes: int = 100 * _MB


_current = ReaderLimits()


def configure(**values: Any) -> None:
    """Set this process's bounds (the pool's worker initialiser calls it); an unknown name
    is an error."""
    global _current
    known = {f.name for f in fields(ReaderLimits)}
    unknown = set(values) - known
    if unknown:
        raise TypeError(f"unknown reader limits: {', '.join(sorted(unknown))}")
    _current = replace(ReaderLimits(), **values)


def current() -> ReaderLimits:
    """This process's bounds."""
    return _current
