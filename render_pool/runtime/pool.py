"""The bounded process pool that runs parsing and rendering off the event loop.

Each of the ``workers`` slots is a single-worker ``ProcessPoolExecutor``; one dispatcher
hands every job to an idle slot, so a job starts the moment it is handed over and its clock
starts then, never while it waits in the queue.

- Fair between tenants: every job names its ``tenant`` (the caller's company id). Waiting jobs
  sit in one queue per tenant; a slot that comes free goes to the tenant served least
  recently (a tenant never served, or new to the queue, comes first), in arrival order within
  the tenant. So one company's backlog delays another company's job by at most about one job
  per slot, instead of the whole backlog.
- No tenant takes every worker: while another tenant waits, a tenant runs at most
  ``tenant_max_running`` jobs at once (default ``workers - 1``, at least 1). When nobody
  else waits a tenant may use every worker; a job it runs past its share that way is
  *borrowed*, and the moment another tenant's job has to wait, the most recently started
  borrowed job is stopped (its worker killed and replaced) and queued again at the head of
  its tenant's queue, to start over later. Why not just wait for it: one company's two
  slow files on a two-worker pool made another company's one-line document wait 53 s
  (issue 30); with the share it waits for a worker to start instead.
- Bounded: at most ``workers + queue_limit`` jobs are accepted at once, and at most
  ``tenant_queue_limit`` waiting jobs of one tenant; more raise :class:`PoolBusy` at once (the
  service answers 50301 with ``Retry-After``) instead of queueing without end.
- Time-limited: a job running past its limit raises :class:`JobTimeout` (50401); its own
  worker (and the worker's children, e.g. Chromium) is killed and its slot gets a fresh
  executor. Jobs running in the other slots are not touched.
- Self-healing: a crashed worker (``BrokenProcessPool``) gets its slot a fresh executor; the
  job is retried once on another slot.
- Memory-bounded: each worker runs under a hard limit on its address space
  (render_pool.runtime.memlimit, ``memory_limit_mb``): a job whose allocation fails answers
  :class:`MemoryLimitExceeded` (41301) and its worker is replaced; a worker killed by a
  failed allocation in C code answers :class:`WorkerCrashed` (50001). After each job the
  worker's resident size with its children (Chromium, which is started outside the limit)
  is read too (by the worker itself, which walks the process tree only when it has
  children); a worker past the bound is retired and its slot gets a fresh executor.
- Bound to its service: a worker whose service died (even by SIGKILL, which runs no clean-up)
  kills its own children (Chromium) and exits, so a killed replica leaves no process behind.

A slot learns its worker's pid by running ``os.getpid`` first; that first job also waits for
the process to start, so start-up time never counts against a job's limit. From then on a
job with small inputs is written to the worker's call queue by the event loop itself
(:class:`_SlotExecutor`), not through the executor's manager and feeder threads: the
fixed cost of a one-paragraph document's request is mostly such hand-overs.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import gc
import logging
import math
import multiprocessing
import os
import signal
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures import process as futures_process
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from multiprocessing.reduction import ForkingPickler
from typing import Any, Generic, TypeVar

from render_pool.errors import ConversionError, ConversionTimeout, TooLarge
from render_pool.runtime import memlimit
from render_pool.runtime.procfs import descendants, own_tree_rss_mb, tree_rss_mb

log = logging.getLogger("render_pool.runtime.pool")
T = TypeVar("T")


class PoolBusy(ConversionError):
    """The render queue is full, or this tenant's share of it; try again in ``retry_after``
    seconds (50301 with ``Retry-After``)."""

    code = 50301

    def __init__(self, message: str, retry_after: int = 1) -> None:
        super().__init__(message)
        self.retry_after = retry_after


class JobTimeout(ConversionTimeout):
    """The job ran past the pool's time limit (50401)."""


class WorkerCrashed(ConversionError):
    """The worker died while running the job, twice (50001)."""

    code = 50001


class MemoryLimitExceeded(TooLarge):
    """The job needed more memory than a worker may use (41301); its worker is replaced."""


class _Preempted(Exception):
    """Inside the pool: a borrowed job was stopped for another tenant; it is queued again."""


