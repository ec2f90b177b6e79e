"""The S3 client of one storage configuration (minio SDK): uploads, downloads, links,
presigning, the bucket policy and the connection test.

All calls here block (network I/O through the minio SDK and urllib3): the HTTP layer runs them
in a thread executor. Rules kept here:

- presigned links are signed by a second client built for the ``public`` host (the host is part
  of the signature); expiry is at most 7 days;
- direct links are ``http(s)://public/bucket/`` + ``quote(key, safe="/")`` (never ``quote_plus``);
- every upload is typed and disposed by :func:`store.stored_content.stored_form` (declared
  type, name and first bytes): no caller can store active content (SVG, HTML, script...)
  that the storage host would serve inline.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, BinaryIO
from urllib.parse import quote

import urllib3
from minio import Minio
from minio.error import MinioException, S3Error

from store.bucket_policy import policies_equal, policy_statements, public_read_policy
from store.clock import SKEW_HINT_SECONDS, server_time, time_check
from store.object_keys import asset_key, asset_key_for_digest
from store.storage_config import StorageConfig
from store.storage_errors import (
    CONSOLE_HINT,
    CONSOLE_MARKER,
    StorageError,
    error_hint,
    error_text,
)
from store.stored_content import OPAQUE, SNIFF_BYTES, StoredForm, stored_form

DEFAULT_EXPIRY = timedelta(days=1)
MAX_EXPIRY = timedelta(days=7)
PUBLIC_CHECK_KEY = ".docservice-public-read-check.txt"  # written and removed by the check


@dataclass(frozen=True)
class LinkPair:
    """Direct link (may answer 403 on a private bucket) and time-limited presigned link;
    ``key``: the object key they name (the one it was stored under, ``.bin`` included), from
    which the service's own durable link is made (``tornado_app.documents.storage.links``)."""

    storage_url: str
    storage_presigned_url: str
    key: str = ""

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

    def __init__(self, response: Any, content_type: str, length: int | None,
                 disposition: str = "") -> None:
        self._response = response
        self.content_type = content_type
        self.length = length
        self.disposition = disposition  # the stored Content-Disposition ("" when none)

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

