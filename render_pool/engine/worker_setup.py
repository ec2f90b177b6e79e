"""What a pool worker sets up for the engine when it starts: the readers' cost bounds and the
external programs' configuration, both from the settings.

Why here: the runtime's pool knows nothing of formats; the service hands it a
:class:`WorkerSetup`, and every worker calls it once at start, before any job.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from render_pool.engine import config, limits


@dataclass(frozen=True)
class WorkerSetup:
    """The engine's configuration of one pool (picklable: it travels to every worker)."""

    reader_limits: dict[str, Any] = field(default_factory=dict)
    engine_config: dict[str, Any] = field(default_factory=dict)

    def __call__(self) -> None:
        """Apply both in this process (a pool worker calls it when it starts)."""
        if self.reader_limits:
            limits.configure(**self.reader_limits)
        if self.engine_config:
            config.configure(**self.engine_config)


def worker_setup(reader_limits: dict[str, Any] | None = None,
                 engine_config: dict[str, Any] | None = None) -> WorkerSetup:
    """The setup applying ``reader_limits`` (:func:`limits.configure`) and ``engine_config``
    (:func:`config.configure`) in each worker. Both are checked now, so an unknown name or a
    wrong value fails where the pool is made, not in every worker."""
    if reader_limits:
        limits.ReaderLimits(**reader_limits)
    if engine_config:
        config.build(**engine_config)
    return WorkerSetup(dict(reader_limits or {}), dict(engine_config or {}))
