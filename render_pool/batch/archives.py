"""Safe unpacking of uploaded archives (zip, tar.gz/tgz, plain tar) into a temporary directory.

Refused with :class:`render_pool.errors.UnsafeArchive` (the message names the entry): names that
escape (``..``; ``\\`` is read as ``/``), absolute names and drive letters, control characters,
symbolic and hard links, device files and FIFOs, more entries than allowed, more unpacked bytes
than allowed, and zip entries compressed more than ``max_ratio`` (bombs). Sizes are counted
while decompressing; headers are never trusted. Anything that is not a readable archive raises
:class:`render_pool.errors.CorruptDocument`.

Zip names stored without the UTF-8 flag are recovered from their raw bytes and decoded by
plausibility (utf-8, then GB18030/GBK, Shift-JIS (cp932) and Big5 (cp950) scored on common
characters), unless an explicit encoding is given: "first codec that decodes" is wrong because
Shift-JIS bytes are usually valid GBK too.
"""

from __future__ import annotations

import contextlib
import errno
import functools
import io
import os
import shutil
import stat
import struct
import tarfile
import tempfile
import unicodedata
import zipfile
import zlib
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, BinaryIO

from render_pool.engine.common.zipread import ratio_exceeded
from render_pool.errors import CorruptDocument, UnsafeArchive, UnsupportedFormat

CHUNK = 64 * 1024
NAME_CODECS = ("utf-8", "gb18030", "cp932", "cp950")
ENCODING_ALIASES = {"shift_jis": "cp932", "shift-jis": "cp932", "sjis": "cp932",
                    "gbk": "gb18030", "gb2312": "gb18030", "big5": "cp950"}


@dataclass(frozen=True)
class ArchiveLimits:
    """Caps applied while unpacking. ``max_ratio``: unpacked bytes over compressed bytes read
    so far, checked once an entry (or, for tar.gz, the whole stream) passes ``ratio_min_size``."""

    max_entries: int = 10_000
    max_total_size: int = 500 * 1024 * 1024
    # not settings: a bomb guard no real archive comes near (deflate tops out near 1000:1 only
    # on runs of one byte); the operator's bounds are the two above (ARCHIVE_MAX_*)
    max_ratio: float = 200.0
    ratio_min_size: int = 1024 * 1024


DEFAULT_LIMITS = ArchiveLimits()


# --------------------------------------------------------------------------- detection


def detect_archive_kind(filename: str, data: bytes) -> str | None:
    """``"zip"``, ``"tar.gz"`` or ``"tar"`` from the content's magic bytes (the name only
    breaks ties); None when the data is not one of these."""
    head = data[:512]
    if head.startswith((b"PK\x03\x04", b"PK\x05\x06", b"PK\x07\x08")):
        return "zip"
    if head.startswith(b"\x1f\x8b"):
        return "tar.gz"
    if len(data) >= 262 and data[257:262] == b"ustar":
        return "tar"
    lower = filename.lower()
    if lower.endswith(".zip") and len(data) >= 22 and data[-22:-18] == b"PK\x05\x06":
        return "zip"  # self-extracting or prefixed zip with a central directory at the end
    return None


# --------------------------------------------------------------------------- names


def _code(ch: str, codec: str) -> int | None:
    try:
        raw = ch.encode(codec)
    except UnicodeEncodeError:
        return None
    return (raw[0] << 8) | raw[1] if len(raw) == 2 else None


@functools.lru_cache(maxsize=8192)
def _char_score(ch: str, codec: str) -> float:
    """How plausible ``ch`` is in a file name decoded with ``codec``: common characters of
    the codec's own language score high, odd ones (half-width kana, private use) negative."""
    cp = ord(ch)
    if cp < 0x80:
        return 0.0
    if 0xE000 <= cp <= 0xF8FF or unicodedata.category(ch) in ("Cc", "Cn", "Co", "Cs"):
        return -3.0
    if 0xFF61 <= cp <= 0xFF9F:  # half-width katakana: what GBK bytes look like as Shift-JIS
        return -1.5
    if 0x3000 <= cp <= 0x303F or 0xFF01 <= cp <= 0xFF5E:  # CJK punctuation, full-width forms
        return 1.0
    if 0x3041 <= cp <= 0x30FF:  # hiragana, katakana
        return 2.0 if codec == "cp932" else 0.5
    if 0x4E00 <= cp <= 0x9FFF:
        if codec == "gb18030":
            code = _code(ch, "gb2312")
            return 2.0 if code and 0xB0A1 <= code <= 0xD7F9 else 0.0  # GB2312 level 1
        if codec == "cp932":
            code = _code(ch, "cp932")
            return 2.0 if code and 0x889F <= code <= 0x9872 else 0.0  # JIS X 0208 level 1
        if codec == "cp950":
            code = _code(ch, "cp950")
            return 2.0 if code and 0xA440 <= code <= 0xC67E else 0.0  # Big5 common
        return 0.5
    if 0xC0 <= cp <= 0x24F:  # accented Latin letters
        return 0.5
    return -0.5


