"""The one settings object, read from environment variables.

Each setting is declared once, as a field of :class:`Settings`: its type, default, environment
variable, kind of value (int, duration, size, bool, choice, list, text, path), bounds, group
and one line of help (a :class:`Spec` in the field's metadata; a choice's values are its
``Literal`` type). :meth:`Settings.from_env` and ``docs/configuration.md`` are both derived
from those declarations, so a new setting is reachable from the environment and documented
the moment it is declared; a test fails when the document is stale (regenerate it with
``just config-doc``, i.e. ``python -m tornado_app.settings --markdown > docs/configuration.md``).

A value that cannot be read stops start-up with the variable's name, the accepted form and
the value given. Unset or empty variables keep the default.

This is the one module that reads the process environment: the rest of the service gets
settings from here, and a program it starts gets its environment from
:func:`child_environment` (a test holds every other module of ``render_pool`` and
``tornado_app`` to it).
"""

from __future__ import annotations

import argparse
import functools
import ipaddress
import math
import os
import re
import urllib.parse
from collections.abc import Callable, Iterator, Mapping
from dataclasses import MISSING, Field, dataclass, field, fields
from pathlib import Path
from typing import Any, Literal, TypeVar, cast, get_args, get_type_hints

from store.booleans import NotABoolean, parse_bool

T = TypeVar("T")
# The choices of the ``choice`` settings: their types, read by the spec (declared once).
LogLevel = Literal["DEBUG", "INFO", "WARNING", "WARN", "ERROR", "CRITICAL"]
LogFormat = Literal["auto", "json", "console"]
EventLoop = Literal["uvloop", "asyncio"]
DocsAuth = Literal["required", "none"]
OcrEngine = Literal["api", "cli"]
LinkMode = Literal["service", "presigned", "direct"]
OfficeSandbox = Literal["required", "off"]

