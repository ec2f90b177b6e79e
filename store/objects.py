"""Object storage: configuration, S3 client (minio SDK), object keys, links and presigning.

All calls here block (network I/O through the minio SDK and urllib3): the HTTP layer runs them
in a thread executor. Rules kept here:

- the endpoint is ``host:port``; a scheme given with it is stripped into ``secure``;
- a MinIO console address (port 9001, a path with ``/browser`` or ``/minio``) is refused with a
  hint naming the API port 9000;
- clients always get a ``region`` so presigning makes no network call;
- presigned links are signed by a second client built for the ``public`` host (the host is part
  of the signature); expiry is at most 7 days;
- direct links are ``http(s)://public/bucket/`` + ``quote(key, safe="/")`` (never ``quote_plus``).
"""

from __future__ import annotations

import hashlib
import io
import json
import mimetypes
import re
import time
from collections.abc import Iterator, Mapping
from dataclasses import asdict, dataclass, fields, replace
from datetime import UTC, datetime, timedelta
from email.utils import parsedate_to_datetime
from typing import Any
from urllib.parse import quote, urlsplit

import urllib3
from minio import Minio
from minio.error import InvalidResponseError, MinioException, S3Error

DEFAULT_REGION = "us-east-1"
DEFAULT_EXPIRY = timedelta(days=1)
MAX_EXPIRY = timedelta(days=7)
SKEW_HINT_SECONDS = 60.0
SKEW_FATAL_SECONDS = 15 * 60.0
CONSOLE_PORT = 9001
API_PORT = 9000
CONSOLE_MARKER = "S3 API Requests must be made to API port"
CONSOLE_HINT = (
    "this address looks like the MinIO web console, not the S3 API; "
    f"use the API port (usually {API_PORT}), e.g. host:{API_PORT}"
)
_BUCKET_RE = re.compile(r"^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$")
_TRUE = {"1", "true", "yes", "on", "y", "t"}
_FALSE = {"0", "false", "no", "off", "n", "f", ""}


class StorageConfigError(ValueError):
    """A storage configuration is invalid; ``error`` and ``hint`` are safe to show a caller."""

    def __init__(self, error: str, hint: str = "") -> None:
        super().__init__(f"{error} ({hint})" if hint else error)
        self.error = error
        self.hint = hint


class StorageError(Exception):
    """An object storage operation failed (service code 50201); ``message`` is safe to show."""

    code = 50201

    def __init__(self, message: str, hint: str = "") -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint


class UnsafeKey(ValueError):
    """An object key part would escape its prefix (``..``) or holds a control character."""


# --------------------------------------------------------------------------- configuration


def parse_bool(value: Any, default: bool = False) -> bool:
    """Read a form/env boolean (``true/false/1/0/on/off/yes/no``); None keeps ``default``."""
    value = _scalar(value)
    if value is None:
        return default
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text in _TRUE:
        return True
    if text in _FALSE:
        return False
    raise StorageConfigError(f"not a boolean: {value!r}", "use true or false")


def _scalar(value: Any) -> Any:
    """Unwrap Tornado-style ``[b"..."]`` form values into one str (or keep bool/None)."""
    if isinstance(value, list | tuple):
        value = value[-1] if value else None
    if isinstance(value, bytes):
        value = value.decode("utf-8", "replace")
    return value


def _text(value: Any) -> str:
    value = _scalar(value)
    return "" if value is None else str(value).strip()


