"""Pages done of pages, told by a conversion to whoever runs it, without a parameter through
every layer between: the job worker (:mod:`tornado_app.documents.job_worker`) sets a reporter
for the conversion it runs; :mod:`tornado_app.documents.conversion` calls :func:`pages_done`
as the pages of a scan are recognised and once the document is read (in a job, the pages
recognised by any consumer: :mod:`tornado_app.documents.shared_pages`). A direct request sets
no reporter, and its reports go nowhere.

A context variable, not a global: each asyncio task (each job) sees the reporter of its own
context, and the page tasks a conversion starts inherit it."""

from __future__ import annotations

import contextlib
from collections.abc import Awaitable, Callable, Iterator
from contextvars import ContextVar

# (pages done, pages in all) -> None; awaited, so a report is written before the next page
PageReporter = Callable[[int, int], Awaitable[None]]

_reporter: ContextVar[PageReporter | None] = ContextVar("page_reporter", default=None)


@contextlib.contextmanager
def reporting_pages(reporter: PageReporter) -> Iterator[None]:
    """Within the block (and the tasks started in it), :func:`pages_done` calls ``reporter``."""
    token = _reporter.set(reporter)
    try:
        yield
    finally:
        _reporter.reset(token)


async def pages_done(done: int, total: int) -> None:
    """Report ``done`` pages of ``total`` to the reporter of this context, if any."""
    reporter = _reporter.get()
    if reporter is not None:
        await reporter(done, total)
