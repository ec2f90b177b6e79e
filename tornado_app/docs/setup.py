"""Open the conversion service's own resources (process pool, storage) at start-up."""

from __future__ import annotations

from typing import Any

from render_pool.pool import RenderPool


def open_pool(svc: Any) -> RenderPool:
    """The bounded process pool sized from the settings (CPU count by default)."""
    st = svc.settings
    svc.pool = RenderPool(st.pool_workers, queue_limit=st.pool_queue_limit,
                          job_timeout=st.job_timeout_seconds,
                          memory_limit_mb=st.worker_memory_mb)
    return svc.pool


async def open_docs_services(svc: Any, embedded: Any) -> None:
    """Attach the render pool (and, when configured, storage) to ``svc``."""
    open_pool(svc)