def normalize_endpoint(raw: str, secure: bool = False, *,
                       what: str = "endpoint") -> tuple[str, bool]:
    """Turn ``raw`` into ``(host:port, secure)``.

    A scheme (``http://``/``https://``) is stripped into ``secure``; a trailing ``/`` is
    dropped. A console address (port 9001, a path containing ``/browser`` or ``/minio``) raises
    :class:`StorageConfigError` with a hint naming API port 9000; any other path, a missing host
    or a bad port is refused too.
    """
    text = raw.strip()
    if not text:
        raise StorageConfigError(f"{what} is required", f"host and API port, e.g. minio:{API_PORT}")
    lower = text.lower()
    if "://" in text:
        scheme = lower.split("://", 1)[0]
        if scheme not in ("http", "https"):
            raise StorageConfigError(f"{what}: unsupported scheme {scheme!r}", "use http or https")
        secure = scheme == "https"
        text = text.split("://", 1)[1]
    hostport, _, path = text.partition("/")
    path = "/" + path
    if re.search(r"/(browser|minio)(/|$|\?|#)", path.lower()):
        raise StorageConfigError(f"{what} {raw!r} is a console address", CONSOLE_HINT)
    if path.strip("/"):
        raise StorageConfigError(f"{what} {raw!r} must be host:port without a path",
                                 f"e.g. minio:{API_PORT}")
    try:
        parts = urlsplit("//" + hostport)
        port = parts.port
    except ValueError as exc:
        raise StorageConfigError(f"{what} {raw!r}: bad port", f"e.g. minio:{API_PORT}") from exc
    if not parts.hostname or "@" in hostport or any(c.isspace() for c in hostport):
        raise StorageConfigError(f"{what} {raw!r}: no valid host", f"e.g. minio:{API_PORT}")
    if port == CONSOLE_PORT:
        raise StorageConfigError(f"{what} {raw!r} uses the console port {CONSOLE_PORT}",
                                 CONSOLE_HINT)
    return hostport, secure


# what minio accepts as a region name
_REGION_RE = re.compile(r"(?!_)(?!-)[A-Za-z0-9_-]{1,63}(?<!-)(?<!_)")


@dataclass
class StorageConfig:
    """Object storage settings (the fields of ``/config/storage``).

    ``public`` is the host:port put in links for clients (defaults to ``endpoint``);
    ``public_secure`` is its scheme when it differs from ``secure`` (None: same as ``secure``).
    """

    endpoint: str
    public: str = ""
    access: str = ""
    secret: str = ""
    bucket: str = ""
    secure: bool = False
    prefix: str = ""
    store_final: bool = True
    public_read: bool = False
    public_secure: bool | None = None
    region: str = DEFAULT_REGION

    @classmethod
    def from_form(cls, form: Mapping[str, Any], *, require_credentials: bool = True
                  ) -> StorageConfig:
        """Build and validate a config from form fields (str, bytes or Tornado lists).

        Raises :class:`StorageConfigError` (``error`` + ``hint``) on a console address, a bad
        endpoint, bucket name or boolean, or (when required) missing keys.
        """
        secure = parse_bool(form.get("secure"), False)
        endpoint, secure = normalize_endpoint(_text(form.get("endpoint")), secure)
        public_raw = _text(form.get("public"))
        public, public_secure = endpoint, None
        if public_raw:
            public, pub_sec = normalize_endpoint(public_raw, secure, what="public")
            public_secure = pub_sec if pub_sec != secure else None
        conf = cls(
            endpoint=endpoint,
            public=public,
            access=_text(form.get("access")),
            secret=_text(form.get("secret")),
            bucket=_text(form.get("bucket")),
            secure=secure,
            prefix=clean_prefix(_text(form.get("prefix"))),
            store_final=parse_bool(form.get("store_final"), True),
            public_read=parse_bool(form.get("public_read"), False),
            public_secure=public_secure,
            region=_text(form.get("region")) or DEFAULT_REGION,
        )
        conf.validate(require_credentials=require_credentials)
        return conf

    @classmethod
    def from_env(cls, env: Mapping[str, str]) -> StorageConfig | None:
        """Config from ``S3_*`` variables; None when no ``S3_ENDPOINT`` is set."""
        if not env.get("S3_ENDPOINT"):
            return None
        return cls.from_form({
            "endpoint": env.get("S3_ENDPOINT"), "public": env.get("S3_PUBLIC"),
            "access": env.get("S3_ACCESS_KEY"), "secret": env.get("S3_SECRET_KEY"),
            "bucket": env.get("S3_BUCKET"), "secure": env.get("S3_SECURE"),
            "prefix": env.get("S3_PREFIX"), "public_read": env.get("S3_PUBLIC_READ"),
            "region": env.get("S3_REGION"),
        })

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> StorageConfig:
        """Rebuild a config saved with :meth:`to_dict` (unknown keys ignored, no validation)."""
        names = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in data.items() if k in names})

    def validate(self, *, require_credentials: bool = True) -> None:
        """Check the fields; raises :class:`StorageConfigError`."""
        self.endpoint, self.secure = normalize_endpoint(self.endpoint, self.secure)
        if self.public:
            self.public, _ = normalize_endpoint(self.public, self.secure, what="public")
        else:
            self.public = self.endpoint
        if not _BUCKET_RE.match(self.bucket) or ".." in self.bucket:
            raise StorageConfigError(
                f"invalid bucket name {self.bucket!r}",
                "3-63 characters: lowercase letters, digits, '.' and '-'",
            )
        if require_credentials and not (self.access and self.secret):
            raise StorageConfigError("access and secret are required", "the S3 access key pair")
        if not _REGION_RE.fullmatch(self.region):
            raise StorageConfigError(f"invalid region {self.region!r}",
                                     f"an S3 region name such as {DEFAULT_REGION}")

    @property
    def link_secure(self) -> bool:
        """Scheme of links for clients (``public`` host)."""
        return self.secure if self.public_secure is None else self.public_secure

    def to_dict(self) -> dict[str, Any]:
        """All fields, secret included: for the settings store only, never for a response."""
        return asdict(self)

    def masked(self) -> dict[str, Any]:
        """All fields with the secret hidden (safe for ``GET /config``)."""
        out = asdict(self)
        out["secret"] = mask_secret(self.secret)
        out["secret_set"] = bool(self.secret)
        return out

    def keep_secret_from(self, old: StorageConfig | None) -> StorageConfig:
        """When the form sent back no secret or its masked form, keep the stored one."""
        if old is not None and (not self.secret or self.secret == mask_secret(old.secret)):
            return replace(self, secret=old.secret)
        return self


