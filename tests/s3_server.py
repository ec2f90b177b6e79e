"""Start a throwaway SeaweedFS S3 server for tests (no pytest dependency).

    with running_s3() as s3:
        store = ObjectStore(s3.config("bucket"))

The server runs in a fresh temporary directory on free loopback ports and is stopped (and the
directory removed) on exit, also when the body fails.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

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


@contextmanager
def running_s3(buckets: list[str] | None = None) -> Iterator[S3Server]:
    """Run SeaweedFS for the duration of the ``with`` block."""
    root = Path(tempfile.mkdtemp(prefix="s3test-"))
    handle = None
    try:
        handle = start_seaweed(root, buckets=buckets, persist_ports=False)
        yield S3Server(handle)
    finally:
        if handle is not None:
            handle.stop()
        shutil.rmtree(root, ignore_errors=True)
