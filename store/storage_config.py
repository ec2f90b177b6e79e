"""Object storage configuration: the fields of ``/config/storage``, validated.

Rules kept here:

- the endpoint is ``host:port``; a scheme given with it is stripped into ``secure``;
- a MinIO console address (port 9001, a path with ``/browser`` or ``/minio``) is refused with a
  hint naming the API port 9000;
- a region is always set, so presigning makes no network call.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, fields, replace
from typing import Any
from urllib.parse import urlsplit

from store.booleans import NotABoolean, scalar
from store.booleans import parse_bool as _parse_bool
from store.object_keys import TENANT_SEGMENT, clean_prefix
from store.storage_errors import API_PORT, CONSOLE_HINT, CONSOLE_PORT, StorageConfigError

DEFAULT_REGION = "us-east-1"
_BUCKET_RE = re.compile(r"^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$")


def parse_bool(value: Any, default: bool = False) -> bool:
    """A boolean field of the configuration; :class:`StorageConfigError` when it is not one."""
    try:
        return _parse_bool(value, default)
    except NotABoolean as exc:
        raise StorageConfigError(str(exc), "use true or false") from exc


def _text(value: Any) -> str:
    value = scalar(value)
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
    # where the secret came from: True when it is the operator's (the company loaded or
    # saved a copy of the operator's storage), False when the company sent it, None in a
    # record written before this was kept (see :func:`secret_is_operators`)
    secret_from_operator: bool | None = None

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
        if TENANT_SEGMENT in self.prefix.split("/"):
            # keys are {prefix}/t/{company}/...: a "t" inside the prefix could make one
            # company's keys fall inside another's
            raise StorageConfigError(f"prefix may not contain a {TENANT_SEGMENT!r} segment",
                                     "it is reserved for the companies' own prefixes")
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
        out.pop("secret_from_operator")
        out["secret"] = mask_secret(self.secret)
        out["secret_set"] = bool(self.secret)
        return out

    def keep_secret_from(self, old: StorageConfig | None) -> StorageConfig:
        """When the form sent back no secret or its masked form, keep the stored one, but
        only for the same endpoint, access key and bucket: a kept secret is never sent to
        another server or used for another bucket. Raises :class:`StorageConfigError` when
        those changed and no new secret came with them."""
        if old is None or (self.secret and self.secret != mask_secret(old.secret)):
            return self
        if (self.endpoint, self.access, self.bucket) != (old.endpoint, old.access, old.bucket):
            raise StorageConfigError(
                "the secret is required when endpoint, access key or bucket change",
                "send the secret key again")
        return replace(self, secret=old.secret)


def mask_secret(secret: str) -> str:
    """``****`` plus the last 2 characters for long secrets; ``""`` when unset."""
    if not secret:
        return ""
    return "****" + secret[-2:] if len(secret) >= 12 else "****"


# -- whose secret a company's configuration may use: the one decision (issue 30, item 6)

OPERATOR_REFUSED = ("the service's own storage can only be used as it is: its endpoint and "
                    "access key are the operator's, and its secret is not lent to another "
                    "prefix, bucket or address")
OPERATOR_HINT = ("to store into the built-in storage, load the 'embedded' profile or keep no "
                 "storage configuration of your own; for your own storage send its endpoint, "
                 "access key and secret")


def _identity(config: StorageConfig) -> tuple[str, str]:
    return config.endpoint, config.access


def _scope(config: StorageConfig) -> tuple[object, ...]:
    """What a configuration writes to and links to (not the secret, nor the company's own
    preferences ``store_final`` and ``public_read``)."""
    return (config.endpoint, config.access, config.bucket, config.prefix, config.secure,
            config.region, config.public or config.endpoint, config.link_secure)


def secret_is_operators(config: StorageConfig, operators: Sequence[StorageConfig]) -> bool:
    """True when ``config``'s secret is the operator's: marked so when the service copied
    it (``secret_from_operator``), or, in a record written before the mark was kept, when
    its endpoint, access key and secret are those of an operator configuration."""
    if config.secret_from_operator is not None:
        return config.secret_from_operator
    return any(_identity(op) == _identity(config) and op.secret == config.secret
               for op in operators)


def resolve_secret(config: StorageConfig, current: StorageConfig | None,
                   operators: Sequence[StorageConfig]) -> StorageConfig:
    """``config`` (a company's form, saved or tested) with the secret it may use; the one
    place that decides it. ``current`` is the company's own stored configuration (None
    without one) and ``operators`` the operator's (the service-wide storage: the embedded
    one, ``S3_*``, the service-wide profiles).

    - A secret the form sent (not blank, not the masked form of the stored one) is used as
      sent and marked the company's: the storage itself checks it.
    - Without one, never a secret of the operator's configuration: a stored secret that is
      the operator's (a loaded copy of the built-in storage) is kept only for exactly that
      storage and scope (the company's default ``t/<company>/`` prefix); another prefix,
      bucket, address or key is refused, as is a form naming the operator's endpoint or
      access key with nothing to keep.
    - Otherwise the company's own stored secret, for the same endpoint, access key and
      bucket only (:meth:`StorageConfig.keep_secret_from`).

    Raises :class:`StorageConfigError` (answered 400 with ``error`` and ``hint``)."""
    if config.secret and (current is None or config.secret != mask_secret(current.secret)):
        return replace(config, secret_from_operator=False)
    if current is not None and secret_is_operators(current, operators):
        if _scope(config) != _scope(current) or not any(
                _scope(op) == _scope(current) and op.secret == current.secret
                for op in operators):
            raise StorageConfigError(OPERATOR_REFUSED, OPERATOR_HINT)
        return replace(config, secret=current.secret, secret_from_operator=True)
    if current is None:
        if any(config.endpoint == op.endpoint or (config.access and config.access == op.access)
               for op in operators):
            raise StorageConfigError(OPERATOR_REFUSED, OPERATOR_HINT)
        raise StorageConfigError("access and secret are required", "the S3 access key pair")
    return replace(config.keep_secret_from(current), secret_from_operator=False)