def mask_secret(secret: str) -> str:
    """``****`` plus the last 2 characters for long secrets; ``""`` when unset."""
    if not secret:
        return ""
    return "****" + secret[-2:] if len(secret) >= 12 else "****"


# --------------------------------------------------------------------------- keys


def _key_parts(part: str) -> list[str]:
    pieces = []
    for piece in part.replace("\\", "/").split("/"):
        if piece in ("", "."):
            continue
        if piece == "..":
            raise UnsafeKey(f"object key part {part!r} contains '..'")
        if any(ord(c) < 32 or ord(c) == 127 for c in piece):
            raise UnsafeKey(f"object key part {part!r} contains a control character")
        pieces.append(piece)
    return pieces


def clean_prefix(prefix: str) -> str:
    """Normalise a key prefix: ``\\`` read as ``/``, no leading/trailing/double slash, no ``..``.

    Raises :class:`StorageConfigError` on ``..`` or control characters.
    """
    try:
        return "/".join(_key_parts(prefix))
    except UnsafeKey as exc:
        raise StorageConfigError(str(exc), "use a plain path like docs/2024") from exc


def object_key(prefix: str, *parts: str) -> str:
    """Join a prefix and parts into an object key (no leading slash, empty/``.`` dropped).

    Raises :class:`UnsafeKey` for ``..`` or control characters anywhere.
    """
    pieces: list[str] = []
    for part in (prefix, *parts):
        pieces += _key_parts(part or "")
    if not pieces:
        raise UnsafeKey("empty object key")
    return "/".join(pieces)


def asset_key(prefix: str, data: bytes, filename: str) -> str:
    """Content-addressed key ``{prefix}/assets/{sha256[:16]}/{basename}``: the same asset
    uploaded twice lands on the same key (stored once)."""
    digest = hashlib.sha256(data).hexdigest()[:16]
    base = filename.replace("\\", "/").rsplit("/", 1)[-1]
    if base in ("", ".", "..") or any(ord(c) < 32 for c in base):
        base = "file"
    return object_key(prefix, "assets", digest, base)


