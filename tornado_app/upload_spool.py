"""One request's ``multipart/form-data`` body, parsed (:mod:`tornado_app.multipart`) and
spooled as it arrives, so an upload costs the event loop only a copy of each chunk.

Each part is kept in memory up to :data:`SPOOL_MEMORY_BYTES`, then in an unnamed temporary
file of a directory of this request under ``DATA_DIR/tmp`` (made when the first part needs it;
unnamed, so nothing outlives the process even if it dies). The parts are read back into bytes
in a worker thread once the body is in (:meth:`MultipartBody.parts`; a form of at most
:data:`ON_LOOP_BYTES` held in memory is read on the event loop), and the files and the
directory are removed when the request finishes or its connection closes
(:meth:`MultipartBody.discard`: in a worker thread when anything is on disk).

A field without a file name may hold at most ``field_limit`` bytes (past it the body is
refused at once, 41301, and the rest is drained, never kept); the whole body is bounded by the
route's upload limit (``tornado_app.documents.base.UploadHandler``).
"""

from __future__ import annotations

import contextlib
import logging
import shutil
import tempfile
import threading
import weakref
from pathlib import Path
from typing import IO

from tornado.ioloop import IOLoop

from tornado_app.multipart import MultipartError, MultipartParser, PartInfo

log = logging.getLogger(__name__)

SPOOL_MEMORY_BYTES = 256 * 1024  # a part past this goes to disk
ON_LOOP_BYTES = 64 * 1024  # a form held in memory up to this is read back on the event loop


class FieldTooLarge(Exception):
    """A field without a file name is larger than the route allows."""

    def __init__(self, name: str, limit: int) -> None:
        super().__init__(f"field {name} is larger than {limit} bytes")


class _Part:
    """One part's bytes: in memory, then in a temporary file."""

    def __init__(self, info: PartInfo) -> None:
        self.info = info
        self.size = 0
        self.memory = bytearray()
        self.file: IO[bytes] | None = None

    def read(self) -> bytes:
        if self.file is None:
            return bytes(self.memory)
        self.file.seek(0)
        return self.file.read()

    def close(self) -> None:
        if self.file is not None:
            self.file.close()
            self.file = None
        self.memory = bytearray()