def _console_answer(status: int, content_type: str, body: str) -> bool:
    """True when an answer looks like a web console rather than the S3 API."""
    head = body.lstrip()[:200].lower()
    return (
        CONSOLE_MARKER.lower() in body.lower()
        or "text/html" in content_type.lower()
        or head.startswith(("<!doctype html", "<html"))
    )

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
        return LinkPair(self.direct_url(key), self.presigned_url(key, expires), key)

    # -- objects
    def put_bytes(self, key: str, data: bytes, content_type: str = OPAQUE) -> LinkPair:
        """Upload ``data`` as ``key`` (overwrites) and return the links of the key it was
        stored under. ``content_type`` is the declared type; the stored type and
        disposition are :func:`~store.stored_content.stored_form`'s, and an opaque object
        whose name has an extension is stored as ``key + ".bin"`` (:meth:`StoredForm.key`)."""
        form = stored_form(_name(key), content_type, data[:SNIFF_BYTES])
        return self.links(self._put(form.key(key), io.BytesIO(data), len(data), form))

    def put_file(self, key: str, fh: BinaryIO, content_type: str = OPAQUE) -> LinkPair:
        """:meth:`put_bytes` of an open file, from its current position to its end, in
        parts (never whole in memory: large archive members and documents are uploaded
        from their files)."""
        form = stored_form(_name(key), content_type, _head(fh))
        return self.links(self._put(form.key(key), fh, None, form))

    def _put(self, key: str, fh: BinaryIO, size: int | None, form: StoredForm) -> str:
        """The one S3 upload: ``fh`` (``size`` bytes, None: to the end of the file) under
        ``key`` with ``form``'s type and disposition. Returns ``key``."""
        metadata: dict[str, str | list[str] | tuple[str]] | None = (
            {"Content-Disposition": form.disposition} if form.disposition else None)
        try:
            if size is None:
                size = os.fstat(fh.fileno()).st_size - fh.tell()
            self.client.put_object(self.config.bucket, key, fh, size,
                                   content_type=form.content_type, metadata=metadata)
        except (MinioException, urllib3.exceptions.HTTPError, OSError, ValueError) as exc:
            raise StorageError(f"upload of {key!r} failed: {error_text(exc)}",
                               error_hint(exc)) from exc
        return key

    def exists(self, key: str) -> bool:
        """True when ``key`` exists (stat)."""
        try:
            self.client.stat_object(self.config.bucket, key)
        except S3Error as exc:
            if exc.code in ("NoSuchKey", "NotFound", "ResourceNotFound"):
                return False
            raise StorageError(f"stat of {key!r} failed: {error_text(exc)}",
                               error_hint(exc)) from exc
        except (MinioException, urllib3.exceptions.HTTPError, OSError) as exc:
            raise StorageError(f"stat of {key!r} failed: {error_text(exc)}",
                               error_hint(exc)) from exc
        return True

    def put_asset(self, prefix: str, filename: str, data: bytes,
                  content_type: str | None = None) -> StoredAsset:
        """Upload an asset under its content-hash key unless already there (stored once),
        typed by :func:`~store.stored_content.stored_form` from ``content_type`` (declared,
        or None), its name and its bytes."""
        form = stored_form(filename, content_type, data[:SNIFF_BYTES])
        key = form.key(asset_key(prefix, data, filename))
        uploaded = False
        if not self.exists(key):
            self._put(key, io.BytesIO(data), len(data), form)
            uploaded = True
        return StoredAsset(key, self.links(key), uploaded)

    def put_asset_file(self, prefix: str, filename: str, fh: BinaryIO,
                       content_type: str | None = None) -> StoredAsset:
        """:meth:`put_asset` of an open file: hashed and uploaded in chunks."""
        form = stored_form(filename, content_type, _head(fh))
        start = fh.tell()
        digest = hashlib.sha256()
        for chunk in iter(lambda: fh.read(1024 * 1024), b""):
            digest.update(chunk)
        key = form.key(asset_key_for_digest(prefix, digest.hexdigest(), filename))
        uploaded = False
        if not self.exists(key):
            fh.seek(start)
            self._put(key, fh, None, form)
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
            raise StorageError(f"download of {key!r} failed: {error_text(exc)}",
                               error_hint(exc)) from exc
        length = resp.headers.get("Content-Length")
        return ObjectStream(resp, resp.headers.get("Content-Type", OPAQUE),
                            int(length) if length and length.isdigit() else None,
                            resp.headers.get("Content-Disposition", ""))

    def remove(self, key: str) -> None:
        """Delete ``key`` (no error when missing)."""
        try:
            self.client.remove_object(self.config.bucket, key)
        except (MinioException, urllib3.exceptions.HTTPError, OSError) as exc:
            raise StorageError(f"delete of {key!r} failed: {error_text(exc)}",
                               error_hint(exc)) from exc

    def keys_older_than(self, prefix: str, cutoff: datetime) -> Iterator[str]:
        """Keys under ``prefix`` last modified before ``cutoff`` (an aware datetime)."""
        try:
            for obj in self.client.list_objects(self.config.bucket, prefix=prefix,
                                                recursive=True):
                if obj.last_modified is not None and obj.last_modified < cutoff:
                    yield obj.object_name
        except (MinioException, urllib3.exceptions.HTTPError, OSError) as exc:
            raise StorageError(f"listing of {prefix!r} failed: {error_text(exc)}",
                               error_hint(exc)) from exc

    def bucket_exists(self) -> bool:
        """True when the configured bucket exists (raises :class:`StorageError` when the
        storage cannot be asked)."""
        try:
            return self.client.bucket_exists(self.config.bucket)
        except (MinioException, urllib3.exceptions.HTTPError, OSError) as exc:
            raise StorageError(f"bucket check failed: {error_text(exc)}", error_hint(exc)) from exc

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
        """Check reachability, keys and bucket; create the bucket when asked. An existing
        bucket's policy is never touched (the test must not open a bucket to the world); a
        bucket created here gets the public-read policy when ``public_read`` asks for it.

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
            if out["created"] and self.config.public_read:
                self.apply_bucket_policy()
        except (MinioException, urllib3.exceptions.HTTPError, OSError, ValueError) as exc:
            if isinstance(exc, S3Error):
                out["connected"] = True
            out.update(error=error_text(exc), hint=error_hint(exc) or None)
            return out
        out["ok"] = True
        return out

    def verify_public_read(self) -> dict[str, Any]:
        """For ``public_read``: store a small test object and read it back anonymously
        through its direct link, so "public read" is reported as it really is (the bucket's
        policy is not changed here: an existing bucket is never opened through the API).
        Returns ``{ok, status, url, error}`` (never raises for a storage problem); the test
        object is removed afterwards."""
        key = "/".join(p for p in (self.config.prefix.strip("/"), PUBLIC_CHECK_KEY) if p)
        out: dict[str, Any] = {"ok": False, "status": None, "url": self.direct_url(key),
                               "error": None}
        try:
            self.put_bytes(key, b"docservice public read check\n", "text/plain")
            resp = self._http.request("GET", out["url"], preload_content=False,
                                      redirect=False, retries=False)
            try:
                out["status"] = resp.status
            finally:
                resp.release_conn()
            out["ok"] = resp.status == 200
            if not out["ok"]:
                out["error"] = (f"an anonymous read of a test object answered HTTP {resp.status}:"
                                " the bucket does not allow public reads, so direct links will"
                                " not open; use presigned links or allow public reads on the"
                                " bucket in the storage itself")
        except (MinioException, urllib3.exceptions.HTTPError, OSError, ValueError,
                StorageError) as exc:
            out["error"] = getattr(exc, "message", None) or error_text(exc)
        finally:
            try:
                self.client.remove_object(self.config.bucket, key)
            except (MinioException, urllib3.exceptions.HTTPError, OSError, ValueError):
                pass
        return out

    def server_time(self) -> datetime:
        """The storage's clock, from the ``Date`` header of a plain request (a 403 is fine)."""
        return server_time(self.config.endpoint, self.config.secure, timeout=self._timeout)

    def time_check(self, threshold: float = SKEW_HINT_SECONDS) -> dict[str, Any]:
        """Clock difference with the storage: ``{ok, server_time, local_time, diff_sec, hint}``."""
        return time_check(self.config.endpoint, self.config.secure, threshold=threshold)


def _name(key: str) -> str:
    """The file name of an object key (its last part)."""
    return key.rsplit("/", 1)[-1]


def _head(fh: BinaryIO) -> bytes:
    """The first bytes of an open file from its position, which is left where it was."""
    start = fh.tell()
    head = fh.read(SNIFF_BYTES)
    fh.seek(start)
    return head


def clamp_expiry(expires: timedelta | float | int) -> timedelta:
    """An expiry between 1 second and 7 days (S3's maximum for presigned links)."""
    if not isinstance(expires, timedelta):
        expires = timedelta(seconds=float(expires))
    return max(timedelta(seconds=1), min(expires, MAX_EXPIRY))