def content_type_for(filename: str) -> str:
    """MIME type from the file name (text types get ``charset=utf-8``)."""
    lower = filename.lower()
    if lower.endswith((".md", ".markdown")):
        return "text/markdown; charset=utf-8"
    mime = mimetypes.guess_type(lower)[0] or "application/octet-stream"
    if mime.startswith("text/") or mime in ("application/json", "image/svg+xml"):
        return f"{mime}; charset=utf-8"
    return mime


# --------------------------------------------------------------------------- store


@dataclass(frozen=True)
class LinkPair:
    """Direct link (may answer 403 on a private bucket) and time-limited presigned link."""

    storage_url: str
    storage_presigned_url: str

    def as_dict(self) -> dict[str, str]:
        """The two response fields."""
        return {"storage_url": self.storage_url,
                "storage_presigned_url": self.storage_presigned_url}


@dataclass(frozen=True)
class StoredAsset:
    """Result of :meth:`ObjectStore.put_asset`: key, links, and whether bytes were sent."""

    key: str
    links: LinkPair
    uploaded: bool


class ObjectStream:
    """An object body being read (for the download proxy); close it when done."""

    def __init__(self, response: Any, content_type: str, length: int | None) -> None:
        self._response = response
        self.content_type = content_type
        self.length = length

    def chunks(self, size: int = 64 * 1024) -> Iterator[bytes]:
        """Yield the body in chunks (each read blocks)."""
        yield from self._response.stream(size)

    def close(self) -> None:
        """Release the connection."""
        self._response.close()
        self._response.release_conn()

    def __enter__(self) -> ObjectStream:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _http(timeout: float) -> urllib3.PoolManager:
    return urllib3.PoolManager(
        timeout=urllib3.Timeout(connect=min(timeout, 5.0), read=timeout),
        maxsize=10,
        retries=urllib3.Retry(total=2, connect=1, read=1, redirect=0, backoff_factor=0.2,
                              status_forcelist=(502, 503, 504)),
    )


def public_read_policy(bucket: str) -> dict[str, Any]:
    """Anonymous ``s3:GetObject`` on every object of ``bucket`` (listing stays private)."""
    return {
        "Version": "2012-10-17",
        "Statement": [{
            "Effect": "Allow",
            "Principal": {"AWS": ["*"]},
            "Action": ["s3:GetObject"],
            "Resource": [f"arn:aws:s3:::{bucket}/*"],
        }],
    }


def _as_set(value: Any) -> frozenset[str]:
    if value is None:
        return frozenset()
    if isinstance(value, str):
        return frozenset([value])
    return frozenset(str(v) for v in value)


def _statement_key(st: Mapping[str, Any]) -> tuple:
    principal = st.get("Principal")
    if isinstance(principal, Mapping):
        principal = _as_set(principal.get("AWS"))
    else:
        principal = _as_set(principal)
    return (
        str(st.get("Effect", "")),
        principal,
        _as_set(st.get("Action")),
        _as_set(st.get("Resource")),
        json.dumps(st.get("Condition"), sort_keys=True),
    )


def policy_statements(policy: Mapping[str, Any] | str | None) -> set[tuple]:
    """Statements of a bucket policy in a normalised, comparable form (strings and one-element
    lists are equal, ``"*"`` equals ``{"AWS": "*"}``, ``Sid`` is ignored)."""
    if not policy:
        return set()
    if isinstance(policy, str):
        policy = json.loads(policy)
    statements = policy.get("Statement", [])
    if isinstance(statements, Mapping):
        statements = [statements]
    return {_statement_key(st) for st in statements}


def policies_equal(a: Mapping[str, Any] | str | None, b: Mapping[str, Any] | str | None) -> bool:
    """Semantic comparison of two bucket policies (SeaweedFS normalises ``Action`` to a string)."""
    return policy_statements(a) == policy_statements(b)


def _console_answer(status: int, content_type: str, body: str) -> bool:
    """True when an answer looks like a web console rather than the S3 API."""
    head = body.lstrip()[:200].lower()
    return (
        CONSOLE_MARKER.lower() in body.lower()
        or "text/html" in content_type.lower()
        or head.startswith(("<!doctype html", "<html"))
    )


def _error_text(exc: BaseException) -> str:
    if isinstance(exc, S3Error):
        return f"{exc.code}: {exc.message}"
    return str(exc).splitlines()[0][:300] if str(exc) else type(exc).__name__