def _score(texts: Iterable[str], codec: str) -> float:
    return sum(_char_score(ch, codec) for text in texts for ch in text)


def guess_name_encoding(raw_names: Iterable[bytes]) -> str:
    """Pick the codec for names stored without the UTF-8 flag (one per archive).

    Pure ASCII -> ``"ascii"``; strict UTF-8 that decodes every name wins; otherwise the codec
    among GB18030, cp932 (Shift-JIS) and cp950 (Big5) whose decoding scores best on common
    characters; ``"cp437"`` (the zip default) when none decodes.
    """
    names = [n for n in raw_names if any(b >= 0x80 for b in n)]
    if not names:
        return "ascii"
    try:
        decoded = [n.decode("utf-8") for n in names]
    except UnicodeDecodeError:
        pass
    else:
        if _score(decoded, "utf-8") >= 0:
            return "utf-8"
    best, best_score = "cp437", float("-inf")
    for codec in NAME_CODECS[1:]:
        try:
            decoded = [n.decode(codec) for n in names]
        except UnicodeDecodeError:
            continue
        score = _score(decoded, codec)
        if score > best_score:
            best, best_score = codec, score
    return best


def _normalise_encoding(encoding: str) -> str:
    codec = ENCODING_ALIASES.get(encoding.strip().lower(), encoding.strip())
    try:
        "".encode(codec)
    except LookupError as exc:
        raise UnsupportedFormat(f"unknown file-name encoding {encoding!r}") from exc
    return codec


def _zip_unicode_extra(info: zipfile.ZipInfo, raw: bytes) -> str | None:
    """The Info-ZIP Unicode Path extra field (0x7075), when its CRC matches the raw name."""
    extra = info.extra
    i = 0
    while i + 4 <= len(extra):
        tag, size = struct.unpack("<HH", extra[i:i + 4])
        body = extra[i + 4:i + 4 + size]
        if tag == 0x7075 and len(body) > 5 and body[0] == 1:
            (crc,) = struct.unpack("<I", body[1:5])
            if crc == zlib.crc32(raw):
                with contextlib.suppress(UnicodeDecodeError):
                    return body[5:].decode("utf-8")
        i += 4 + size
    return None


def safe_parts(name: str) -> list[str]:
    """Split an entry name into path components, refusing anything that could escape.

    ``\\`` is read as ``/``. Raises :class:`UnsafeArchive` naming the entry for absolute
    names, drive letters, ``..`` components and control characters. Empty and ``.``
    components are dropped (an empty result means the root itself).
    """
    shown = name.encode("utf-8", "backslashreplace").decode("utf-8")
    if any(ord(c) < 32 or ord(c) == 127 for c in name):
        raise UnsafeArchive(f"archive entry {shown!r} contains a control character")
    norm = name.replace("\\", "/")
    if norm.startswith("/"):
        raise UnsafeArchive(f"archive entry {shown!r} has an absolute path")
    if len(norm) >= 2 and norm[1] == ":" and norm[0].isalpha():
        raise UnsafeArchive(f"archive entry {shown!r} has a drive letter")
    parts = [p for p in norm.split("/") if p not in ("", ".")]
    if ".." in parts:
        raise UnsafeArchive(f"archive entry {shown!r} leaves the archive root ('..')")
    return parts


# --------------------------------------------------------------------------- writing


