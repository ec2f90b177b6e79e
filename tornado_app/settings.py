"""The one settings object, read from environment variables (see docs/configuration.md)."""

from __future__ import annotations

import functools
import ipaddress
import os
from dataclasses import dataclass, field, fields
from pathlib import Path

from store.booleans import NotABoolean, parse_bool


def _env_bool(env: dict[str, str], name: str, default: bool) -> bool:
    value = env.get(name)
    if value is None or value == "":
        return default
    try:
        return parse_bool(value, default)
    except NotABoolean as exc:
        raise SystemExit(f"{name} must be true or false, got {value!r}") from exc


def _env_int(env: dict[str, str], name: str, default: int) -> int:
    value = env.get(name)
    if value is None or value == "":
        return default
    try:
        return int(value)
    except ValueError as exc:
        raise SystemExit(f"{name} must be an integer, got {value!r}") from exc


def _env_float(env: dict[str, str], name: str, default: float) -> float:
    value = env.get(name)
    if value is None or value == "":
        return default
    try:
        return float(value)
    except ValueError as exc:
        raise SystemExit(f"{name} must be a number, got {value!r}") from exc


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


def _docs_auth(value: str) -> str:
    """``DOCS_AUTH``: ``required`` (default) or ``none``; anything else stops start-up."""
    value = (value or "required").strip().lower()
    if value not in ("required", "none"):
        raise SystemExit(f"DOCS_AUTH must be 'required' or 'none', got {value!r}")
    return value


def _env_networks(env: dict[str, str], name: str) -> tuple[str, ...]:
    """A comma/space list of addresses or CIDRs, checked (a typo stops the start)."""
    out = []
    for part in env.get(name, "").replace(",", " ").split():
        try:
            out.append(str(ipaddress.ip_network(part, strict=False)))
        except ValueError as exc:
            raise SystemExit(f"{name}: {part!r} is not an address or CIDR") from exc
    return tuple(out)


def _event_loop(value: str) -> str:
    """``EVENT_LOOP``: ``uvloop`` (default) or ``asyncio``; anything else stops start-up."""
    value = value.strip().lower() or "uvloop"
    if value not in ("uvloop", "asyncio"):
        raise SystemExit(f"EVENT_LOOP must be uvloop or asyncio, got {value!r}")
    return value


def _log_format(value: str) -> str:
    value = value.strip().lower() or "auto"
    if value not in ("auto", "json", "console"):
        raise SystemExit(f"LOG_FORMAT must be json or console, got {value!r}")
    return value


