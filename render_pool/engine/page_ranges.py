"""The ``pages`` option: which pages of a PDF to read, as ``1-3,7``.

Why a module of its own: the service checks the syntax when the request arrives (a clear 40001
before any work), and the PDF reader checks the ranges against the page count it alone knows
(40001 too), with the same rules and words. Ranges are kept as pairs until they are checked
against the page count, so ``1-999999999`` costs nothing before it is refused.
"""

from __future__ import annotations

import re

from render_pool.errors import InvalidOption

__all__ = ["MAX_SPEC_LENGTH", "PageRanges", "pages_in", "parse_pages"]

MAX_SPEC_LENGTH = 1000  # characters of a ``pages`` value: far above any real list of ranges
_PART = re.compile(r"\s*(\d{1,9})\s*(?:-\s*(\d{1,9})\s*)?")

PageRanges = tuple[tuple[int, int], ...]  # (first, last) pairs, pages from 1, as written


def parse_pages(spec: str) -> PageRanges:
    """The ranges of ``spec`` (``"1-3,7"``: pages and ranges from 1, comma-separated);
    :class:`InvalidOption` (40001) for bad syntax, a page 0 or a reversed range."""
    if len(spec) > MAX_SPEC_LENGTH:
        raise InvalidOption(f"pages is longer than {MAX_SPEC_LENGTH} characters")
    if not spec.strip():
        raise InvalidOption("pages is empty; give pages and ranges such as 1-3,7")
    out: list[tuple[int, int]] = []
    for part in spec.split(","):
        m = _PART.fullmatch(part)
        if m is None:
            raise InvalidOption(f"pages: {part.strip()!r} is not a page or a range; give "
                                "pages and ranges such as 1-3,7")
        first = int(m.group(1))
        last = int(m.group(2)) if m.group(2) else first
        if first == 0 or last == 0:
            raise InvalidOption("pages: pages are numbered from 1")
        if last < first:
            raise InvalidOption(f"pages: the range {first}-{last} runs backwards; write "
                                f"{last}-{first}")
        out.append((first, last))
    return tuple(out)


def pages_in(ranges: PageRanges, count: int) -> list[int]:
    """The pages (from 1, ascending, each once) of ``ranges`` in a document of ``count``
    pages; :class:`InvalidOption` (40001) when a range goes past the last page."""
    beyond = max(last for _, last in ranges)
    if beyond > count:
        noun = "page" if count == 1 else "pages"
        raise InvalidOption(f"pages asks for page {beyond}, but the document has {count} "
                            f"{noun}")
    return sorted({p for first, last in ranges for p in range(first, last + 1)})