class _Target:
    """Writes entries under ``root`` while counting entries and bytes against the limits."""

    def __init__(self, root: Path, limits: ArchiveLimits) -> None:
        self.root = root
        self.real_root = os.path.realpath(root)
        self.limits = limits
        self.entries = 0
        self.total = 0

    def count(self, name: str) -> None:
        self.entries += 1
        if self.entries > self.limits.max_entries:
            raise UnsafeArchive(
                f"archive has more than {self.limits.max_entries} entries (at {name!r})")

    def path(self, parts: list[str], name: str) -> Path:
        target = self.root.joinpath(*parts)
        real = os.path.realpath(target)
        if real != self.real_root and not real.startswith(self.real_root + os.sep):
            raise UnsafeArchive(f"archive entry {name!r} leaves the archive root")
        return target

    def mkdir(self, parts: list[str], name: str) -> None:
        if not parts:
            return
        try:
            self.path(parts, name).mkdir(mode=0o755, parents=True, exist_ok=True)
        except OSError as exc:
            raise _conflict(exc, name) from exc

    def write(self, parts: list[str], name: str, src: IO[bytes],
              consumed: Callable[[], int] | None) -> None:
        """Copy ``src`` to the entry's path; ``consumed()`` tells how many compressed bytes
        stand behind what was written (a zip entry's compressed size, which bounds what its
        stream can read), so the ratio is checked as the data comes."""
        if not parts:
            raise UnsafeArchive(f"archive entry {name!r} has no file name")
        target = self.path(parts, name)
        written = 0
        try:
            target.parent.mkdir(mode=0o755, parents=True, exist_ok=True)
            fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o644)
            with os.fdopen(fd, "wb") as out:
                while chunk := src.read(CHUNK):
                    written += len(chunk)
                    self.total += len(chunk)
                    self._check(name, written, consumed() if consumed else None)
                    out.write(chunk)
        except OSError as exc:
            raise _conflict(exc, name) from exc

    def _check(self, name: str, written: int, compressed: int | None) -> None:
        lim = self.limits
        if self.total > lim.max_total_size:
            raise UnsafeArchive(
                f"archive unpacks to more than {lim.max_total_size} bytes (at {name!r})")
        if compressed is not None and ratio_exceeded(written, compressed,
                                                     max_ratio=lim.max_ratio,
                                                     min_size=lim.ratio_min_size):
            raise UnsafeArchive(
                f"archive entry {name!r} is compressed more than {lim.max_ratio:.0f}:1 "
                "(zip bomb)")


def _conflict(exc: OSError, name: str) -> Exception:
    if exc.errno in (errno.ENAMETOOLONG, errno.EISDIR, errno.ENOTDIR, errno.EEXIST,
                     errno.ELOOP, errno.EINVAL):
        return CorruptDocument(f"archive entry {name!r} cannot be unpacked: {exc.strerror}")
    return exc


# --------------------------------------------------------------------------- zip


def _zip_names(infos: list[zipfile.ZipInfo], encoding: str | None) -> list[str]:
    raws: list[bytes | None] = []
    names: list[str | None] = []
    for info in infos:
        if info.flag_bits & 0x800:
            raws.append(None)
            names.append(info.orig_filename)
            continue
        encoded = info.orig_filename.encode("cp437")
        raws.append(encoded)
        names.append(None if encoding else _zip_unicode_extra(info, encoded))
    pending = [r for r, n in zip(raws, names, strict=True) if r is not None and n is None]
    codec = encoding or guess_name_encoding(pending)
    if codec == "ascii":
        codec = "cp437"
    out = []
    for raw, name in zip(raws, names, strict=True):
        if name is None:
            assert raw is not None
            try:
                name = raw.decode(codec)
            except UnicodeDecodeError as exc:
                raise CorruptDocument(
                    f"archive entry name {raw!r} is not valid {codec}") from exc
        out.append(name)
    return out


def _compressed_size(info: zipfile.ZipInfo) -> Callable[[], int]:
    """The ``consumed`` callback of a zip entry: its compressed size, which bounds what its
    stream can read."""
    return lambda: info.compress_size