def _exit_with_parent() -> None:
    """In a worker: once the process that started it has died, kill this worker's own
    children and exit. The parent's end of the start-up pipe (``parent_process().sentinel``)
    closes when the parent dies however it dies, so SIGKILL and the out-of-memory killer are
    covered too; nothing else would stop an orphaned worker, which blocks on its queue."""
    parent = multiprocessing.parent_process()
    if parent is None:
        return

    def watch() -> None:
        parent.join()
        for pid in descendants(os.getpid()):
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)
        os._exit(1)

    threading.Thread(target=watch, name="exit-with-parent", daemon=True).start()


# the collector's thresholds in a worker (Python's are 700, 10, 10); see tune_collector
WORKER_GC_THRESHOLDS = (10_000, 100, 100)


def tune_collector() -> None:
    """Collect cyclic garbage less often in a worker, so reading costs what the document's
    size says. Why: with Python's thresholds the young and middle generations are walked so
    often while a reader builds a large model that the collector's share grows with the
    model: an XLSX of 16x the rows took 29x the time of 1x (CSV 34x), against 16x and 15x
    with these (``just bench scale``). Cyclic garbage is still collected, a little later;
    reference counting frees the rest at once, as before."""
    gc.set_threshold(*WORKER_GC_THRESHOLDS)


_heap_settled = False  # in a worker: whether _settle_heap has run


def _settle_heap() -> None:
    """In a worker, once, after its first job: collect, then move every object left (the
    modules, readers and caches that job imported and built) out of the collector's
    generations for good (``gc.freeze``). Why: they live as long as the worker, and every
    collection of the older generations would walk them again; after this, collections walk
    only what later jobs allocate. Why after the first job rather than at start: the engine
    is imported by the first job's arrival, not before."""
    global _heap_settled
    if _heap_settled:
        return
    _heap_settled = True
    gc.collect()
    gc.freeze()


def _worker_init(browser_limits: dict[str, Any] | None = None, memory_limit_mb: int = 0,
                 setup: Callable[[], None] | None = None) -> None:
    # Ctrl-C in a terminal reaches the whole process group: the parent decides, not workers.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    _exit_with_parent()
    tune_collector()
    memlimit.apply(memory_limit_mb)
    if setup is not None:
        setup()
    if browser_limits:
        from render_pool.runtime import browser

        browser.configure(**browser_limits)


@dataclass(frozen=True)
class _Done(Generic[T]):
    """What a worker sends back for a job that returned: its value and, when the pool bounds
    memory, the worker's resident size with its children right after the job (MiB)."""

    value: T
    tree_mb: float | None = None


# Inputs at least this large go to the worker as a file, not through the executor's pipe:
# pickling 47 MB holds the interpreter lock for tens of milliseconds in the service, where
# the event loop waits for it; writing the file runs in a thread that lets go of the lock.
SPILL_BYTES = 4 * 1024 * 1024


@dataclass(frozen=True)
class _Spilled:
    """A bytes argument written to ``path`` for the worker to read (:func:`_unspill`)."""

    path: str


def _spill_one(value: Any) -> Any:
    if isinstance(value, bytes | bytearray) and len(value) >= SPILL_BYTES:
        fd, path = tempfile.mkstemp(prefix="pool-input-")
        with os.fdopen(fd, "wb") as out:
            out.write(value)
        return _Spilled(path)
    return value


def _spill(args: tuple[Any, ...], kwargs: dict[str, Any]
           ) -> tuple[tuple[Any, ...], dict[str, Any]]:
    """The job's arguments with every large bytes value written to a file (in a thread)."""
    return (tuple(_spill_one(a) for a in args),
            {k: _spill_one(v) for k, v in kwargs.items()})


def _unspill(value: Any) -> Any:
    if isinstance(value, _Spilled):
        with open(value.path, "rb") as f:
            return f.read()
    return value