def _error_hint(exc: BaseException) -> str:
    text = str(exc)
    if CONSOLE_MARKER.lower() in text.lower() or (
        isinstance(exc, InvalidResponseError) and "html" in text.lower()
    ):
        return CONSOLE_HINT
    if isinstance(exc, S3Error):
        if exc.code in ("InvalidAccessKeyId", "SignatureDoesNotMatch", "AccessDenied"):
            return "check the access key and secret (and that they may use this bucket)"
        if exc.code == "RequestTimeTooSkewed":
            return "the clocks of this service and the storage differ too much: sync them (NTP)"
        if exc.code == "NoSuchBucket":
            return "the bucket does not exist: create it or set create_if_missing=true"
    if isinstance(exc, urllib3.exceptions.HTTPError | OSError):
        return (f"cannot reach the storage: check host, port (the S3 API port, usually "
                f"{API_PORT}) and the secure (TLS) setting")
    return ""


class ObjectStore:
    """S3 access for one :class:`StorageConfig` (blocking calls; run them in an executor)."""

    def __init__(self, config: StorageConfig, *, expiry: timedelta = DEFAULT_EXPIRY,
                 timeout: float = 30.0) -> None:
        self.config = config
        self.expiry = clamp_expiry(expiry)
        self._timeout = timeout
        self._http = _http(timeout)
        self.client = Minio(config.endpoint, access_key=config.access, secret_key=config.secret,
                            secure=config.secure, region=config.region, http_client=self._http)
        public = config.public or config.endpoint
        if public == config.endpoint and config.link_secure == config.secure:
            self._signer = self.client
        else:  # presigned links carry the host in the signature: sign for the public host
            self._signer = Minio(public, access_key=config.access, secret_key=config.secret,
                                 secure=config.link_secure, region=config.region,
                                 http_client=self._http)

    # -- links
    def direct_url(self, key: str) -> str:
        """``http(s)://public/bucket/key`` with the key percent-encoded (``/`` kept)."""
        scheme = "https" if self.config.link_secure else "http"
        public = self.config.public or self.config.endpoint
        return f"{scheme}://{public}/{self.config.bucket}/{quote(key, safe='/')}"

    def presigned_url(self, key: str, expires: timedelta | None = None) -> str:
        """A GET link signed for the public host, valid ``expires`` (at most 7 days). No I/O."""
        return self._signer.presigned_get_object(
            self.config.bucket, key, expires=clamp_expiry(expires or self.expiry))

    def links(self, key: str, expires: timedelta | None = None) -> LinkPair:
        """Direct and presigned links of ``key``."""
        return LinkPair(self.direct_url(key), self.presigned_url(key, expires))

    # -- objects
    def put_bytes(self, key: str, data: bytes, content_type: str = "application/octet-stream",
                  ) -> LinkPair:
        """Upload ``data`` under ``key`` (overwrites) and return its links."""
        try:
            self.client.put_object(self.config.bucket, key, io.BytesIO(data), len(data),
                                   content_type=content_type)
        except (MinioException, urllib3.exceptions.HTTPError, OSError, ValueError) as exc:
            raise StorageError(f"upload of {key!r} failed: {_error_text(exc)}",
                               _error_hint(exc)) from exc
        return self.links(key)

    def exists(self, key: str) -> bool:
        """True when ``key`` exists (stat)."""
        try:
            self.client.stat_object(self.config.bucket, key)
        except S3Error as exc:
            if exc.code in ("NoSuchKey", "NotFound", "ResourceNotFound"):
                return False
            raise StorageError(f"stat of {key!r} failed: {_error_text(exc)}",
                               _error_hint(exc)) from exc
        except (MinioException, urllib3.exceptions.HTTPError, OSError) as exc:
            raise StorageError(f"stat of {key!r} failed: {_error_text(exc)}",
                               _error_hint(exc)) from exc
        return True

    def put_asset(self, prefix: str, filename: str, data: bytes,
                  content_type: str | None = None) -> StoredAsset:
        """Upload an asset under its content-hash key unless already there (stored once)."""
        key = asset_key(prefix, data, filename)
        uploaded = False
        if not self.exists(key):
            self.put_bytes(key, data, content_type or content_type_for(filename))
            uploaded = True
        return StoredAsset(key, self.links(key), uploaded)

    def get_bytes(self, key: str) -> bytes:
        """Whole object body (small objects: staged archives, tests)."""
        with self.get_stream(key) as stream:
            return b"".join(stream.chunks())

    def get_stream(self, key: str) -> ObjectStream:
        """Open ``key`` for streaming (download proxy). Raises :class:`StorageError`
        (``NoSuchKey`` in the message when missing)."""
        try:
            resp = self.client.get_object(self.config.bucket, key)
        except (MinioException, urllib3.exceptions.HTTPError, OSError) as exc:
            raise StorageError(f"download of {key!r} failed: {_error_text(exc)}",
                               _error_hint(exc)) from exc
        length = resp.headers.get("Content-Length")
        return ObjectStream(resp, resp.headers.get("Content-Type", "application/octet-stream"),
                            int(length) if length and length.isdigit() else None)

    def remove(self, key: str) -> None:
        """Delete ``key`` (no error when missing)."""
        try:
            self.client.remove_object(self.config.bucket, key)
        except (MinioException, urllib3.exceptions.HTTPError, OSError) as exc:
            raise StorageError(f"delete of {key!r} failed: {_error_text(exc)}",
                               _error_hint(exc)) from exc

    # -- checks
    def _probe_console(self) -> str | None:
        """Plain GET of the endpoint root: a console answers HTML (or its API-port error)."""
        scheme = "https" if self.config.secure else "http"
        try:
            resp = self._http.request("GET", f"{scheme}://{self.config.endpoint}/",
                                      retries=False, timeout=min(self._timeout, 5.0),
                                      preload_content=False)
        except (urllib3.exceptions.HTTPError, OSError):
            return None  # unreachable: the S3 call below reports it
        try:
            body = resp.read(4096).decode("utf-8", "replace")
        finally:
            resp.release_conn()
        if _console_answer(resp.status, resp.headers.get("Content-Type", ""), body):
            return CONSOLE_HINT
        return None

    def apply_bucket_policy(self) -> bool:
        """Make the bucket public-read when configured (merged into an existing policy);
        when not, remove a policy that is exactly ours. Returns True when a change was made."""
        bucket = self.config.bucket
        wanted = public_read_policy(bucket)
        try:
            current_text = self.client.get_bucket_policy(bucket)
            current = json.loads(current_text) if current_text else None
        except S3Error as exc:
            if exc.code not in ("NoSuchBucketPolicy", "NoSuchPolicy"):
                raise
            current = None
        if self.config.public_read:
            if policy_statements(wanted) <= policy_statements(current):
                return False
            merged = dict(current) if current else {"Version": "2012-10-17", "Statement": []}
            statements = merged.get("Statement", [])
            if isinstance(statements, Mapping):
                statements = [statements]
            merged["Statement"] = [*statements, *wanted["Statement"]]
            self.client.set_bucket_policy(bucket, json.dumps(merged))
            return True
        if current is not None and policies_equal(current, wanted):
            self.client.delete_bucket_policy(bucket)
            return True
        return False

    def test_connection(self, create_if_missing: bool = False) -> dict[str, Any]:
        """Check reachability, keys and bucket; create the bucket when asked; apply the policy.

        Returns ``{ok, connected, bucket_exists, created, error, hint}`` (never raises for a
        storage problem). A console answering on the API port is reported in ``hint``.
        """
        out: dict[str, Any] = {"ok": False, "connected": False, "bucket_exists": False,
                               "created": False, "error": None, "hint": None}
        console = self._probe_console()
        if console:
            out.update(error="the endpoint answered with a web page, not the S3 API",
                       hint=console)
            return out
        bucket = self.config.bucket
        try:
            exists = self.client.bucket_exists(bucket)
            out["connected"] = True
            if not exists and create_if_missing:
                try:
                    self.client.make_bucket(bucket, location=self.config.region)
                    out["created"] = True
                except S3Error as exc:
                    if exc.code not in ("BucketAlreadyOwnedByYou", "BucketAlreadyExists"):
                        raise
                exists = True
            out["bucket_exists"] = exists
            if not exists:
                out.update(error=f"bucket {bucket!r} does not exist",
                           hint="create it or set create_if_missing=true")
                return out
            self.apply_bucket_policy()
        except (MinioException, urllib3.exceptions.HTTPError, OSError, ValueError) as exc:
            if isinstance(exc, S3Error):
                out["connected"] = True
            out.update(error=_error_text(exc), hint=_error_hint(exc) or None)
            return out
        out["ok"] = True
        return out

    def server_time(self) -> datetime:
        """The storage's clock, from the ``Date`` header of a plain request (a 403 is fine)."""
        return server_time(self.config.endpoint, self.config.secure, timeout=self._timeout)

    def time_check(self, threshold: float = SKEW_HINT_SECONDS) -> dict[str, Any]:
        """Clock difference with the storage: ``{ok, server_time, local_time, diff_sec, hint}``."""
        return time_check(self.config.endpoint, self.config.secure, threshold=threshold)