def _unpack_zip(data: bytes, target: _Target, encoding: str | None) -> None:
    try:
        zf = zipfile.ZipFile(io.BytesIO(data))
    except (zipfile.BadZipFile, zipfile.LargeZipFile, ValueError, OSError, EOFError) as exc:
        raise CorruptDocument(f"not a readable zip archive: {exc}") from exc
    with zf:
        infos = zf.infolist()
        if len(infos) > target.limits.max_entries:
            raise UnsafeArchive(f"archive has {len(infos)} entries, more than "
                                f"{target.limits.max_entries}")
        declared = sum(i.file_size for i in infos)
        if declared > target.limits.max_total_size:
            raise UnsafeArchive(f"archive declares {declared} unpacked bytes, more than "
                                f"{target.limits.max_total_size}")
        names = _zip_names(infos, encoding)
        for info, name in zip(infos, names, strict=True):
            target.count(name)
            parts = safe_parts(name)
            mode = info.external_attr >> 16
            kind = stat.S_IFMT(mode) if info.create_system == 3 else 0
            if kind == stat.S_IFLNK:
                raise UnsafeArchive(f"archive entry {name!r} is a symbolic link")
            if kind and kind not in (stat.S_IFREG, stat.S_IFDIR):
                raise UnsafeArchive(f"archive entry {name!r} is a device, FIFO or socket")
            if info.flag_bits & 0x1:
                raise CorruptDocument(f"archive entry {name!r} is encrypted")
            dos_dir = info.create_system == 0 and info.external_attr & 0x10
            if name.endswith(("/", "\\")) or kind == stat.S_IFDIR or dos_dir:
                target.mkdir(parts, name)
                continue
            try:
                with zf.open(info) as src:
                    target.write(parts, name, src, _compressed_size(info))
            except (zipfile.BadZipFile, zlib.error, EOFError, NotImplementedError,
                    RuntimeError) as exc:
                raise CorruptDocument(f"archive entry {name!r} is corrupt: {exc}") from exc


# --------------------------------------------------------------------------- tar


def _gunzip_to(data: bytes, dest: Path, limits: ArchiveLimits) -> None:
    """Stream-decompress a (multi-member) gzip into ``dest`` with the size and ratio caps."""
    cap = limits.max_total_size + limits.max_entries * 1536 + 1024 * 1024  # + tar headers
    total = 0
    pos = 0
    size = len(data)
    try:
        with open(dest, "wb") as out:
            while pos < size:
                dec = zlib.decompressobj(wbits=16 + zlib.MAX_WBITS)
                while not dec.eof:
                    if dec.unconsumed_tail:
                        pending = dec.unconsumed_tail
                    else:
                        pending = data[pos:pos + CHUNK]
                        pos += len(pending)
                    chunk = dec.decompress(pending, CHUNK)
                    if not chunk and not pending and not dec.eof:
                        raise CorruptDocument("gzip data is truncated")
                    total += len(chunk)
                    if total > cap:
                        raise UnsafeArchive(
                            f"archive unpacks to more than {limits.max_total_size} bytes")
                    if ratio_exceeded(total, pos, max_ratio=limits.max_ratio,
                                      min_size=limits.ratio_min_size):
                        raise UnsafeArchive(
                            f"archive is compressed more than {limits.max_ratio:.0f}:1 "
                            "(gzip bomb)")
                    out.write(chunk)
                pos -= len(dec.unused_data)
                while pos < size and data[pos] == 0:  # zero padding after the last member
                    pos += 1
    except zlib.error as exc:
        raise CorruptDocument(f"not readable gzip data: {exc}") from exc


def _tar_names(members: list[tarfile.TarInfo], encoding: str | None) -> list[str]:
    raws = [m.name.encode("utf-8", "surrogateescape") for m in members]
    codec = encoding or guess_name_encoding(raws)
    if codec in ("ascii", "utf-8"):
        codec = "utf-8"
    out = []
    for raw in raws:
        try:
            out.append(raw.decode(codec))
        except UnicodeDecodeError as exc:
            raise CorruptDocument(f"archive entry name {raw!r} is not valid {codec}") from exc
    return out


def _unpack_tar(path: Path, target: _Target, encoding: str | None) -> None:
    try:
        tf = tarfile.open(path, "r:", encoding="utf-8", errors="surrogateescape")
    except (tarfile.TarError, OSError, EOFError) as exc:
        raise CorruptDocument(f"not a readable tar archive: {exc}") from exc
    with tf:
        members: list[tarfile.TarInfo] = []
        declared = 0
        try:
            while (member := tf.next()) is not None:
                members.append(member)
                if len(members) > target.limits.max_entries:
                    raise UnsafeArchive(
                        f"archive has more than {target.limits.max_entries} entries")
                declared += member.size if member.isreg() else 0
                if declared > target.limits.max_total_size:
                    raise UnsafeArchive(
                        f"archive unpacks to more than {target.limits.max_total_size} bytes")
        except (tarfile.TarError, EOFError, zlib.error) as exc:
            raise CorruptDocument(f"tar archive is corrupt: {exc}") from exc
        if not members:
            raise CorruptDocument("tar archive is empty or not a tar archive")
        names = _tar_names(members, encoding)
        for member, name in zip(members, names, strict=True):
            target.count(name)
            parts = safe_parts(name)
            if member.issym() or member.islnk():
                raise UnsafeArchive(
                    f"archive entry {name!r} is a link (to {member.linkname!r})")
            if member.isdir():
                target.mkdir(parts, name)
                continue
            if not member.isreg() or member.issparse():
                raise UnsafeArchive(
                    f"archive entry {name!r} is a device, FIFO or other special file")
            src = tf.extractfile(member)
            if src is None:
                raise CorruptDocument(f"archive entry {name!r} cannot be read")
            try:
                with src:
                    target.write(parts, name, src, None)
            except (tarfile.TarError, EOFError) as exc:
                raise CorruptDocument(f"archive entry {name!r} is corrupt: {exc}") from exc