class FormSpool:
    """The :class:`~tornado_app.multipart.PartSink` that keeps the parts (the last part of a
    name wins, as with Tornado's parser); see the module docstring."""

    def __init__(self, parent: Path, field_limit: int) -> None:
        self._parent = parent
        self._field_limit = field_limit
        self._folder: Path | None = None
        self._remove_folder: weakref.finalize[..., object] | None = None
        self._current: _Part | None = None
        self._kept: dict[tuple[bool, str], _Part] = {}
        self._retired: list[_Part] = []  # replaced by a later part of the same name
        self._lock = threading.Lock()
        self.closed = False

    @property
    def on_disk(self) -> bool:
        return self._folder is not None

    def in_memory(self) -> int:
        """Bytes of the kept parts held in memory (none is on disk unless :attr:`on_disk`)."""
        return sum(len(part.memory) for part in self._kept.values())

    # ------------------------------------------------------------ PartSink (event loop)
    def start(self, part: PartInfo | None) -> None:
        self._current = _Part(part) if part is not None and not self.closed else None

    def write(self, data: bytes) -> None:
        part = self._current
        if part is None or self.closed:
            return
        part.size += len(data)
        if part.info.filename is None and part.size > self._field_limit:
            raise FieldTooLarge(part.info.name, self._field_limit)
        if part.file is None and part.size > SPOOL_MEMORY_BYTES:
            part.file = tempfile.TemporaryFile(dir=self._folder_path())
            part.file.write(part.memory)
            part.memory = bytearray()
        if part.file is not None:
            part.file.write(data)
        else:
            part.memory += data

    def end(self) -> None:
        part, self._current = self._current, None
        if part is None or self.closed:
            return
        key = (part.info.filename is not None, part.info.name)
        earlier = self._kept.get(key)
        if earlier is not None:
            self._retired.append(earlier)
        self._kept[key] = part

    def _folder_path(self) -> str:
        if self._folder is None:
            with contextlib.suppress(OSError):
                self._parent.mkdir(parents=True, exist_ok=True)
            parent = self._parent if self._parent.is_dir() else None
            self._folder = Path(tempfile.mkdtemp(prefix="upload-", dir=parent))
            # also when a request is dropped without finishing (a server stopped mid-request)
            self._remove_folder = weakref.finalize(self, shutil.rmtree, self._folder, True)
        return str(self._folder)

    # ------------------------------------------------------------ worker thread
    def read_parts(self) -> tuple[dict[str, list[bytes]], dict[str, tuple[str, bytes]]]:
        """The fields (name -> [bytes]) and files (name -> (file name, bytes)); the spooled
        copies are dropped as they are read."""
        fields: dict[str, list[bytes]] = {}
        files: dict[str, tuple[str, bytes]] = {}
        with self._lock:
            if self.closed:
                raise MultipartError("the upload was discarded")
            for (is_file, name), part in self._kept.items():
                data = part.read()
                part.close()
                if is_file:
                    files[name] = (part.info.filename or "", data)
                else:
                    fields[name] = [data]
        return fields, files

    def close(self) -> None:
        """Close every part's file and remove the request's directory (idempotent)."""
        with self._lock:
            self.closed = True
            parts = [*self._kept.values(), *self._retired]
            if self._current is not None:
                parts.append(self._current)
            self._kept, self._retired, self._current = {}, [], None
            for part in parts:
                with contextlib.suppress(OSError):
                    part.close()
            if self._remove_folder is not None:
                self._remove_folder()  # rmtree, once
                self._remove_folder = None


class MultipartBody:
    """A request body fed chunk by chunk (:meth:`feed`, never raising: the first fault is
    kept in :attr:`error` and the rest of the body is ignored), read back with
    :meth:`parts`, dropped with :meth:`discard`."""

    def __init__(self, boundary: bytes, parent: Path, field_limit: int) -> None:
        self._spool = FormSpool(parent, field_limit)
        self._parser = MultipartParser(boundary, self._spool)
        self.error: Exception | None = None

    def feed(self, chunk: bytes) -> None:
        if self.error is not None or self._spool.closed:
            return
        try:
            self._parser.feed(chunk)
        except (MultipartError, FieldTooLarge) as exc:
            self._fail(exc)
        except OSError as exc:  # the disk under DATA_DIR/tmp is full or gone
            log.warning("an upload could not be spooled: %s", exc)
            self._fail(exc)

    def _fail(self, exc: Exception) -> None:
        self.error = exc
        self.discard()

    async def parts(self) -> tuple[dict[str, list[bytes]], dict[str, tuple[str, bytes]]]:
        """The fields and files once the body is in (read in a worker thread); raises
        :attr:`error`, or a MultipartError when the body ended before its final boundary."""
        if self.error is None:
            try:
                self._parser.close()
            except MultipartError as exc:
                self.error = exc
        if self.error is not None:
            raise self.error
        if not self._spool.on_disk and self._spool.in_memory() <= ON_LOOP_BYTES:
            # a small form (a one-page document and its fields): copying it is less work
            # than the hand-over to a thread and back, which cost about 0.3 ms a request
            return self._spool.read_parts()
        return await IOLoop.current().run_in_executor(None, self._spool.read_parts)

    def discard(self) -> None:
        """Drop what was kept: at once when it is all in memory, else in a worker thread
        (removing files of tens of megabytes is no work for the event loop)."""
        if self._spool.closed:
            return
        if not self._spool.on_disk:
            self._spool.close()
            return
        self._spool.closed = True  # no more writes from the event loop from here on
        IOLoop.current().run_in_executor(None, self._spool.close)