def clamp_expiry(expires: timedelta | float | int) -> timedelta:
    """An expiry between 1 second and 7 days (S3's maximum for presigned links)."""
    if not isinstance(expires, timedelta):
        expires = timedelta(seconds=float(expires))
    return max(timedelta(seconds=1), min(expires, MAX_EXPIRY))


def server_time(endpoint: str, secure: bool = False, *, timeout: float = 5.0) -> datetime:
    """``Date`` header of ``HEAD http(s)://endpoint/`` as an aware UTC datetime.

    Raises :class:`StorageError` when unreachable or the answer has no usable ``Date``.
    """
    scheme = "https" if secure else "http"
    http = urllib3.PoolManager(timeout=urllib3.Timeout(connect=timeout, read=timeout))
    try:
        resp = http.request("HEAD", f"{scheme}://{endpoint}/", retries=False)
    except (urllib3.exceptions.HTTPError, OSError) as exc:
        raise StorageError(f"cannot reach {endpoint}: {_error_text(exc)}",
                           _error_hint(exc)) from exc
    finally:
        http.clear()
    date = resp.headers.get("Date")
    try:
        when = parsedate_to_datetime(date) if date else None
    except (TypeError, ValueError):
        when = None
    if when is None:
        raise StorageError(f"{endpoint} answered without a usable Date header")
    return when.astimezone(UTC) if when.tzinfo else when.replace(tzinfo=UTC)


