"""How the service's long-running processes (``serve``, ``worker``) run Python: which event
loop drives them and how the garbage collector treats the start-up heap.

Both choices are for request latency. uvloop (libuv) runs the same asyncio code with less
CPU per socket event. The collector's young-generation pass normally runs every 700
allocations and, now and then, an old-generation pass walks every object made at start-up
(modules, motor, Tornado's routing); a request that arrives during such a pass waits for
it, which is what a p99 sees. Freezing the start-up heap and collecting less often keeps
those pauses short. ``just bench auth`` measures the effect (``EVENT_LOOP=asyncio`` and
``GC_GEN0_THRESHOLD=0`` give the untuned baseline).
"""

from __future__ import annotations

import asyncio
import gc
from collections.abc import Coroutine
from typing import Any, TypeVar

T = TypeVar("T")


def run(main: Coroutine[Any, Any, T], event_loop: str = "uvloop") -> T:
    """Run ``main`` to completion on the chosen event loop (``uvloop`` or ``asyncio``).

    Only this loop is uvloop: the render pool's spawned workers and anything else that
    starts a loop of its own keep asyncio's default."""
    if event_loop == "uvloop":
        import uvloop

        return uvloop.run(main)
    return asyncio.run(main)


def settle_heap(gen0_threshold: int) -> None:
    """Call once start-up has built its long-lived objects: they leave the collector's view
    (``gc.freeze``), and with ``gen0_threshold`` > 0 young collections run every that many
    allocations instead of 700 (0 keeps Python's defaults). Reference counting still frees
    almost everything at once; only cyclic garbage waits a little longer."""
    gc.collect()
    gc.freeze()
    if gen0_threshold > 0:
        _, older, oldest = gc.get_threshold()
        gc.set_threshold(gen0_threshold, older, oldest)