def _remove_spilled(args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
    for value in (*args, *kwargs.values()):
        if isinstance(value, _Spilled):
            with contextlib.suppress(OSError):
                os.unlink(value.path)


def _bounded_call(fn: Callable[..., T], args: tuple[Any, ...], kwargs: dict[str, Any],
                  measure: bool = False) -> _Done[T]:
    """In a worker: run the job; an allocation that failed under the worker's memory limit
    (a ``MemoryError``, also one an engine wrapped) becomes :class:`MemoryLimitExceeded`.

    ``measure``: also read this worker's tree size for the pool's after-job bound, here
    (:func:`render_pool.runtime.procfs.own_tree_rss_mb` walks the process tree only when the
    worker has children) rather than in the service, where walking it from outside means
    reading every process of the machine on the event loop after every job."""
    try:
        value = fn(*map(_unspill, args), **{k: _unspill(v) for k, v in kwargs.items()})
    except BaseException as exc:
        if not memlimit.caused_by_memory(exc):
            raise
        limit = memlimit.limit_mb()
        bound = f"the {limit} MB a conversion worker may use" if limit else "the memory left"
        raise MemoryLimitExceeded(
            f"the document needs more memory to convert than {bound}; "
            "send a smaller or simpler document") from None
    _settle_heap()
    return _Done(value, own_tree_rss_mb() if measure else None)


@dataclass
class PoolStats:
    workers: int
    queue_limit: int
    in_flight: int
    restarts: int


NO_TENANT = ""  # the queue of callers without a company
# tenants whose last turn is remembered while they have nothing waiting (a memory bound on
# bookkeeping, not a tunable: forgetting a turn only makes that tenant "new" again)
_TURNS_KEPT = 10_000


# A job whose bytes and text arguments total at most this is handed to its worker by the
# caller itself (see _SlotExecutor): with the rest of its pickled form (a few KB) it fits
# the empty pipe's buffer (64 KiB on Linux), so writing it does not wait for the worker to
# read. A larger one goes the executor's own way, written by its feeder thread.
DIRECT_BYTES = 48 * 1024

# what _SlotExecutor.submit_direct reads of the executor (CPython's, since 3.9); without one
# of them every job goes the executor's own way
_DIRECT_PARTS = ("_shutdown_lock", "_broken", "_shutdown_thread", "_processes",
                 "_pending_work_items", "_queue_count", "_call_queue")


def direct_input(args: tuple[Any, ...], kwargs: dict[str, Any]) -> bool:
    """Whether a job with these arguments may be handed over directly: its bytes and text
    arguments total at most :data:`DIRECT_BYTES` (the pool's jobs take their document as
    one such argument; anything nested is small options)."""
    size = 0
    for value in (*args, *kwargs.values()):
        if isinstance(value, bytes | bytearray | str):
            size += len(value)
    return size <= DIRECT_BYTES


class _SlotExecutor(ProcessPoolExecutor):
    """A single-worker ``ProcessPoolExecutor`` whose :meth:`submit_direct` hands a small
    job to its running worker from the calling thread: the call item is pickled here and
    written to the executor's own call queue (its pipe, under its write lock, as the queue's
    feeder thread would write it), and recorded as a pending work item, so the executor's
    manager thread delivers the result, and fails the job when the worker dies, as for any
    job. Why: ``submit`` wakes the manager thread, which moves the job to the call queue,
    whose feeder thread pickles and writes it; each of the two hand-overs waits for the
    interpreter lock that the event loop holds (a one-paragraph DOCX request paid about 0.4
    ms in ``submit``). The transport, the worker loop and the result path are the
    executor's own; until the worker runs, after a failure, or for a job whose arguments do
    not pickle, ``submit`` is used."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.direct_enabled = all(hasattr(self, part) for part in _DIRECT_PARTS) and all(
            hasattr(futures_process, name) for name in ("_CallItem", "_WorkItem"))

    def submit_direct(self, fn: Callable[..., T], /, *args: Any, **kwargs: Any) -> Future[T]:
        """``submit(fn, *args, **kwargs)``, handed straight to the running worker when it
        can be (see the class docstring)."""
        future = self._handed_over(fn, args, kwargs) if self.direct_enabled else None
        return future if future is not None else self.submit(fn, *args, **kwargs)

    def _handed_over(self, fn: Callable[..., T], args: tuple[Any, ...],
                     kwargs: dict[str, Any]) -> Future[T] | None:
        """The job's future once written to the worker's call queue; None when it must go
        through ``submit`` (the worker not started, the executor broken or shut down, the
        queue busy, or arguments that do not pickle: ``submit`` reports those)."""
        executor: Any = self  # the private parts named in _DIRECT_PARTS
        with executor._shutdown_lock:
            if (executor._broken or executor._shutdown_thread or not executor._processes
                    or getattr(executor, "_executor_manager_thread", None) is None
                    or getattr(futures_process, "_global_shutdown", False)):
                return None
            work_id = executor._queue_count
            try:
                payload = ForkingPickler.dumps(
                    futures_process._CallItem(work_id, fn, args, kwargs))
            except Exception:  # submit's feeder reports it on the future, as always
                return None
            calls = executor._call_queue
            if not calls._sem.acquire(False):  # a job waits in the queue already
                return None
            future: Future[T] = Future()
            future.set_running_or_notify_cancel()
            executor._queue_count += 1
            executor._pending_work_items[work_id] = futures_process._WorkItem(
                future, fn, args, kwargs)
            try:
                with calls._wlock:
                    calls._writer.send_bytes(payload)
            except OSError as exc:  # the worker is gone: the manager thread sees it too
                del executor._pending_work_items[work_id]
                calls._sem.release()
                raise BrokenProcessPool("the worker's pipe is closed") from exc
            return future


class _Slot:
    """One worker process behind its own single-worker executor."""

    def __init__(self, browser_limits: dict[str, Any] | None = None,
                 memory_limit_mb: int = 0, setup: Callable[[], None] | None = None) -> None:
        self.executor = _SlotExecutor(
            max_workers=1, mp_context=multiprocessing.get_context("spawn"),
            initializer=_worker_init,
            initargs=(browser_limits, memory_limit_mb, setup))
        self.pid = 0  # known once the worker has answered os.getpid
        self.tenant: str | None = None  # whose job holds the slot (None: idle)
        # while a job runs here: resolved to stop it for another tenant (see _make_room)
        self.preempt: asyncio.Future[None] | None = None
        self.began = 0.0  # when that job started (the newest borrowed one is stopped)
        # whether the worker held over half the pool's memory bound after its last job:
        # then it is the last idle slot chosen (RenderPool._release)
        self.heavy = False

    def kill(self) -> None:
        """Kill the worker and its children (a stuck job never returns on its own)."""
        for pid in [*descendants(self.pid), self.pid] if self.pid else []:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)
        self.executor.shutdown(wait=False, cancel_futures=True)


class RenderPool:
    """Process slots with admission control, per-job time limits and recovery."""

    def __init__(self, workers: int = 0, *, queue_limit: int = 16, job_timeout: float = 120.0,
                 memory_limit_mb: int = 1500, tenant_queue_limit: int = 0,
                 tenant_max_running: int = 0,
                 browser_limits: dict[str, Any] | None = None,
                 worker_setup: Callable[[], None] | None = None) -> None:
        """``browser_limits``: keyword arguments of :func:`render_pool.runtime.browser.configure`,
        applied in every worker when it starts (the service passes its settings);
        ``worker_setup``: a picklable callable every worker runs once when it starts (the
        service passes :func:`render_pool.engine.worker_setup.worker_setup`'s: the readers'
        bounds and the external programs' configuration); the pool knows no format.
        ``tenant_queue_limit``: waiting jobs one tenant may have (0: only ``queue_limit``).
        ``tenant_max_running``: jobs one tenant runs at once while another tenant waits
        (0: ``workers - 1``; never below 1).
        ``memory_limit_mb``: each worker's address-space limit and the bound on its tree's
        resident size after a job (0: neither)."""
        self.browser_limits = browser_limits
        self.worker_setup = worker_setup
        self.workers = workers or max(1, os.cpu_count() or 1)
        self.queue_limit = queue_limit
        self.tenant_queue_limit = tenant_queue_limit
        self.tenant_max_running = max(1, min(self.workers,
                                             tenant_max_running or self.workers - 1))
        self.job_timeout = job_timeout
        self.memory_limit_mb = memory_limit_mb
        self.in_flight = 0
        # jobs run with ``admitted`` (the parts of a request admitted already) and requests
        # spreading such parts over the pool (:meth:`spreading`): the queue's limit counts
        # each such request once, however many parts it has in flight
        self._parts = 0
        self._spreading = 0
        self.restarts = 0
        self._slots: list[_Slot] = [self._new_slot() for _ in range(self.workers)]
        self._idle: collections.deque[_Slot] = collections.deque(self._slots)
        # waiting jobs, one FIFO per tenant, and the turn each tenant was last served at
        self._waiters: dict[str, collections.deque[asyncio.Future[_Slot]]] = {}
        self._served_at: dict[str, int] = {}
        self._turn = 0
        self._job_seconds = 1.0  # running average of a job's time, for Retry-After

    def _new_slot(self) -> _Slot:
        """A slot whose worker will start with this pool's browser, memory and reader
        limits and its engine configuration."""
        return _Slot(self.browser_limits, self.memory_limit_mb, self.worker_setup)

    def worker_pids(self) -> list[int]:
        """Pids of the worker processes that have started."""
        return [s.pid for s in self._slots if s.pid]

    def stats(self) -> PoolStats:
        return PoolStats(self.workers, self.queue_limit, self.in_flight, self.restarts)

    def running(self, tenant: str) -> int:
        """Slots ``tenant``'s jobs hold now (starting, running, or ending abandoned)."""
        return sum(1 for s in self._slots if s.tenant == tenant)

    def waiting(self, tenant: str | None = None) -> int:
        """Jobs waiting for a slot: of ``tenant``, or of everyone when None."""
        if tenant is None:
            return sum(len(q) for q in self._waiters.values())
        return len(self._waiters.get(tenant, ()))

    # ------------------------------------------------------------ dispatcher
    async def _acquire(self, tenant: str, *, again: bool = False) -> _Slot:
        """The next idle slot (see :meth:`_release` for which one); while none is idle, wait
        in ``tenant``'s queue (at its head when ``again``: a job that was stopped for another
        tenant keeps its place)."""
        if self._idle and not self._waiters:
            self._served(tenant)
            slot = self._idle.pop()
            slot.tenant = tenant
            return slot
        waiter: asyncio.Future[_Slot] = asyncio.get_running_loop().create_future()
        queue = self._waiters.setdefault(tenant, collections.deque())
        queue.appendleft(waiter) if again else queue.append(waiter)
        self._make_room()
        try:
            return await waiter
        except asyncio.CancelledError:
            if waiter.done() and not waiter.cancelled():
                self._release(waiter.result())  # handed over just as the caller gave up
            else:
                self._forget(tenant, waiter)
            raise

    def _forget(self, tenant: str, waiter: asyncio.Future[_Slot]) -> None:
        """Take a waiter that gave up out of its tenant's queue."""
        queue = self._waiters.get(tenant)
        if queue is not None and waiter in queue:
            queue.remove(waiter)
            if not queue:
                del self._waiters[tenant]

    def _next_tenant(self) -> str:
        """The waiting tenant served least recently (never served: first; ties: the one that
        started waiting first, which is the dict's order), among those running fewer than
        their share; when every waiting tenant has its share, among all of them (a free
        worker never stays idle while a job waits)."""
        cap = self.tenant_max_running
        under = [t for t in self._waiters if self.running(t) < cap]
        return min(under or self._waiters, key=lambda t: self._served_at.get(t, 0))

    def _make_room(self) -> None:
        """Stop borrowed jobs (a tenant's jobs past its share, started while nobody else
        waited) for the waiting jobs of tenants below their share: one per such job, the
        most recently started first (the least work lost). Each stopped job's own ``run``
        kills and replaces its worker, hands the fresh slot on and queues the job again."""
        if self._idle:
            return
        cap = self.tenant_max_running
        stopping = [s for s in self._slots if s.preempt is not None and s.preempt.done()]
        wanted = sum(min(len(queue), cap - self.running(t))
                     for t, queue in self._waiters.items() if self.running(t) < cap)
        for _ in range(wanted - len(stopping)):
            kept: collections.Counter[str | None] = collections.Counter(
                s.tenant for s in self._slots if s.tenant is not None and s not in stopping)
            borrowed = [s for s in self._slots if s.preempt is not None
                        and not s.preempt.done() and kept[s.tenant] > cap]
            if not borrowed:
                return
            victim = max(borrowed, key=lambda s: s.began)
            assert victim.preempt is not None
            victim.preempt.set_result(None)
            stopping.append(victim)

    def _should_yield(self, tenant: str) -> bool:
        """Whether ``tenant``, holding a slot that just started, is past its share while
        another tenant below its share waits (the slot then goes to that tenant)."""
        cap = self.tenant_max_running
        return self.running(tenant) > cap and any(
            self.running(t) < cap for t in self._waiters if t != tenant)

    def _release(self, slot: _Slot) -> None:
        """Give ``slot`` to the next waiting job (tenants in turn), or mark it idle.

        Idle slots are taken last freed, first: the worker that just ran a job has its
        code and data in the processor's caches, one idle longer has lost them (with a
        pool of two taken in turns, a one-paragraph DOCX's reading took 0.29-0.40 ms in
        the worker against 0.12 ms in a warm process; taken last freed, first, 0.21-0.27
        ms). A worker left holding more than half the memory bound after its job (its
        ``heavy`` mark) is taken after every other idle one instead."""
        if slot not in self._slots:
            return
        slot.tenant, slot.preempt = None, None
        while self._waiters:
            tenant = self._next_tenant()
            queue = self._waiters[tenant]
            waiter = queue.popleft()
            if not queue:
                del self._waiters[tenant]
            if not waiter.done():
                self._served(tenant)
                slot.tenant = tenant
                waiter.set_result(slot)
                return
        if slot.heavy and slot.pid:
            self._idle.appendleft(slot)  # the last choice, so its peak is not met again soon
        else:
            self._idle.append(slot)  # the next choice (see _acquire)

    def _served(self, tenant: str) -> None:
        """Note that ``tenant`` got a slot now (its place in the turn order)."""
        self._turn += 1
        self._served_at[tenant] = self._turn
        if len(self._served_at) > _TURNS_KEPT:  # forget the tenants served longest ago
            oldest = sorted(self._served_at, key=self._served_at.__getitem__)
            for old in oldest[:_TURNS_KEPT // 2]:
                if old not in self._waiters:
                    del self._served_at[old]

    def _check_admission(self, tenant: str) -> None:
        """Raise :class:`PoolBusy` when the pool, or ``tenant``'s share of its queue, is
        full. A tenant's limit counts its waiting jobs only: it applies when the job would
        wait."""
        if self.in_flight - self._parts + self._spreading >= self.workers + self.queue_limit:
            raise PoolBusy("the render queue is full; try again shortly",
                           self._retry_after(self.waiting()))
        if (self.tenant_queue_limit > 0 and not (self._idle and not self._waiters)
                and self.waiting(tenant) >= self.tenant_queue_limit):
            raise PoolBusy(f"this company already has {self.waiting(tenant)} conversions "
                           "waiting (the limit per company); try again shortly",
                           self._retry_after(self.waiting(tenant)))

    def _retry_after(self, ahead: int) -> int:
        """Seconds until about one more job of ``ahead`` waiting ones could start."""
        return max(1, min(120, math.ceil(self._job_seconds * (ahead + 1) / self.workers)))

    def _replace(self, slot: _Slot, *, kill: bool, reason: str) -> _Slot:
        """Swap a fresh slot in for ``slot`` (killing its worker when asked)."""
        if slot not in self._slots:  # already retired by close(): just stop it
            slot.kill() if kill else slot.executor.shutdown(wait=False)
            return slot
        self.restarts += 1
        log.warning("replacing pool worker", extra={"reason": reason, "pid": slot.pid})
        fresh = self._new_slot()
        self._slots[self._slots.index(slot)] = fresh
        if kill:
            slot.kill()
        else:
            slot.executor.shutdown(wait=False)
        return fresh

    async def _started(self, slot: _Slot) -> _Slot:
        """``slot`` with its worker running and its pid known (a fresh slot starts here)."""
        if slot.pid:
            return slot
        try:
            probe = asyncio.wrap_future(slot.executor.submit(os.getpid))
            slot.pid = await asyncio.wait_for(asyncio.shield(probe), self.job_timeout)
        except asyncio.CancelledError:  # the caller left: the slot is free once it started
            probe.add_done_callback(lambda f: self._after_abandoned(slot, f))
            raise
        except (BrokenProcessPool, RuntimeError, TimeoutError) as exc:
            fresh = self._replace(slot, kill=True, reason="worker failed to start")
            self._release(fresh)
            raise WorkerCrashed("a conversion worker failed to start") from exc
        return slot

    # ------------------------------------------------------------ jobs
    async def run(self, fn: Callable[..., T], *args: Any, tenant: str | None,
                  timeout: float | None = None, admitted: bool = False, **kwargs: Any) -> T:
        """Run ``fn(*args, **kwargs)`` in a worker for ``tenant`` (the caller's company id;
        None: a caller without one); raises PoolBusy, JobTimeout, WorkerCrashed or whatever
        ConversionError the engine raised. ``timeout`` (default: the pool's) counts from the
        moment a worker starts the job. ``admitted``: a part of a request whose first job was
        admitted already (the pages of a scan, a few at a time): it waits its tenant's turn
        like any job but is never refused as busy halfway through the request."""
        queue = tenant or NO_TENANT
        if not admitted:
            self._check_admission(queue)
        limit = timeout or self.job_timeout
        self.in_flight += 1
        self._parts += admitted
        spilled = False
        try:
            if any(isinstance(v, bytes | bytearray) and len(v) >= SPILL_BYTES
                   for v in (*args, *kwargs.values())):
                args, kwargs = await asyncio.to_thread(_spill, args, kwargs)
                spilled = True
            direct = direct_input(args, kwargs)
            failures, again = 0, False
            while failures < 2:
                slot = await self._started(await self._acquire(queue, again=again))
                again = True  # from here on, a job queued again keeps its place
                if self._should_yield(queue):
                    self._release(slot)
                    continue
                submit = slot.executor.submit_direct if direct else slot.executor.submit
                try:
                    future: Future[_Done[T]] = submit(_bounded_call, fn, args, kwargs,
                                                      bool(self.memory_limit_mb))
                except (BrokenProcessPool, RuntimeError):
                    self._release(self._replace(slot, kill=True, reason="executor unusable"))
                    failures += 1
                    continue
                try:
                    done = await self._wait(slot, future, limit)
                except _Preempted:
                    continue
                except BrokenProcessPool as exc:
                    failures += 1
                    if failures == 2:
                        raise WorkerCrashed(self._crash_message()) from exc
                    continue
                return done.value
            raise WorkerCrashed(self._crash_message())
        finally:
            self.in_flight -= 1
            self._parts -= admitted
            if spilled:
                _remove_spilled(args, kwargs)

    @contextlib.contextmanager
    def spreading(self) -> Iterator[None]:
        """While a request spreads its work over the pool (the pages of a scan, run with
        ``admitted``), it counts as one job against the queue's limit. Why: counting each
        of its parts let one company's two or three scans, a window of ``workers`` pages
        each, fill the queue and have every other company refused as busy, though the
        per-company turns would have served them next."""
        self._spreading += 1
        try:
            yield
        finally:
            self._spreading -= 1

    async def _wait(self, slot: _Slot, future: Future[_Done[T]], limit: float) -> _Done[T]:
        """The job's outcome; the slot goes back (or is replaced) once the job is over."""
        loop = asyncio.get_running_loop()
        job: asyncio.Future[_Done[T]] = asyncio.wrap_future(future, loop=loop)
        began = time.monotonic()
        preempt: asyncio.Future[None] = loop.create_future()
        slot.preempt, slot.began = preempt, began
        try:
            await _first_of(loop, job, preempt, limit)
        except asyncio.CancelledError:  # the caller left; the slot is busy until the job ends
            slot.preempt = None  # nobody would queue it again: not stopped for others
            job.add_done_callback(lambda f: self._after_abandoned(slot, f))
            raise
        if not job.done():
            job.add_done_callback(_consume)
            if preempt.done():
                self._release(self._replace(slot, kill=True,
                                            reason="stopped for another company's job"))
                raise _Preempted
            self._release(self._replace(slot, kill=True, reason="job timed out"))
            raise JobTimeout(f"conversion took longer than {limit:.0f} s")
        try:
            result = job.result()
        except BrokenProcessPool:
            self._release(self._replace(slot, kill=True, reason="worker died"))
            raise
        except MemoryLimitExceeded:  # its heap is past saving: a fresh worker
            self._release(self._replace(slot, kill=True, reason="worker memory limit"))
            raise
        except BaseException:
            self._after_job(slot)
            raise
        self._job_seconds += (time.monotonic() - began - self._job_seconds) * 0.2
        self._after_job(slot, result.tree_mb)
        return result

    def _crash_message(self) -> str:
        """What a caller is told when the worker died under its job, twice."""
        if self.memory_limit_mb:
            return ("the conversion worker crashed (for example by running out of the "
                    f"{self.memory_limit_mb} MB of memory a worker may use)")
        return "the conversion worker crashed"

    def _after_job(self, slot: _Slot, tree_mb: float | None = None) -> None:
        """Release ``slot``, retiring its worker first when it grew past the memory bound.

        ``tree_mb``: the size the worker read of itself and its children after the job (see
        :func:`_bounded_call`); without it (the job raised) the tree is read from here."""
        if self.memory_limit_mb and slot.pid:
            if tree_mb is None:
                tree_mb = tree_rss_mb(slot.pid)
            slot.heavy = tree_mb > self.memory_limit_mb / 2
            if tree_mb > self.memory_limit_mb:
                slot = self._replace(slot, kill=False, reason="worker memory over bound")
        self._release(slot)

    def _after_abandoned(self, slot: _Slot,
                         job: asyncio.Future[_Done[Any]] | asyncio.Future[int]) -> None:
        """A job whose caller left has ended: release (or replace) its slot."""
        if not job.cancelled() and isinstance(job.exception(),
                                              (BrokenProcessPool, MemoryLimitExceeded)):
            self._release(self._replace(slot, kill=True, reason="worker died"))
            return
        outcome = None if job.cancelled() or job.exception() is not None else job.result()
        if not slot.pid and isinstance(outcome, int):
            # the abandoned job was the start-up probe (a slot runs jobs once its pid is known)
            slot.pid = outcome
        self._after_job(slot, outcome.tree_mb if isinstance(outcome, _Done) else None)

    def close(self, wait: bool = True) -> None:
        """Stop the workers (waiting for running jobs when ``wait``).

        The pool stays usable: its slots are replaced by fresh ones whose workers start on
        the next job (a test session shares one pool between services that close it)."""
        old, self._slots = self._slots, [self._new_slot() for _ in range(self.workers)]
        self._idle = collections.deque()
        for slot in self._slots:
            self._release(slot)
        for slot in old:
            slot.executor.shutdown(wait=wait, cancel_futures=True)


async def _first_of(loop: asyncio.AbstractEventLoop, job: asyncio.Future[Any],
                    preempt: asyncio.Future[None], limit: float) -> None:
    """Return once ``job`` or ``preempt`` is done or ``limit`` seconds have passed: one
    waiter future and one timer. Why not ``asyncio.wait``: it builds sets, a waiter and
    a callback per future, and the sets of done and pending ones, for every job."""
    waiter: asyncio.Future[None] = loop.create_future()

    def wake(_: object = None) -> None:
        if not waiter.done():
            waiter.set_result(None)

    job.add_done_callback(wake)
    preempt.add_done_callback(wake)
    timer = loop.call_later(limit, wake)
    try:
        await waiter
    finally:
        timer.cancel()
        job.remove_done_callback(wake)
        preempt.remove_done_callback(wake)


def _consume(future: asyncio.Future[Any]) -> None:
    """Mark a finished job's outcome as seen (it was abandoned: timed out or cancelled)."""
    if not future.cancelled():
        future.exception()