def time_check(endpoint: str, secure: bool = False, *, threshold: float = SKEW_HINT_SECONDS,
               timeout: float = 5.0) -> dict[str, Any]:
    """Compare the storage clock with ours. ``diff_sec`` = server - local (the local time is
    taken mid-request; the header has 1 s resolution). ``ok`` is False when unreachable or
    ``|diff| > threshold``; ``hint`` explains (presigned links fail beyond 15 minutes)."""
    t0 = time.time()
    try:
        remote = server_time(endpoint, secure, timeout=timeout)
    except StorageError as exc:
        return {"ok": False, "server_time": None,
                "local_time": datetime.now(UTC).isoformat(timespec="seconds"),
                "diff_sec": None, "error": exc.message, "hint": exc.hint or None}
    local = datetime.fromtimestamp((t0 + time.time()) / 2, UTC)
    diff = round((remote - local).total_seconds(), 1)
    hint = None
    if abs(diff) > SKEW_FATAL_SECONDS:
        hint = (f"clocks differ by {diff:+.0f} s: signed requests and presigned links are "
                "refused beyond 15 minutes of skew; sync both clocks (NTP)")
    elif abs(diff) > threshold:
        hint = (f"clocks differ by {diff:+.0f} s: presigned links break at 15 minutes of skew; "
                "sync both clocks (NTP)")
    return {"ok": abs(diff) <= threshold,
            "server_time": remote.isoformat(timespec="seconds"),
            "local_time": local.isoformat(timespec="seconds"),
            "diff_sec": diff, "hint": hint}