# --------------------------------------------------------------------------- public API


@contextlib.contextmanager
def unpacked(
    data: bytes,
    filename: str,
    *,
    encoding: str | None = None,
    limits: ArchiveLimits = DEFAULT_LIMITS,
    tmp_root: str | os.PathLike[str] | None = None,
) -> Iterator[Path]:
    """Unpack ``data`` into a fresh temporary directory and yield its root.

    The directory (under ``tmp_root`` or the system temp dir) is always removed on exit, also
    when unpacking fails. ``encoding`` overrides the guessed codec of entry names.
    Raises :class:`UnsafeArchive`, :class:`CorruptDocument` or (unknown encoding)
    :class:`UnsupportedFormat`.
    """
    codec = _normalise_encoding(encoding) if encoding else None
    kind = detect_archive_kind(filename, data)
    if kind is None:
        raise CorruptDocument(f"{filename or 'upload'} is not a zip, tar.gz or tgz archive")
    base = Path(tempfile.mkdtemp(prefix="unpack-", dir=tmp_root))
    try:
        root = base / "root"
        root.mkdir()
        target = _Target(root, limits)
        if kind == "zip":
            _unpack_zip(data, target, codec)
        elif kind == "tar.gz":
            tar_path = base / "archive.tar"
            _gunzip_to(data, tar_path, limits)
            _unpack_tar(tar_path, target, codec)
            tar_path.unlink()
        else:
            tar_path = base / "archive.tar"
            tar_path.write_bytes(data)
            _unpack_tar(tar_path, target, codec)
            tar_path.unlink()
        yield root
    finally:
        shutil.rmtree(base, ignore_errors=True)


def list_files(root: str | os.PathLike[str]) -> list[str]:
    """Regular files under ``root`` as sorted relative POSIX paths.

    Symbolic links are skipped (never followed), so a folder given by path cannot lead the
    batch outside itself.
    """
    base = Path(root)
    out: list[str] = []
    for dirpath, dirnames, filenames in os.walk(base, followlinks=False):
        here = Path(dirpath)
        dirnames[:] = sorted(d for d in dirnames if not (here / d).is_symlink())
        for fname in filenames:
            path = here / fname
            if path.is_symlink() or not path.is_file():
                continue
            out.append(path.relative_to(base).as_posix())
    return sorted(out)


class OutsideRoot(OSError):
    """A file opened under a root turned out to be somewhere else (a swapped link)."""


def open_inside(root: str | os.PathLike[str], rel: str) -> BinaryIO:
    """The regular file ``root/rel`` opened for reading, never through a symbolic link.

    The file is opened with ``O_NOFOLLOW`` and the opened file's real path is checked to be
    inside ``root`` again, so a file swapped for a link (or a folder swapped for a link to
    another folder) between listing and reading is refused: raises :class:`OSError`
    (:class:`OutsideRoot` for the second case). Large members are read (uploaded) from
    the returned file in chunks, never whole."""
    real_root = os.path.realpath(root)
    fd = os.open(os.path.join(real_root, rel), os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    try:
        opened = os.readlink(f"/proc/self/fd/{fd}")
        if os.path.commonpath([real_root, opened]) != real_root:
            raise OutsideRoot(errno.EACCES, "file is outside the folder", rel)
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise OSError(errno.EINVAL, "not a regular file", rel)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def read_inside(root: str | os.PathLike[str], rel: str) -> bytes:
    """The bytes of the regular file ``root/rel`` (see :func:`open_inside`)."""
    with open_inside(root, rel) as fh:
        return fh.read()