KINDS = ("int", "duration", "size", "bool", "choice", "list", "text", "path", "custom")
# The multiple of one size unit, in bytes; "MB" in the variable names is this binary MB.
_UNIT_BYTES = {"": 1, "B": 1, "K": 1024, "M": 1024 ** 2, "G": 1024 ** 3, "T": 1024 ** 4}
_UNIT_WORDS = {1: "bytes", 1024: "KiB", 1024 ** 2: "MiB"}
_DURATION = re.compile(r"(-?\d+(?:\.\d*)?|\.\d+)\s*(ms|s|m|h|d)?", re.IGNORECASE)
_DURATION_UNITS = {"": 1.0, "ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0, "d": 86400.0}
_SIZE = re.compile(r"(-?\d+(?:\.\d*)?|\.\d+)\s*(?:([KMGT])I?B?|(B))?", re.IGNORECASE)


@dataclass(frozen=True)
class Spec:
    """How one setting is read from its environment variable and documented.

    ``kind`` decides the accepted text (see :data:`KINDS`); ``low``/``high`` are inclusive
    bounds (a value outside stops start-up, or is moved to the bound when ``clamp``, which
    a few settings have always done); ``unit`` is the size unit of a ``size`` setting in
    bytes; ``item`` normalises one entry of a ``list`` (ValueError: refused); ``parse`` reads
    a ``custom`` value and ``form`` says what it accepts. ``shown`` replaces the default in
    the document where the default is computed or empty."""

    kind: str
    help: str
    group: str
    env: str = ""  # empty: the field's name in upper case
    low: float | None = None
    high: float | None = None
    clamp: bool = False
    choices: tuple[str, ...] = ()
    upper: bool = False  # choices are spelled in upper case (LOG_LEVEL)
    unit: int = 1
    separators: str = ","
    item: Callable[[str], str] | None = None
    item_form: str = ""
    parse: Callable[[str], Any] | None = None
    form: str = ""
    strip: bool = False  # text: surrounding blanks are dropped
    absolute: bool = False  # path: made absolute (also the default)
    secret: bool = False  # never shown by ``public_view``
    shown: str = ""
    documented: bool = True  # False: a second field read from a variable already listed

    def accepted(self, integer: bool) -> str:
        """The accepted form, as said in the refusal and the document."""
        if self.kind == "int":
            form = "a whole number"
        elif self.kind == "duration":
            form = ("a whole number of seconds (90) or with a unit (2m, 1.5h, 1d)" if integer
                    else "seconds (90, 1.5) or with a unit (500ms, 2m, 1.5h, 1d)")
        elif self.kind == "size":
            form = (f"a whole number of {_UNIT_WORDS[self.unit]} or with a binary unit "
                    f"(512K, 50M, 2G)")
        elif self.kind == "bool":
            form = "true or false (also 1/0, yes/no, on/off)"
        elif self.kind == "choice":
            form = "one of " + ", ".join(self.choices)
        elif self.kind == "list":
            joined = "comma" if self.separators == "," else "comma or space"
            form = f"a {joined}-separated list of {self.item_form or 'values'}"
        elif self.kind == "path":
            form = "a path"
        else:
            form = self.form or "text"
        return form + ("" if self.clamp else self.bounds())  # clamped: any number is read

    def bounds(self) -> str:
        """`` from 1 to 7``, `` of at least 1``... (empty without bounds)."""
        low, high = (_number(b) for b in (self.low, self.high))
        if self.low is not None and self.high is not None:
            return f" from {low} to {high}"
        if self.low is not None:
            return f" of at least {low}"
        if self.high is not None:
            return f" of at most {high}"
        return ""

    def read(self, env: Mapping[str, str], default: Any) -> Any:
        """The setting's value from ``env``: its default when unset or empty; SystemExit
        naming the variable and the accepted form when the text cannot be read."""
        raw = env.get(self.env)
        text = raw if raw is None or (self.kind == "text" and not self.strip) else raw.strip()
        value = default
        if text:
            try:
                value = self._parse(text, default)
            except ValueError:
                integer = isinstance(default, int) and not isinstance(default, bool)
                raise SystemExit(f"{self.env} must be {self.accepted(integer)}, got {raw!r}"
                                 ) from None
        return Path(value).absolute() if self.absolute and value is not None else value

    def _parse(self, text: str, default: Any) -> Any:
        integer = isinstance(default, int) and not isinstance(default, bool)
        if self.kind == "int":
            return self._bounded(int(text))
        if self.kind == "duration":
            return self._bounded(_duration(text, integer))
        if self.kind == "size":
            return self._bounded(_size(text, self.unit))
        if self.kind == "bool":
            try:
                return parse_bool(text)
            except NotABoolean as exc:
                raise ValueError(text) from exc
        if self.kind == "choice":
            value = text.upper() if self.upper else text.lower()
            if value not in self.choices:
                raise ValueError(text)
            return value
        if self.kind == "list":
            parts = text.replace(",", " ").split() if self.separators != "," else (
                p.strip() for p in text.split(","))
            return tuple((self.item or str)(p) for p in parts if p)
        if self.kind == "path":
            return Path(text)
        if self.kind == "custom":
            assert self.parse is not None
            return self.parse(text)
        return text

    def _bounded(self, value: T) -> T:
        number = cast(float, value)
        if self.clamp:
            if self.low is not None and number < self.low:
                return cast(T, type(number)(self.low))
            if self.high is not None and number > self.high:
                return cast(T, type(number)(self.high))
        elif ((self.low is not None and number < self.low)
              or (self.high is not None and number > self.high)):
            raise ValueError(value)
        return value


def _number(value: float | None) -> str:
    """``5`` for 5.0, ``0.5`` for 0.5."""
    return "" if value is None else (f"{value:g}" if value != int(value) else str(int(value)))


def _duration(text: str, integer: bool) -> float | int:
    """Seconds from ``90``, ``1.5``, ``500ms``, ``2m``, ``1.5h`` or ``1d``; ``integer``: a
    whole number of seconds is required (the setting is a count of seconds)."""
    match = _DURATION.fullmatch(text)
    if not match:
        raise ValueError(text)
    seconds = float(match.group(1)) * _DURATION_UNITS[(match.group(2) or "").lower()]
    if not math.isfinite(seconds):
        raise ValueError(text)
    if integer:
        if seconds != int(seconds):
            raise ValueError(text)
        return int(seconds)
    return seconds


def _size(text: str, unit: int) -> int:
    """A whole number of ``unit`` (bytes) from ``1500``, ``512K``, ``50M``, ``2GiB``..."""
    match = _SIZE.fullmatch(text)
    if not match:
        raise ValueError(text)
    number, suffix = match.group(1), (match.group(2) or match.group(3) or "").upper()
    if not suffix:  # a bare number counts the setting's own unit, as it always has
        if "." in number:
            raise ValueError(text)
        return int(number)
    total = float(number) * _UNIT_BYTES[suffix]
    if total % unit:
        raise ValueError(text)
    return int(total // unit)


def _human_duration(seconds: float) -> str:
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds >= size and seconds % size == 0:
            return f"{int(seconds // size)}{unit}"
    return ""


def _human_size(count: int, unit: int) -> str:
    total = count * unit
    for suffix, size in (("G", 1024 ** 3), ("M", 1024 ** 2), ("K", 1024)):
        if total >= size and total % size == 0 and size > unit:
            return f"{total // size}{suffix}"
    return ""


def setting(default: T, kind: str, help: str, *, group: str, factory: Callable[[], T] | None = None,
            **spec: Any) -> T:
    """A field of :class:`Settings` with its :class:`Spec` (keywords: its other fields)."""
    assert kind in KINDS, kind
    meta = {"spec": Spec(kind, help, group, **spec)}
    if factory is not None:
        return field(default_factory=factory, metadata=meta)
    return field(default=default, metadata=meta, repr=not spec.get("secret", False))


# --------------------------------------------------------------------------- readers of values


def _folder_roots(value: str) -> tuple[tuple[Path, ...], dict[str, tuple[Path, ...]]]:
    """``FOLDER_ROOTS``: ``;``-separated entries. ``CODE:/path[:/path...]`` gives the company
    with that code (exactly as spelled) the folders its ADMINs may convert; bare paths
    (``/path[:/path...]``, the old global form) serve only the operator token and
    ``DOCS_AUTH=none``. Anything else stops start-up. Returns (operator's, per company)."""
    operator: tuple[Path, ...] = ()
    companies: dict[str, tuple[Path, ...]] = {}
    for entry in filter(None, (e.strip() for e in value.split(";"))):
        code, _, paths = ("", "", entry) if entry.startswith("/") else entry.partition(":")
        roots = tuple(Path(p) for p in paths.split(os.pathsep) if p)
        if not roots or not all(p.is_absolute() for p in roots) or code != code.strip():
            raise SystemExit(f"FOLDER_ROOTS entry {entry!r} is not CODE:/absolute/path"
                             f"[:/another] (entries separated by ';', e.g. "
                             f"FOLDER_ROOTS=ACME:/srv/acme;BETA:/srv/beta)")
        if code:
            companies[code] = companies.get(code, ()) + roots
        else:
            operator += roots
    return operator, companies


def _network(part: str) -> str:
    """An address or CIDR, as its network (ValueError otherwise)."""
    return str(ipaddress.ip_network(part, strict=False))


def _origin(part: str) -> str:
    return part.rstrip("/").lower()


def _base_url(text: str) -> str:
    """``PUBLIC_BASE_URL``: an http(s) address with a host, no user, query or fragment; links
    are made on it, so anything else stops the service at start rather than writing bad links."""
    text = text.strip().rstrip("/")
    parts = urllib.parse.urlsplit(text)
    if not text:
        return ""
    if (parts.scheme not in ("http", "https") or not parts.hostname or "@" in parts.netloc
            or parts.query or parts.fragment):
        raise ValueError(text)
    return text


# OWASP's argon2id rows (memory KiB, passes): the service hashes at one of them or stronger.
OWASP_ARGON2 = ((47104, 1), (19456, 2), (12288, 3), (9216, 4), (7168, 5))

# Groups, in the order of the document.
DATA = "Data and embedded servers"
RUNTIME = "Logging and process runtime"
CALLERS = "Callers and browsers"
ACCOUNTS = "Sessions and passwords"
THROTTLE = "Login throttling"
REQUESTS = "Request limits"
MARKDOWN = "Markdown parsing cost"
POOL = "Conversion pool"
CHROMIUM = "PDF printing (Chromium)"
FETCH = "Remote fetches"
STORAGE = "Object storage"
JOBS = "Durable jobs and webhooks"

_MB = 1024 * 1024


@dataclass(frozen=True)
class Settings:
    """The service's settings, each declared once (see the module docstring). Secrets here are
    never logged (see ``public_view``)."""

    # data and embedded servers
    data_dir: Path = setting(Path("./data"), "path", "where the embedded servers keep their data "
                             "(`DATA_DIR/tmp` holds fetched images while a request runs)",
                             group=DATA, absolute=True, shown="`./data`")
    mongo_url: str = setting("", "text", "MongoDB URL; `mongomock://` for in-memory "
                             "mongomock-motor; empty: an embedded SecantusDB is started",
                             group=DATA, shown="(embedded)")
    mongo_db: str = setting("docservice", "text", "database name", group=DATA)
    redis_url: str = setting("", "text", "Redis URL (`redis://`, `rediss://`, `unix://`); "
                             "empty: an embedded redis-server is started",
                             group=DATA, shown="(embedded)")
    seed_file: Path | None = setting(None, "path", "a JSON seed of companies and users applied "
                                     "at start-up, idempotently (like `serve --seed`)",
                                     group=DATA, shown="(none)")
    weed_bin: str = setting("", "text", "the SeaweedFS `weed` binary of the embedded storage",
                            group=DATA, shown="the `embedded` extra's `weed`, else PATH")
    # logging and process runtime (tornado_app.runtime)
    log_level: LogLevel = setting("INFO", "choice", "log level (logs go to stderr)",
                                  group=RUNTIME, upper=True)
    log_format: LogFormat = setting(
        "auto", "choice", "`json`: one JSON object per line; `console`: short coloured lines for "
        "a person; `auto`: console when stderr is a terminal, JSON otherwise", group=RUNTIME)
    event_loop: EventLoop = setting(
        "uvloop", "choice", "event loop of `serve` and `worker`: `uvloop` (libuv, less CPU per "
        "request) or `asyncio` (the standard one)", group=RUNTIME)
    gc_gen0_threshold: int = setting(50_000, "int", "after start-up the long-lived heap is frozen "
                                     "out of the collector's view and young collections run every "
                                     "this many allocations (Python's default: 700), keeping "
                                     "collector pauses out of request latency; `0` keeps "
                                     "Python's defaults", group=RUNTIME, low=0)
    shutdown_grace_seconds: float = setting(30.0, "duration", "on SIGTERM (or Ctrl-C), how "
                                            "long requests in flight and running async jobs may "
                                            "take to finish before the process exits",
                                            group=RUNTIME, low=0)
    metrics_address: str = setting("127.0.0.1:9108", "text", "`host:port` of the listener that "
                                   "serves `/metrics`, `/ready` and `/health` without auth; "
                                   "`off` for none. If the port is taken the service still "
                                   "starts (error logged)", group=RUNTIME, strip=True)
    # callers and browsers (see docs/security.md)
    docs_auth: DocsAuth = setting(
        "required", "choice", "`none` turns caller auth of the docs face off (one local user "
        "acting as ADMIN): single-user only, refused at start-up unless `--host` is a loopback "
        "address; then only loopback `Host` names (and `PUBLIC_HOSTS`) are served",
        group=CALLERS)
    docs_api_token: str = setting("", "text", "operator token for service-to-service calls: a docs "
                                  "caller acting as ADMIN (company `_operator`), and the key to "
                                  "`/metrics` and `/ready` on the main port; not accepted by the "
                                  "auth face", group=CALLERS, secret=True, shown="(none)")
    allowed_origins: tuple[str, ...] = setting((), "list", "origins (`https://app.example.com`) "
                                               "besides the service's own that may send "
                                               "state-changing requests; also the only origins "
                                               "that get CORS headers", group=CALLERS,
                                               item=_origin, item_form="origins")
    public_hosts: tuple[str, ...] = setting((), "list", "host names (or `host:port`) the `Host` "
                                            "header must name (DNS rebinding); empty: any (under "
                                            "`DOCS_AUTH=none`: loopback names only, plus these)",
                                            group=CALLERS, item=str.lower, item_form="host names")
    trusted_proxies: tuple[str, ...] = setting((), "list", "reverse proxies whose "
                                               "`X-Forwarded-For` is believed; from any other "
                                               "peer the header is ignored, so the client address "
                                               "used for login throttling, the audit trail and "
                                               "the access log is the peer's", group=CALLERS,
                                               separators=", ", item=_network,
                                               item_form="addresses or CIDRs")
    # sessions and passwords
    session_ttl_seconds: int = setting(86400, "duration", "session lifetime (`expiresIn`)",
                                       group=ACCOUNTS, low=1)
    permission_cache_seconds: int = setting(60, "duration", "how long a user's role and status "
                                            "are cached in Redis (a change evicts them at once)",
                                            group=ACCOUNTS, low=1)
    setup_token_ttl_seconds: int = setting(3600, "duration", "lifetime of the first-run setup "
                                           "token printed at start-up", group=ACCOUNTS, low=60)
    audit_retention_seconds: int = setting(90 * 86400, "duration", "how long audit records "
                                           "(logins, user changes) are kept; a change applies "
                                           "at the next start", group=ACCOUNTS, low=3600)
    audit_queue_limit: int = setting(1000, "int", "audit events waiting to be written; past it "
                                     "new events are dropped (and counted), never the request",
                                     group=ACCOUNTS, low=1)
    argon2_time_cost: int = setting(2, "int", "argon2id passes; with `ARGON2_MEMORY_KIB` at "
                                    "least one of OWASP's rows (19456 KiB with 2 passes, 12288 "
                                    "with 3, 9216 with 4, 7168 with 5, 47104 with 1); stored "
                                    "hashes are renewed at the next login", group=ACCOUNTS,
                                    low=1, high=100)
    argon2_memory_kib: int = setting(19 * 1024, "size", "argon2id memory per hash",
                                     group=ACCOUNTS, unit=1024, low=7168, high=4 * 1024 * 1024)
    argon2_parallelism: int = setting(1, "int", "argon2id lanes per hash", group=ACCOUNTS,
                                      low=1, high=16)
    hash_workers: int = setting(2, "int", "threads that hash passwords (logins, new users)",
                                group=ACCOUNTS, low=1)
    hash_queue_limit: int = setting(64, "int", "hashes that may wait for a thread beyond the "
                                    "running ones; more answer 429 at once", group=ACCOUNTS, low=0)
    hash_wait_seconds: float = setting(5.0, "duration", "longest wait for a hashing thread, "
                                       "then 429", group=ACCOUNTS, low=0.01)
    hash_thread_nice: int = setting(10, "int", "niceness added to the hashing threads so the "
                                    "event loop wins the CPU", group=ACCOUNTS, low=0, high=19)
    # login throttling: a block needs account AND client address together; across
    # addresses an account is only slowed down (a growing, capped wait), never locked
    account_failure_limit: int = setting(5, "int", "failures of one account from one address "
                                         "before that pair pauses (429 with `Retry-After`)",
                                         group=THROTTLE, low=1)
    account_lock_first_seconds: int = setting(60, "duration", "first pause of that pair; it "
                                              "doubles per further failure (at most the window)",
                                              group=THROTTLE, low=1)
    account_failure_window_seconds: int = setting(900, "duration", "how long failures of an "
                                                  "account are remembered", group=THROTTLE, low=1)
    address_failure_limit: int = setting(100, "int", "failures from one client address (any "
                                         "account) before it is blocked", group=THROTTLE, low=1)
    address_failure_window_seconds: int = setting(900, "duration", "how long failures of an "
                                                  "address are remembered", group=THROTTLE, low=1)
    account_slowdown_after: int = setting(5, "int", "failures of an account from anywhere before "
                                          "each attempt on it waits", group=THROTTLE, low=0)
    account_slowdown_base_seconds: float = setting(0.5, "duration", "first such wait; it doubles "
                                                   "per further failure", group=THROTTLE, low=0)
    account_slowdown_max_seconds: float = setting(10.0, "duration", "the longest such wait",
                                                  group=THROTTLE, low=0)
    # request limits
    max_json_body_bytes: int = setting(64 * 1024, "size", "largest JSON request body (413)",
                                       group=REQUESTS, low=1024)
    max_upload_bytes: int = setting(50 * _MB, "size", "largest upload (docs service, code 41301)",
                                    group=REQUESTS, low=1)
    max_markdown_bytes: int = setting(10 * _MB, "size", "largest Markdown input of `/md/convert` "
                                      "(41301)", group=REQUESTS, low=1)
    min_upload_bytes_per_second: int = setting(1024, "size", "every request body must arrive at "
                                               "this average rate (bytes per second) once the "
                                               "grace period has passed, else 408 and the "
                                               "connection closes (slow-body attacks); `0`: no "
                                               "minimum", group=REQUESTS, low=0, clamp=True)
    upload_rate_grace_seconds: float = setting(10.0, "duration", "time a body may take before "
                                               "its rate is checked", group=REQUESTS, low=0,
                                               clamp=True)
    archive_max_entries: int = setting(10_000, "int", "entries of one uploaded or staged archive "
                                       "(more: 40004)", group=REQUESTS, low=1)
    archive_max_unpacked_bytes: int = setting(500 * _MB, "size", "bytes of one archive once "
                                              "unpacked, counted while unpacking (more: 40004)",
                                              group=REQUESTS, low=1)
    # Markdown parsing cost, checked before parsing (render_pool.engine.markdown.limits, 40003)
    markdown_max_link_openers: int = setting(100_000, "int", "most `](` in one Markdown input "
                                             "(`/md/convert`; more: 40003 before parsing)",
                                             group=MARKDOWN, low=0)
    markdown_max_link_openers_per_run: int = setting(64, "int", "most `](` in one run of "
                                                     "Markdown without spaces (each rescans the "
                                                     "run)", group=MARKDOWN, low=0)
    markdown_max_footnotes: int = setting(2_000, "int", "most footnote definitions in one "
                                          "Markdown input", group=MARKDOWN, low=0)
    markdown_max_reference_definitions: int = setting(5_000, "int", "most link reference "
                                                      "definitions in one Markdown input",
                                                      group=MARKDOWN, low=0)
    markdown_max_reference_definitions_per_block: int = setting(
        1_000, "int", "most link reference definitions in one block (no blank line between)",
        group=MARKDOWN, low=0)
    markdown_max_delimiter_runs: int = setting(300_000, "int", "most emphasis delimiter runs "
                                               "(`*` `_` `~`) in one Markdown input",
                                               group=MARKDOWN, low=0)
    # conversion pool
    pool_workers: int = setting(0, "int", "conversion worker processes; `0`: the CPU count",
                                group=POOL, low=0, shown="`0` (CPU count)")
    pool_queue_limit: int = setting(16, "int", "jobs that may wait beyond the running ones (then "
                                    "50301 with `Retry-After`)", group=POOL, low=0)
    pool_queue_limit_per_company: int = setting(8, "int", "pool jobs one company may have waiting "
                                                "(then 50301 with `Retry-After`); `0`: only "
                                                "`POOL_QUEUE_LIMIT`", group=POOL, low=0,
                                                clamp=True)
    pool_tenant_max_running: int = setting(0, "int", "conversions one company runs at once "
                                           "while another company's job waits; when nobody "
                                           "else waits it may use every worker, and a job past "
                                           "this share is stopped and queued again the moment "
                                           "another company's job would wait; `0`: "
                                           "`POOL_WORKERS` - 1 (at least 1)", group=POOL, low=0,
                                           shown="`0` (workers - 1)")
    job_timeout_seconds: float = setting(120.0, "duration", "time limit of one conversion (then "
                                         "50401)", group=POOL, low=1)
    worker_memory_mb: int = setting(1500, "size", "hard memory limit of each conversion worker "
                                    "(`RLIMIT_AS`, set when it starts): a job that needs more "
                                    "fails with 41301 and its worker is replaced; the same figure "
                                    "bounds the worker's resident size with its Chromium after "
                                    "each job (Chromium itself is bounded by "
                                    "`CHROMIUM_MAX_RSS_MB`); `0`: no limit", group=POOL,
                                    env="POOL_WORKER_MEMORY_MB", unit=_MB, low=0, clamp=True)
    sheet_max_cells: int = setting(50_000, "int", "cells of an XLSX/ODS/XLS/CSV read per "
                                   "document; the rest is left out with a warning", group=POOL,
                                   low=1, clamp=True)
    # bounds checked in the workers before the costly work (render_pool/engine/limits.py, whose
    # defaults these are; the pool hands them to every worker)
    table_max_rows: int = setting(10_000, "int", "rows of one table read from a DOCX or an XLSX "
                                  "sheet (also from ODT, RTF, DOC, ODS and XLS once LibreOffice "
                                  "has converted them); the rest is left out with a warning",
                                  group=POOL, low=1, clamp=True)
    office_max_text_cells: int = setting(10_000, "int", "table cells of an ODT, DOC or RTF "
                                         "LibreOffice may lay out, counted before it starts "
                                         "(its table layout grows faster than the cells: "
                                         "30,000 took 38 s); more: 41301 at once", group=POOL,
                                         low=1)
    office_max_sheet_cells: int = setting(200_000, "int", "cells of an ODS or XLS LibreOffice "
                                          "may convert, counted before it starts (repeated "
                                          "rows and columns counted as many times as they "
                                          "repeat); more: 41301 at once", group=POOL, low=1)
    embedded_images_max_mb: int = setting(100, "size", "image data (base64) one HTML or "
                                          "Markdown output may embed with `images=embed`; an "
                                          "image shown 3,000 times counts 3,000 times; more: "
                                          "41301 before anything is written (ask "
                                          "`images=placeholder` or `save=true`)", group=POOL,
                                          unit=_MB, low=1)
    office_timeout_seconds: float = setting(60.0, "duration", "time limit of one LibreOffice "
                                            "conversion (ODT, ODS, ODP, DOC, XLS, PPT, RTF; kept "
                                            "5 s under `JOB_TIMEOUT_SECONDS`), then its process "
                                            "group is killed and 50401", group=POOL, low=1,
                                            clamp=True)
    office_memory_mb: int = setting(4096, "size", "memory limit of one LibreOffice "
                                    "conversion (`RLIMIT_AS`, set as it starts, in place of "
                                    "`POOL_WORKER_MEMORY_MB`): LibreOffice reserves far more "
                                    "address space than it uses, and a 67 KB presentation "
                                    "needed over 3,000 MB; past it the file answers 40003, "
                                    "which names the limit; `0`: the worker's limit applies",
                                    group=POOL, unit=_MB, low=0, clamp=True)
    # the LibreOffice and Tesseract settings below reach the pool's workers through
    # render_pool/engine/config.py (documents.setup.pool_from_settings), whose defaults these are
    soffice_path: str = setting("", "text", "the LibreOffice executable for ODT, ODS, ODP, DOC, "
                                "XLS, PPT and RTF; one installed outside `/usr` has its "
                                "installation folder mounted read-only in the sandbox",
                                group=POOL, strip=True, shown="`soffice` on PATH")
    office_sandbox: OfficeSandbox = setting(
        "required", "choice", "`required`: LibreOffice (ODT, ODS, ODP, DOC, XLS, PPT, RTF) "
        "runs only in a bubblewrap sandbox that sees its job folder, its profile and read-only "
        "system files, with no network; where the sandbox cannot start (no `bwrap`, no user "
        "namespaces) those formats answer 50001. `off`: no sandbox (a network namespace where "
        "the kernel allows it); links to other files are still removed first", group=POOL)
    ocr_languages: str = setting("eng+deu+fra+spa+chi_sim+jpn", "text", "Tesseract language "
                                 "packs (`+`-joined) OCR reads scanned pages and images with; "
                                 "packs not installed are skipped. A page is read with the "
                                 "Latin-script packs first; when that reads poorly and "
                                 "Tesseract's script detection sees another script, with that "
                                 "script's packs (`chi_sim`, `jpn`, ...) and `eng`. The image "
                                 "and `just setup` install these six, listed in "
                                 "`deploy/ocr-languages.txt`", group=POOL, strip=True)
    ocr_engine: OcrEngine = setting(
        "api", "choice", "`api`: Tesseract through its C++ API in the pool worker (tesserocr, "
        "engines kept loaded; its wheel bundles Tesseract 5.5.4); `cli`: the `tesseract` command, "
        "one process per call (Debian's Tesseract, about 1.5x the CPU per page). `api` falls back "
        "to `cli` when tesserocr is not installed", group=POOL)
    tessdata_prefix: str = setting("", "text", "the folder holding Tesseract's language packs "
                                   "(`.traineddata` files; Tesseract 5's own meaning of its "
                                   "variable), for both engines", group=POOL, strip=True,
                                   shown="where the `tesseract` command finds them")
    # PDF printing: one Chromium per worker (render_pool.runtime.browser)
    chromium_path: str = setting("", "text", "browser used for Markdown to PDF", group=CHROMIUM,
                                 shown="`chromium` on PATH")
    chromium_max_jobs: int = setting(200, "int", "renders after which a worker's browser is "
                                     "restarted", group=CHROMIUM, low=1, clamp=True)
    chromium_max_rss_mb: int = setting(2048, "size", "resident size of a browser's process tree "
                                       "past which it is restarted", group=CHROMIUM, unit=_MB,
                                       low=64, clamp=True)
    pdf_render_timeout: float = setting(60.0, "duration", "time limit of one render (the browser "
                                        "is killed past it)", group=CHROMIUM, low=1, clamp=True)
    chromium_page_reuse_jobs: int = setting(50, "int", "jobs one browser page prints before it is "
                                            "replaced (1: a new page per job)", group=CHROMIUM,
                                            low=1, clamp=True)
    # remote fetches (source_url, markdown_url, images, /proxy/download)
    allow_private_urls: bool = setting(False, "bool", "`true` lets remote fetches reach "
                                       "private/loopback addresses (tests)", group=FETCH)
    fetch_timeout_seconds: float = setting(20.0, "duration", "time limit of one remote fetch "
                                           "(an image of a Markdown document: at most 15 s)",
                                           group=FETCH, low=0.1)
    fetch_max_bytes: int = setting(50 * _MB, "size", "largest remote image fetched for a "
                                   "Markdown document, with `MARKDOWN_IMAGE_MAX_BYTES` (the "
                                   "smaller applies); `source_url` is bounded by "
                                   "`MAX_UPLOAD_BYTES`, `markdown_url` by `MAX_MARKDOWN_BYTES`",
                                   group=FETCH, low=1)
    markdown_images_max_mb: int = setting(100, "size", "remote images of one `/md/convert` "
                                          "document together; they are streamed to files under "
                                          "`DATA_DIR/tmp` and read by the worker, never held whole "
                                          "by the service; images past the total are left out "
                                          "with a warning", group=FETCH, unit=_MB, low=1,
                                          clamp=True)
    markdown_image_max_bytes: int = setting(20 * _MB, "size", "one remote image of a Markdown "
                                            "document (its images, `cover_url`, `logo_url`)",
                                            group=FETCH, low=1)
    markdown_images_max_count: int = setting(200, "int", "remote images fetched for one Markdown "
                                             "document; the rest are left out with a warning",
                                             group=FETCH, low=0)
    markdown_image_fetches: int = setting(8, "int", "images of one Markdown document fetched at "
                                          "once", group=FETCH, low=1)
    # object storage (S3_ENDPOINT set: no embedded storage)
    s3_endpoint: str = setting("", "text", "object storage endpoint; set: no embedded SeaweedFS "
                               "starts", group=STORAGE, shown="(embedded)")
    s3_public: str = setting("", "text", "the endpoint as clients reach it (links are signed "
                             "for this host)", group=STORAGE, shown="`S3_ENDPOINT`")
    s3_access_key: str = setting("", "text", "access key", group=STORAGE, secret=True,
                                 shown="(none)")
    s3_secret_key: str = setting("", "text", "secret key", group=STORAGE, secret=True,
                                 shown="(none)")
    s3_bucket: str = setting("docservice", "text", "bucket; also names the embedded bucket",
                             group=STORAGE)
    s3_secure: bool = setting(False, "bool", "HTTPS to the endpoint", group=STORAGE)
    s3_prefix: str = setting("", "text", "key prefix of everything stored", group=STORAGE,
                             shown="(none)")
    s3_public_read: bool = setting(False, "bool", "apply a public-read policy to the bucket "
                                   "(direct links instead of presigned ones)", group=STORAGE)
    s3_region: str = setting("", "text", "region used for signing", group=STORAGE,
                             shown="(none)")
    presign_expiry_seconds: int = setting(86400, "duration", "lifetime of every presigned link "
                                          "(`STORAGE_LINKS=presigned`: also those written into "
                                          "stored Markdown and batch documents on a private "
                                          "bucket; S3's maximum: 7 days)",
                                          group=STORAGE, low=60, high=7 * 86400, clamp=True)
    storage_links: LinkMode = setting(
        "service", "choice", "the links answered for stored results and written into stored "
        "documents: `service`, this service's own download address (`/proxy/object/...`, on "
        "`PUBLIC_BASE_URL`) with a token per object, which never expires; `presigned`, S3 "
        "presigned links valid `PRESIGN_EXPIRY_SECONDS` (the answer says until when); `direct`, "
        "the bucket's plain links, used only while the company's storage has `public_read` and "
        "an anonymous read of a test object succeeds (else `service` links, with a warning); "
        "`presigned` and `direct` also fall back to `service` while the storage's address is "
        "loopback and the service's is not", group=STORAGE)
    public_base_url: str = setting(
        "", "custom", "the address clients reach this service at (`https://docs.example.com`, "
        "a path allowed), on which `service` links are made; empty: the address of the request "
        "that stores (a job: of the request that queued it), from its Host header: set this "
        "when the service runs behind a proxy or clients reach it by another name", group=STORAGE,
        shown="(the request's)", parse=lambda text: _base_url(text),
        form="an http(s) address without query, fragment or user")
    storage_allowed_endpoints: tuple[str, ...] = setting(
        (), "list", "storage endpoints allowed although they are loopback, link-local or metadata "
        "addresses (the embedded storage and the `S3_*` one are always allowed)",
        group=STORAGE, item=str.lower, item_form="`host` or `host:port`")
    storage_deny_private: bool = setting(False, "bool", "also refuse storage endpoints in private "
                                         "ranges (10/8, 172.16/12, 192.168/16, fc00::/7...)",
                                         group=STORAGE)
    upload_concurrency: int = setting(8, "int", "parallel asset uploads of one batch",
                                      group=STORAGE, low=1, clamp=True)
    folder_roots: tuple[Path, ...] = setting(
        (), "custom", "folders `/md/convert-folder` may read, per company: "
        "`ACME:/srv/acme;BETA:/srv/beta:/srv/shared` (`;` between companies, the company code "
        "exactly as spelled, `:` between its absolute paths). Bare paths (`/srv/docs:/srv/more`, "
        "the old global form) serve only the operator token and `DOCS_AUTH=none`, never a "
        "company. Only an ADMIN converts a folder", group=STORAGE, shown="(none)",
        parse=lambda text: _folder_roots(text)[0],
        form="`CODE:/path[:/path]` entries separated by `;`")
    company_folder_roots: dict[str, tuple[Path, ...]] = setting(
        {}, "custom", "the per-company part of FOLDER_ROOTS", group=STORAGE, factory=dict,
        env="FOLDER_ROOTS", documented=False, parse=lambda text: _folder_roots(text)[1])
    # durable jobs (Redis Streams) and their webhooks
    job_claim_idle_seconds: float = setting(30.0, "duration", "a job whose consumer has not "
                                            "shown life for this long (killed, out of memory, "
                                            "node lost) is claimed by another consumer and run "
                                            "again", group=JOBS, low=1)
    job_result_ttl_seconds: int = setting(24 * 3600, "duration", "how long a job and its result "
                                          "stay readable after its last change", group=JOBS,
                                          low=60)
    job_max_attempts: int = setting(3, "int", "starts after which a job that never ended is "
                                    "`failed`", group=JOBS, low=1, clamp=True)
    job_queue_limit_per_company: int = setting(20, "int", "async jobs one company may have queued "
                                               "or running; one more `async=true` request "
                                               "answers 50301 with `Retry-After` and stores "
                                               "nothing; `0`: no limit", group=JOBS, low=0,
                                               clamp=True)
    webhook_secret: str = setting("", "text", "the operator's webhook signing key: signs only "
                                  "the jobs of the operator token (`DOCS_API_TOKEN`) and of "
                                  "`DOCS_AUTH=none` while those have no secret of their own. A "
                                  "company's webhooks are signed with the company's secret "
                                  "(`POST /api/webhook-secret`, ADMIN), never with this",
                                  group=JOBS, secret=True, shown="(none)")
    webhook_timeout_seconds: float = setting(10.0, "duration", "time limit of one webhook POST; "
                                             "an attempt holds its delivery for three times this",
                                             group=JOBS, low=1)
    webhook_first_retry_seconds: float = setting(30.0, "duration", "first wait before a failed "
                                                 "webhook is retried (doubling after each "
                                                 "failure)", group=JOBS, low=0)
    webhook_max_retry_gap_seconds: float = setting(3600.0, "duration", "the longest wait between "
                                                   "two attempts", group=JOBS, low=0)
    webhook_retry_seconds: float = setting(24 * 3600.0, "duration", "how long after the job's end "
                                           "retries go on", group=JOBS, low=0)

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> Settings:
        """Build settings from ``env`` (default: the process environment); a value that cannot
        be read stops start-up (SystemExit naming the variable and the accepted form)."""
        env = os.environ if env is None else env
        settings = cls(**{f.name: spec.read(env, _default(f)) for f, spec in specs()})
        if not any(settings.argon2_memory_kib >= memory and settings.argon2_time_cost >= passes
                   for memory, passes in OWASP_ARGON2):
            raise SystemExit(
                f"ARGON2_MEMORY_KIB={settings.argon2_memory_kib} with ARGON2_TIME_COST="
                f"{settings.argon2_time_cost} is weaker than OWASP's argon2id minimum: "
                + ", ".join(f"{m} KiB with {t} passes" for m, t in OWASP_ARGON2))
        return settings

    @functools.cached_property
    def trusted_networks(self) -> tuple[ipaddress.IPv4Network | ipaddress.IPv6Network, ...]:
        """``trusted_proxies`` as network objects."""
        return tuple(ipaddress.ip_network(n) for n in self.trusted_proxies)

    def public_view(self) -> dict[str, object]:
        """Settings safe to log: secrets and URL credentials masked."""
        out: dict[str, object] = {}
        for f, spec in specs():
            value = getattr(self, f.name)
            if spec.secret and value:
                value = "****"
            elif isinstance(value, str) and "://" in value:
                value = mask_url(value)
            out[f.name] = str(value) if isinstance(value, Path) else value
        return out


def child_environment(env: Mapping[str, str] | None = None, *,
                      drop_prefixes: tuple[str, ...] = ()) -> dict[str, str]:
    """The environment a program the service starts may inherit: ``env`` (default: the
    process environment) without the variables declared here, which are the service's own
    configuration and secrets (a child is given what it needs explicitly), and without those
    whose names start with one of ``drop_prefixes`` (in any case).

    The one other reading of the process environment than :meth:`Settings.from_env`: the
    pool's workers get this for LibreOffice and Tesseract
    (:mod:`render_pool.engine.config`), the embedded SeaweedFS without its ``WEED_*``."""
    env = os.environ if env is None else env
    own = {spec.env for _, spec in specs()}
    prefixes = tuple(p.upper() for p in drop_prefixes)
    return {name: value for name, value in env.items()
            if name not in own and not name.upper().startswith(prefixes)}


# query parameters whose values are secrets (MongoDB's authMechanismProperties may hold an
# AWS session token)
_SECRET_QUERY = re.compile(r"(?i)pass|secret|token|key|credential|authmechanismproperties")


def mask_url(url: str) -> str:
    """``url`` safe to log: its user info and the values of query parameters named like a
    password, secret, token or key (``redis://h/?password=...``) masked as ``****``; the
    rest (host, database, ``authSource``) stays readable."""
    scheme, sep, rest = url.partition("://")
    if not sep:
        return url
    if "@" in rest.split("/", 1)[0].split("?", 1)[0]:
        rest = "****@" + rest.split("@", 1)[1]
    head, qmark, query = rest.partition("?")
    if qmark:
        parts = []
        for pair in query.split("&"):
            name, eq, _value = pair.partition("=")
            parts.append(f"{name}=****" if eq and _SECRET_QUERY.search(name) else pair)
        rest = f"{head}?{'&'.join(parts)}"
    return f"{scheme}://{rest}"


def _default(f: Field[Any]) -> Any:
    if f.default_factory is not MISSING:
        return f.default_factory()
    return f.default


@functools.cache
def _specs() -> tuple[tuple[Field[Any], Spec], ...]:
    out = []
    hints = get_type_hints(Settings)
    for f in fields(Settings):
        spec: Spec = f.metadata["spec"]
        filled: dict[str, Any] = {"env": spec.env or f.name.upper()}
        if spec.kind == "choice":  # the choices are the field's Literal type
            filled["choices"] = get_args(hints[f.name])
            assert filled["choices"], f"{f.name}: a choice setting needs a Literal type"
        out.append((f, Spec(**{**spec.__dict__, **filled})))
    return tuple(out)


def specs() -> Iterator[tuple[Field[Any], Spec]]:
    """Each field of :class:`Settings` with its spec (``env`` filled in), in declared order."""
    return iter(_specs())


# --------------------------------------------------------------------------- the document


def _shown_default(f: Field[Any], spec: Spec) -> str:
    if spec.shown:
        return spec.shown
    value = _default(f)
    if isinstance(value, bool):
        return f"`{str(value).lower()}`"
    if value in ("", (), None):
        return "(none)"
    if isinstance(value, float) and value == int(value):
        value = int(value)
    text = f"`{value}`"
    human = (_human_duration(value) if spec.kind == "duration" else
             _human_size(value, spec.unit) if spec.kind == "size" else "")
    return f"{text} ({human})" if human and human != str(value) else text


def _type(f: Field[Any], spec: Spec) -> str:
    if spec.kind == "duration":
        return "duration (s)"
    if spec.kind == "size":
        return f"size ({_UNIT_WORDS[spec.unit]})"
    if spec.kind == "choice":
        return "choice"
    return spec.kind if spec.kind not in ("custom",) else "text"


def _bounds(f: Field[Any], spec: Spec) -> str:
    if spec.kind == "choice":
        return ", ".join(f"`{c}`" for c in spec.choices)
    if spec.kind == "list":
        joined = "comma" if spec.separators == "," else "comma or space"
        return f"{joined}-separated {spec.item_form or 'values'}"
    if spec.kind == "custom":
        return spec.form
    low, high = _number(spec.low), _number(spec.high)
    text = f"{low} to {high}" if low and high else f">= {low}" if low else f"<= {high}" if high \
        else ""
    return f"{text} (clamped)" if text and spec.clamp else text


def markdown() -> str:
    """``docs/configuration.md``: every variable by group, with type, default, bounds, help."""
    lines = [
        "# Configuration",
        "",
        "<!-- Generated from tornado_app/settings.py by `just config-doc`; do not edit. -->",
        "",
        "Every setting comes from an environment variable, read once at start-up into one "
        "settings object (`tornado_app/settings.py`, where each is declared once). An unset or "
        "empty variable keeps the default. A value that cannot be read, or lies outside its "
        "bounds, stops start-up with a message naming the variable and the accepted form; the "
        "few marked *clamped* are moved to the nearest bound instead. "
        "`python -m tornado_app.settings` reads the environment the same way and prints the "
        "resulting settings (secrets masked), so a configuration can be checked before a start.",
        "",
        "Forms of the types:",
        "",
        "- **int**: a whole number (`16`).",
        "- **duration (s)**: seconds, `90` or `1.5`, or with a unit: `500ms`, `90s`, `2m`, "
        "`1.5h`, `1d`. Settings counted in whole seconds (session and cache lifetimes) need a "
        "whole number of seconds.",
        "- **size**: a whole number in the unit shown (bytes, KiB or MiB), or with a binary unit: "
        "`512K`, `50M`, `2G` (also `50MB`, `50MiB`; 1M = 1024K).",
        "- **bool**: `true`/`false` (also `1`/`0`, `yes`/`no`, `on`/`off`).",
        "- **choice**: one of the values listed (case-insensitive).",
        "- **list**: values separated by commas (where said, also by spaces).",
        "- **text**, **path**: used as given.",
        "",
        "Secrets (passwords, tokens, keys, URL credentials) are never logged.",
    ]
    groups: dict[str, list[tuple[Field[Any], Spec]]] = {}
    for f, spec in specs():
        if spec.documented:
            groups.setdefault(spec.group, []).append((f, spec))
    for group, members in groups.items():
        lines += ["", f"## {group}", "",
                  "| variable | type | default | bounds | meaning |", "|---|---|---|---|---|"]
        for f, spec in members:
            cells = [f"`{spec.env}`", _type(f, spec), _shown_default(f, spec), _bounds(f, spec),
                     spec.help]
            lines.append("| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> None:
    """``python -m tornado_app.settings --markdown``: print ``docs/configuration.md``;
    with no option, check the process environment and print the settings safe to log."""
    parser = argparse.ArgumentParser(prog="python -m tornado_app.settings")
    parser.add_argument("--markdown", action="store_true", help="print docs/configuration.md")
    args = parser.parse_args(argv)
    if args.markdown:
        print(markdown(), end="")
        return
    for name, value in Settings.from_env().public_view().items():
        print(f"{name} = {value!r}")


if __name__ == "__main__":
    main()
