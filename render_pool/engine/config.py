"""Where the engines find their outside programs, set once in each pool worker from the settings.

Why a module of its own: the engines never read the environment (``tornado_app/settings.py``
is the one place that does, and ``render_pool`` may not import ``tornado_app``), yet a few of
them start programs the operator chooses or confines: LibreOffice (which executable, in a
sandbox or not) and Tesseract (through its API or its command line, with which language
packs folder). The service hands these to :class:`render_pool.runtime.pool.RenderPool`
(``engine_config``), which applies them in every worker when it starts, like
:mod:`render_pool.engine.limits`; outside the pool (tests, scripts) the defaults hold, or
:func:`configured` sets them for a block. Each value but ``environment`` is a setting whose
default is the one here.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field, fields, replace
from types import MappingProxyType
from typing import Any, Literal

OfficeSandbox = Literal["required", "off"]
OcrEngine = Literal["api", "cli"]
_CHOICES: dict[str, tuple[str, ...]] = {"office_sandbox": ("required", "off"),
                                        "ocr_engine": ("api", "cli")}


@dataclass(frozen=True)
class EngineConfig:
    """The outside programs of one worker and how they run.

    - ``soffice_path``: the LibreOffice executable; empty: ``soffice`` (or ``libreoffice``)
      on the PATH (``SOFFICE_PATH``).
    - ``office_sandbox``: ``required``: LibreOffice runs only in its bubblewrap sandbox
      (none: those formats are refused); ``off``: without it (``OFFICE_SANDBOX``).
    - ``office_memory_mb``: the address-space limit (``RLIMIT_AS``) one LibreOffice
      conversion runs under, in place of the worker's own (``POOL_WORKER_MEMORY_MB``):
      LibreOffice reserves address space it never touches, and a 67 KB presentation needed
      more than 3,000 MB of it; 0: the worker's limit, inherited (``OFFICE_MEMORY_MB``).
    - ``ocr_engine``: ``api``: Tesseract in the worker through tesserocr (the command line
      when tesserocr is not installed); ``cli``: the ``tesseract`` command (``OCR_ENGINE``).
    - ``tessdata_dir``: the folder of Tesseract's ``.traineddata`` packs; empty: where the
      ``tesseract`` command finds them (``TESSDATA_PREFIX``).
    - ``environment``: the variables a program the engines start may inherit (the locale,
      ``PATH``...), handed over by the settings without the service's own variables; empty
      outside a configured worker, so a child gets only what its engine sets.
    """

    soffice_path: str = ""
    office_sandbox: OfficeSandbox = "required"
    office_memory_mb: int = 4096
    ocr_engine: OcrEngine = "api"
    tessdata_dir: str = ""
    environment: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))

    def __post_init__(self) -> None:
        for name, allowed in _CHOICES.items():
            if getattr(self, name) not in allowed:
                raise ValueError(f"{name} must be one of {', '.join(allowed)}, "
                                 f"got {getattr(self, name)!r}")
        # a read-only copy: the caller's mapping may change after it was handed over
        object.__setattr__(self, "environment", MappingProxyType(dict(self.environment)))


_current = EngineConfig()


def build(**values: Any) -> EngineConfig:
    """An :class:`EngineConfig` of ``values`` over the defaults; an unknown name or value is
    an error (TypeError, ValueError)."""
    known = {f.name for f in fields(EngineConfig)}
    unknown = set(values) - known
    if unknown:
        raise TypeError(f"unknown engine settings: {', '.join(sorted(unknown))}")
    return replace(EngineConfig(), **values)


def configure(**values: Any) -> None:
    """Set this process's configuration (the pool's worker initialiser calls it)."""
    global _current
    _current = build(**values)


def current() -> EngineConfig:
    """This process's configuration."""
    return _current


@contextmanager
def configured(**values: Any) -> Iterator[EngineConfig]:
    """This process's configuration set to ``values`` (over the defaults) inside the block
    and put back after: for tests and scripts that run the engines outside the pool."""
    global _current
    before = _current
    _current = build(**values)
    try:
        yield _current
    finally:
        _current = before
