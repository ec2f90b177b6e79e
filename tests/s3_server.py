"""Start a throwaway SeaweedFS S3 server for tests (no pytest dependency).

    with running_s3() as s3:
        store = ObjectStore(s3.config("bucket"))

The server runs in a fresh temporary directory on free loopback ports and is stopped (and the
directory removed) on exit, also when the body fails.
"""

from __future__ import annotations

import contextlib
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from minio import Minio
from minio.error import S3Error

from store.storage_config import StorageConfig
from tornado_app.embedded.seaweed import SeaweedHandle, start_seaweed


@dataclass
class S3Server:
    """A running test server and helpers to build storage configs for it."""

    handle: SeaweedHandle

    @property
    def endpoint(self) -> str:
        return self.handle.endpoint

    @property
    def port(self) -> int:
        return self.handle.port

    def config(self, bucket: str, **overrides: object) -> StorageConfig:
        """A validated config for ``bucket`` on this server (plain HTTP)."""
        form: dict[str, object] = {
            "endpoint": self.endpoint,
            "access": self.handle.access,
            "secret": self.handle.secret,
            "bucket": bucket,
            "secure": "false",
        }
        form.update(overrides)
        return StorageConfig.from_form(form)

    def drop_bucket(self, bucket: str) -> None:
        """Delete ``bucket`` and everything in it (its volume is freed for the next test)."""
        client = Minio(self.endpoint, access_key=self.handle.access,
                       secret_key=self.handle.secret, secure=False)
        with contextlib.suppress(S3Error):
            for item in client.list_objects(bucket, recursive=True):
                client.remove_object(bucket, item.object_name or "")
            client.remove_bucket(bucket)


@contextmanager
def running_s3(buckets: list[str] | None = None) -> Iterator[S3Server]:
    """Run SeaweedFS for the duration of the ``with`` block."""
    root = Path(tempfile.mkdtemp(prefix="s3test-"))
    handle = None
    try:
        # a bucket takes a volume: the session's hundreds of buckets need more than
        # SeaweedFS gives by default (free disk over volume size: about 70 here)
        handle = start_seaweed(root, buckets=buckets, persist_ports=False, volume_max=2000)
        yield S3Server(handle)
    finally:
        if handle is not None:
            handle.stop()
        shutil.rmtree(root, ignore_errors=True)