@dataclass(frozen=True)
class Settings:
    """What an operator (or a test) may set, read once from the environment. Fixed limits live
    beside their code (archive limits in ``render_pool.archives``, the zip-bomb guard in
    ``render_pool.zipread``, the shutdown grace in ``tornado_app.__main__``). Secrets here are
    never logged (see ``public_view``)."""

    data_dir: Path = Path("./data")
    mongo_url: str = ""  # empty: start the embedded SecantusDB
    mongo_db: str = "docservice"
    redis_url: str = ""  # empty: start the embedded redis-server
    session_ttl_seconds: int = 86400
    permission_cache_seconds: int = 60
    log_level: str = "INFO"
    log_format: str = "auto"  # auto: console on a terminal, JSON lines otherwise
    # process runtime (tornado_app.runtime): event loop and collector tuning for latency
    event_loop: str = "uvloop"
    gc_gen0_threshold: int = 50_000  # 0: Python's default (700)
    # request limits
    max_json_body_bytes: int = 64 * 1024
    max_upload_bytes: int = 50 * 1024 * 1024
    max_markdown_bytes: int = 10 * 1024 * 1024
    # a body slower than this on average after the grace period is cut (408); 0: off
    min_upload_bytes_per_second: int = 1024
    upload_rate_grace_seconds: float = 10.0
    # Markdown parsing cost, checked before parsing (render_pool.markdown_limits, 40003)
    markdown_max_link_openers: int = 100_000
    markdown_max_link_openers_per_run: int = 64
    markdown_max_footnotes: int = 2_000
    markdown_max_reference_definitions: int = 5_000
    markdown_max_reference_definitions_per_block: int = 1_000
    markdown_max_delimiter_runs: int = 300_000
    # password hashing: argon2id, OWASP parameters or stronger
    argon2_time_cost: int = 2
    argon2_memory_kib: int = 19 * 1024
    argon2_parallelism: int = 1
    hash_workers: int = 2
    hash_queue_limit: int = 64
    hash_wait_seconds: float = 5.0
    hash_thread_nice: int = 10  # hashing threads yield the CPU to the event loop
    # login throttling: a block needs account AND client address together; across
    # addresses an account is only slowed down (a growing, capped wait), never locked
    account_failure_limit: int = 5  # failures of one account from one address -> 429
    account_lock_first_seconds: int = 60  # first pause of that pair; doubles per failure
    account_failure_window_seconds: int = 900
    address_failure_limit: int = 100
    address_failure_window_seconds: int = 900
    account_slowdown_after: int = 5  # failures of an account from anywhere before waits
    account_slowdown_base_seconds: float = 0.5  # first wait; doubles per further failure
    account_slowdown_max_seconds: float = 10.0
    # X-Forwarded-For is read only from these peers (addresses/CIDRs); none by default
    trusted_proxies: tuple[str, ...] = ()
    # first run and audit trail
    setup_token_ttl_seconds: int = 3600
    audit_queue_limit: int = 1000
    # conversion pool
    pool_workers: int = 0  # 0: from the CPU count
    pool_queue_limit: int = 16
    pool_queue_limit_per_company: int = 8  # waiting jobs of one company (0: no own limit)
    job_timeout_seconds: float = 120.0
    worker_memory_mb: int = 1500  # hard address-space limit of each worker (0: none)
    sheet_max_cells: int = 50_000  # XLSX/ODS/XLS/CSV cells read per document, then a warning
    office_timeout_seconds: float = 60.0  # one LibreOffice conversion (ODT, DOC, RTF, ...)
    ocr_languages: str = "eng+deu+fra+spa"  # Tesseract packs for OCR, "+"-joined
    # remote fetches
    allow_private_urls: bool = False
    fetch_timeout_seconds: float = 20.0
    fetch_max_bytes: int = 50 * 1024 * 1024
    markdown_images_max_mb: int = 100  # remote images of one /md/convert document together
    # object storage (S3_ENDPOINT set: no embedded storage)
    s3_endpoint: str = ""
    s3_public: str = ""
    s3_access_key: str = ""
    s3_secret_key: str = field(default="", repr=False)
    s3_bucket: str = "docservice"
    s3_secure: bool = False
    s3_prefix: str = ""
    s3_public_read: bool = False
    presign_expiry_seconds: int = 86400  # lifetime of presigned links; at most 7 days
    s3_region: str = ""
    # endpoints the storage address policy allows although loopback/link-local ("host[:port]")
    storage_allowed_endpoints: tuple[str, ...] = ()
    storage_deny_private: bool = False
    folder_roots: tuple[Path, ...] = ()  # the operator's (operator token, DOCS_AUTH=none)
    company_folder_roots: dict[str, tuple[Path, ...]] = field(default_factory=dict)  # by code
    upload_concurrency: int = 8
    chromium_path: str = ""
    chromium_max_jobs: int = 200
    chromium_max_rss_mb: int = 2048
    pdf_render_timeout: float = 60.0
    chromium_page_reuse_jobs: int = 50
    docs_api_token: str = field(default="", repr=False)
    seed_file: Path | None = None  # a JSON seed applied at start-up (``serve --seed``)
    weed_bin: str = ""  # the SeaweedFS ``weed`` binary; empty: the embedded extra's, or PATH
    # callers and browsers (see docs/security.md)
    docs_auth: str = "required"  # "none": no caller auth (single user, loopback only)
    allowed_origins: tuple[str, ...] = ()  # extra origins for state changes; enables CORS
    public_hosts: tuple[str, ...] = ()  # accepted Host header values (empty: any)
    metrics_address: str = "127.0.0.1:9108"  # listener of /metrics and /ready ("off": none)
    # durable jobs (Redis Streams) and their webhooks
    job_claim_idle_seconds: float = 30.0  # a job idle this long at its consumer is re-run
    job_result_ttl_seconds: int = 24 * 3600
    job_max_attempts: int = 3
    job_queue_limit_per_company: int = 20  # async jobs queued or running (0: no limit)
    webhook_secret: str = field(default="", repr=False)
    webhook_first_retry_seconds: float = 30.0
    webhook_max_retry_gap_seconds: float = 3600.0  # the doubling wait stops growing here
    webhook_retry_seconds: float = 24 * 3600  # no attempt later than this after the job ended

    @classmethod
    def from_env(cls, env: dict[str, str] | None = None) -> Settings:
        """Build settings from ``env`` (default: the process environment)."""
        env = dict(os.environ if env is None else env)
        roots, company_roots = _folder_roots(env.get("FOLDER_ROOTS", ""))
        return cls(
            data_dir=Path(env.get("DATA_DIR") or "./data").absolute(),
            mongo_url=env.get("MONGO_URL", ""),
            mongo_db=env.get("MONGO_DB") or "docservice",
            redis_url=env.get("REDIS_URL", ""),
            session_ttl_seconds=_env_int(env, "SESSION_TTL_SECONDS", 86400),
            log_level=(env.get("LOG_LEVEL") or "INFO").upper(),
            log_format=_log_format(env.get("LOG_FORMAT", "")),
            event_loop=_event_loop(env.get("EVENT_LOOP", "")),
            gc_gen0_threshold=_env_int(env, "GC_GEN0_THRESHOLD", 50_000),
            trusted_proxies=_env_networks(env, "TRUSTED_PROXIES"),
            max_upload_bytes=_env_int(env, "MAX_UPLOAD_BYTES", 50 * 1024 * 1024),
            min_upload_bytes_per_second=max(0, _env_int(env, "MIN_UPLOAD_BYTES_PER_SECOND",
                                                        1024)),
            upload_rate_grace_seconds=max(0.0, _env_float(env, "UPLOAD_RATE_GRACE_SECONDS",
                                                          10.0)),
            **{name: _env_int(env, name.upper(), getattr(cls, name))
               for name in cls.__dataclass_fields__ if name.startswith("markdown_max_")},
            pool_workers=_env_int(env, "POOL_WORKERS", 0),
            pool_queue_limit=_env_int(env, "POOL_QUEUE_LIMIT", 16),
            pool_queue_limit_per_company=max(0, _env_int(env, "POOL_QUEUE_LIMIT_PER_COMPANY", 8)),
            worker_memory_mb=max(0, _env_int(env, "POOL_WORKER_MEMORY_MB", 1500)),
            job_timeout_seconds=float(_env_int(env, "JOB_TIMEOUT_SECONDS", 120)),
            sheet_max_cells=max(1, _env_int(env, "SHEET_MAX_CELLS", 50_000)),
            office_timeout_seconds=float(max(1, _env_int(env, "OFFICE_TIMEOUT_SECONDS", 60))),
            ocr_languages=env.get("OCR_LANGUAGES", "").strip() or "eng+deu+fra+spa",
            allow_private_urls=_env_bool(env, "ALLOW_PRIVATE_URLS", False),
            markdown_images_max_mb=max(1, _env_int(env, "MARKDOWN_IMAGES_MAX_MB", 100)),
            s3_endpoint=env.get("S3_ENDPOINT", ""),
            s3_public=env.get("S3_PUBLIC", ""),
            s3_access_key=env.get("S3_ACCESS_KEY", ""),
            s3_secret_key=env.get("S3_SECRET_KEY", ""),
            s3_bucket=env.get("S3_BUCKET") or "docservice",
            s3_secure=_env_bool(env, "S3_SECURE", False),
            s3_prefix=env.get("S3_PREFIX", ""),
            s3_public_read=_env_bool(env, "S3_PUBLIC_READ", False),
            presign_expiry_seconds=min(7 * 86400, max(60, _env_int(
                env, "PRESIGN_EXPIRY_SECONDS", 86400))),
            s3_region=env.get("S3_REGION", ""),
            storage_allowed_endpoints=tuple(
                e.strip().lower() for e in env.get("STORAGE_ALLOWED_ENDPOINTS", "").split(",")
                if e.strip()),
            storage_deny_private=_env_bool(env, "STORAGE_DENY_PRIVATE", False),
            folder_roots=roots,
            company_folder_roots=company_roots,
            upload_concurrency=max(1, _env_int(env, "UPLOAD_CONCURRENCY", 8)),
            chromium_path=env.get("CHROMIUM_PATH", ""),
            chromium_max_jobs=max(1, _env_int(env, "CHROMIUM_MAX_JOBS", 200)),
            chromium_max_rss_mb=max(64, _env_int(env, "CHROMIUM_MAX_RSS_MB", 2048)),
            pdf_render_timeout=float(max(1, _env_int(env, "PDF_RENDER_TIMEOUT", 60))),
            chromium_page_reuse_jobs=max(1, _env_int(env, "CHROMIUM_PAGE_REUSE_JOBS", 50)),
            docs_api_token=env.get("DOCS_API_TOKEN", ""),
            seed_file=Path(env["SEED_FILE"]) if env.get("SEED_FILE") else None,
            weed_bin=env.get("WEED_BIN", ""),
            docs_auth=_docs_auth(env.get("DOCS_AUTH", "")),
            allowed_origins=tuple(o.strip().rstrip("/").lower()
                                  for o in env.get("ALLOWED_ORIGINS", "").split(",") if o.strip()),
            public_hosts=tuple(h.strip().lower()
                               for h in env.get("PUBLIC_HOSTS", "").split(",") if h.strip()),
            metrics_address=(env.get("METRICS_ADDRESS") or "127.0.0.1:9108").strip(),
            job_claim_idle_seconds=_env_float(env, "JOB_CLAIM_IDLE_SECONDS", 30),
            job_result_ttl_seconds=_env_int(env, "JOB_RESULT_TTL_SECONDS", 24 * 3600),
            job_max_attempts=max(1, _env_int(env, "JOB_MAX_ATTEMPTS", 3)),
            job_queue_limit_per_company=max(0, _env_int(env, "JOB_QUEUE_LIMIT_PER_COMPANY", 20)),
            webhook_secret=env.get("WEBHOOK_SECRET", ""),
            webhook_first_retry_seconds=_env_float(env, "WEBHOOK_FIRST_RETRY_SECONDS", 30),
            webhook_max_retry_gap_seconds=_env_float(env, "WEBHOOK_MAX_RETRY_GAP_SECONDS",
                                                     3600),
            webhook_retry_seconds=_env_float(env, "WEBHOOK_RETRY_SECONDS", 24 * 3600),
        )

    @functools.cached_property
    def trusted_networks(self) -> tuple[ipaddress.IPv4Network | ipaddress.IPv6Network, ...]:
        """``trusted_proxies`` as network objects."""
        return tuple(ipaddress.ip_network(n) for n in self.trusted_proxies)

    def public_view(self) -> dict[str, object]:
        """Settings safe to log: secrets and URL credentials masked."""
        out: dict[str, object] = {}
        for f in fields(self):
            value = getattr(self, f.name)
            if f.name in {"s3_secret_key", "docs_api_token", "s3_access_key",
                          "webhook_secret"} and value:
                value = "****"
            elif f.name in {"mongo_url", "redis_url"} and "@" in str(value):
                scheme, _, rest = str(value).partition("://")
                value = f"{scheme}://****@{rest.split('@', 1)[1]}"
            out[f.name] = str(value) if isinstance(value, Path) else value
        return out
