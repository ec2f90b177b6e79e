"""Archives built in memory for the tests: a zip and a tar.gz of the given members."""

from __future__ import annotations

import io
import tarfile
import zipfile


def zip_of(members: dict[str, bytes]) -> bytes:
    """A deflated zip holding ``members`` (name -> bytes)."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        for name, data in members.items():
            z.writestr(name, data)
    return buf.getvalue()


def tgz_of(members: dict[str, bytes]) -> bytes:
    """A gzip-compressed tar holding ``members`` as regular files."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return buf.getvalue()
