"""Safe unpacking: hostile archives are refused with the right error and leave nothing behind."""

from __future__ import annotations

import gzip
import io
import os
import stat
import struct
import tarfile
import time
import zipfile
import zlib
from pathlib import Path

import pytest

from render_pool.batch.archives import (
    ArchiveLimits,
    detect_archive_kind,
    guess_name_encoding,
    list_files,
    safe_parts,
    unpacked,
)
from render_pool.errors import CorruptDocument, UnsafeArchive, UnsupportedFormat

# --------------------------------------------------------------------------- builders


def raw_zip(entries: list[dict]) -> bytes:
    """A zip written by hand, so names can be raw bytes without the UTF-8 flag (zipfile
    always sets the flag for non-ASCII names) and sizes/flags/modes can be anything.

    Each entry: name (bytes), data (stored bytes unless ``deflated``), optional crc, size,
    flags, external_attr, system (3 = Unix), extra.
    """
    out = bytearray()
    central = bytearray()
    for e in entries:
        name: bytes = e["name"]
        data: bytes = e.get("data", b"")
        method = 8 if e.get("deflated") else 0
        size = e.get("size", len(data) if method == 0 else 0)
        crc = e.get("crc", zlib.crc32(data) if method == 0 else 0)
        flags = e.get("flags", 0)
        extra = e.get("extra", b"")
        offset = len(out)
        out += struct.pack("<4sHHHHHIIIHH", b"PK\x03\x04", 20, flags, method, 0, 0x21, crc,
                           len(data), size, len(name), len(extra)) + name + extra + data
        central += struct.pack("<4sHHHHHHIIIHHHHHII", b"PK\x01\x02",
                               (e.get("system", 3) << 8) | 20, 20, flags, method, 0, 0x21,
                               crc, len(data), size, len(name), len(extra), 0, 0, 0,
                               e.get("external_attr", 0o100644 << 16), offset)
        central += name + extra
    n, cd_offset = len(entries), len(out)
    out += central
    if n > 0xFFFF:  # zip64 end records for the entry count
        z64 = len(out)
        out += struct.pack("<4sQHHIIQQQQ", b"PK\x06\x06", 44, 45, 45, 0, 0, n, n,
                           len(central), cd_offset)
        out += struct.pack("<4sIQI", b"PK\x06\x07", 0, z64, 1)
        n = 0xFFFF
    out += struct.pack("<4sHHHHIIH", b"PK\x05\x06", 0, 0, n, n, len(central), cd_offset, 0)
    return bytes(out)


def zeros_deflate(total: int, head: bytes = b"") -> bytes:
    """Raw deflate of ``head`` + ``total`` zero bytes, built cheaply: after a full flush every
    1 MiB block of zeros compresses to the same bytes, so the block is repeated."""
    c = zlib.compressobj(9, zlib.DEFLATED, -15)
    first = c.compress(head) + c.flush(zlib.Z_FULL_FLUSH) if head else b""
    block = c.compress(bytes(1 << 20)) + c.flush(zlib.Z_FULL_FLUSH)
    return first + block * (total >> 20) + c.flush()


def make_zip(files: dict[str, bytes]) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, data in files.items():
            zf.writestr(name, data)
    return buf.getvalue()


def make_tgz(members: list[tuple[tarfile.TarInfo, bytes | None]]) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tf:
        for info, data in members:
            if data is not None:
                info.size = len(data)
                tf.addfile(info, io.BytesIO(data))
            else:
                tf.addfile(info)
    return buf.getvalue()


def tinfo(name: str, kind: bytes = tarfile.REGTYPE, linkname: str = "") -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.type = kind
    info.linkname = linkname
    return info


@pytest.fixture
def work(tmp_path: Path) -> Path:
    """The temp root given to ``unpacked``; every test checks it is empty afterwards."""
    root = tmp_path / "work"
    root.mkdir()
    return root


def assert_clean(work: Path) -> None:
    assert list(work.iterdir()) == [], f"left on disk: {list(work.rglob('*'))}"


def refuse(data: bytes, name: str, work: Path, exc: type[Exception], match: str,
           **kw) -> Exception:
    with pytest.raises(exc, match=match) as info, unpacked(data, name, tmp_root=work, **kw):
        pytest.fail("unpacking should have been refused")
    assert_clean(work)
    return info.value


# --------------------------------------------------------------------------- good archives


def test_zip_unpacks_tree_and_cleans_up(work: Path) -> None:
    data = make_zip({"docs/readme.md": b"# hi\n", "docs/img/a.png": b"\x89PNG...",
                     "中文/说明.md": "内容".encode(), "empty/": b""})
    with unpacked(data, "bundle.zip", tmp_root=work) as root:
        assert list_files(root) == ["docs/img/a.png", "docs/readme.md", "中文/说明.md"]
        assert (root / "docs/readme.md").read_bytes() == b"# hi\n"
        assert (root / "empty").is_dir()
        assert root.is_relative_to(work)
    assert_clean(work)


def test_tgz_unpacks_and_cleans_up(work: Path) -> None:
    data = make_tgz([(tinfo("site", tarfile.DIRTYPE), None),
                     (tinfo("site/index.html"), b"<img src='a b.png'>"),
                     (tinfo("site/a b.png"), b"png")])
    assert detect_archive_kind("x.tgz", data) == "tar.gz"
    with unpacked(data, "x.tgz", tmp_root=work) as root:
        assert list_files(root) == ["site/a b.png", "site/index.html"]
        assert (root / "site/a b.png").read_bytes() == b"png"
    assert_clean(work)


def test_temp_dir_removed_when_body_fails(work: Path) -> None:
    data = make_zip({"a.md": b"x"})
    with pytest.raises(RuntimeError), unpacked(data, "a.zip", tmp_root=work):
        raise RuntimeError("boom")
    assert_clean(work)


def test_detect_archive_kind() -> None:
    assert detect_archive_kind("a.zip", make_zip({"a": b"1"})) == "zip"
    assert detect_archive_kind("a.tar.gz", gzip.compress(b"x")) == "tar.gz"
    assert detect_archive_kind("a.zip", b"hello world") is None
    # content wins over the name
    assert detect_archive_kind("a.tar.gz", make_zip({"a": b"1"})) == "zip"


# --------------------------------------------------------------------------- escapes


@pytest.mark.parametrize("name", [
    "../evil.txt",
    "a/../../evil.txt",
    "a/b/../../../evil.txt",
    "/etc/evil.txt",
    "..\\evil.txt",
    "a\\..\\..\\evil.txt",
    "\\\\server\\share\\evil.txt",
    "C:\\Windows\\evil.txt",
    "C:evil.txt",
    "ok/\x01evil.txt",
])
def test_zip_slip_names_refused(work: Path, tmp_path: Path, name: str) -> None:
    data = raw_zip([{"name": b"fine.md", "data": b"ok"},
                    {"name": name.encode(), "data": b"pwned"}])
    err = refuse(data, "slip.zip", work, UnsafeArchive, "archive entry")
    assert "evil.txt" in err.message  # the message names the entry
    assert not list(tmp_path.rglob("evil.txt"))


def test_zip_symlink_entry_refused(work: Path) -> None:
    data = raw_zip([{"name": b"link", "data": b"/etc/passwd",
                     "external_attr": (stat.S_IFLNK | 0o777) << 16}])
    refuse(data, "l.zip", work, UnsafeArchive, "symbolic link")


def test_zip_device_entry_refused(work: Path) -> None:
    data = raw_zip([{"name": b"dev", "data": b"", "external_attr": (stat.S_IFCHR | 0o644) << 16}])
    refuse(data, "d.zip", work, UnsafeArchive, "device")


@pytest.mark.parametrize("member, match", [
    (tinfo("evil", tarfile.SYMTYPE, "/etc/passwd"), "link"),
    (tinfo("evil", tarfile.SYMTYPE, "../../outside"), "link"),
    (tinfo("inner", tarfile.SYMTYPE, "docs/readme.md"), "link"),  # all links refused
    (tinfo("evil", tarfile.LNKTYPE, "../outside"), "link"),
    (tinfo("evil", tarfile.LNKTYPE, "/etc/shadow"), "link"),
    (tinfo("fifo", tarfile.FIFOTYPE), "FIFO"),
    (tinfo("tty", tarfile.CHRTYPE), "device"),
    (tinfo("disk", tarfile.BLKTYPE), "device"),
])
def test_tar_links_and_specials_refused(work: Path, member: tarfile.TarInfo, match: str) -> None:
    data = make_tgz([(tinfo("docs/readme.md"), b"# ok"), (member, None)])
    err = refuse(data, "x.tar.gz", work, UnsafeArchive, match)
    assert member.name in err.message


def test_tar_symlink_then_write_through_it_refused(work: Path, tmp_path: Path) -> None:
    # the classic two-step: a link to outside, then a file "through" the link
    data = make_tgz([(tinfo("d", tarfile.SYMTYPE, str(tmp_path)), None),
                     (tinfo("d/evil.txt"), b"pwned")])
    refuse(data, "x.tgz", work, UnsafeArchive, "link")
    assert not (tmp_path / "evil.txt").exists()


@pytest.mark.parametrize("name", ["../evil.txt", "/tmp/evil.txt", "a/../../evil.txt",
                                  "..\\evil.txt"])
def test_tar_escaping_names_refused(work: Path, tmp_path: Path, name: str) -> None:
    data = make_tgz([(tinfo(name), b"pwned")])
    refuse(data, "x.tgz", work, UnsafeArchive, "evil.txt")
    assert not list(tmp_path.rglob("evil.txt"))


def test_safe_parts() -> None:
    assert safe_parts("a/./b//c.md") == ["a", "b", "c.md"]
    assert safe_parts("a\\b.md") == ["a", "b.md"]
    for bad in ("..", "../x", "/x", "C:/x", "x/\x00y"):
        with pytest.raises(UnsafeArchive):
            safe_parts(bad)


# --------------------------------------------------------------------------- bombs and caps


def test_zip_bomb_refused_quickly(work: Path) -> None:
    gib = 1 << 30
    stream = zeros_deflate(gib)
    assert len(stream) < 2 * 1024 * 1024  # a ~1 MB archive that unpacks to 1 GiB
    data = raw_zip([{"name": b"bomb.bin", "data": stream, "deflated": True, "size": gib}])
    t0 = time.monotonic()
    refuse(data, "bomb.zip", work, UnsafeArchive, "more than")
    assert time.monotonic() - t0 < 10


@pytest.mark.slow  # seconds of CPU on a large input (see tests/conftest.py)
def test_zip_bomb_with_lying_header_refused_while_decompressing(work: Path) -> None:
    # declares 400 MB (under the 500 MB cap) but inflates to 1 GiB: refused on the ratio
    # measured while decompressing; crc left at 0 because the unpacker must stop long before
    gib = 1 << 30
    data = raw_zip([{"name": b"liar.bin", "data": zeros_deflate(gib), "deflated": True,
                     "size": 400 << 20}])
    t0 = time.monotonic()
    err = refuse(data, "liar.zip", work, UnsafeArchive, "bomb")
    assert "liar.bin" in err.message
    assert time.monotonic() - t0 < 10


def test_zip_total_size_cap(work: Path) -> None:
    files = {f"f{i}.bin": os.urandom(300_000) for i in range(5)}  # 1.5 MB, incompressible
    refuse(make_zip(files), "big.zip", work, UnsafeArchive, "more than",
           limits=ArchiveLimits(max_total_size=1_000_000))


def test_gzip_tar_bomb_refused(work: Path) -> None:
    gib = 1 << 30
    header = tinfo("zeros.bin")
    header.size = gib
    deflate = zeros_deflate(gib, head=header.tobuf(format=tarfile.GNU_FORMAT))
    data = (b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x02\xff" + deflate
            + struct.pack("<II", 0, (gib + 512) & 0xFFFFFFFF))
    t0 = time.monotonic()
    refuse(data, "bomb.tar.gz", work, UnsafeArchive, "bomb|more than")
    assert time.monotonic() - t0 < 10


def test_tar_total_size_cap(work: Path) -> None:
    data = make_tgz([(tinfo(f"f{i}.bin"), os.urandom(400_000)) for i in range(4)])
    refuse(data, "big.tgz", work, UnsafeArchive, "more than",
           limits=ArchiveLimits(max_total_size=1_000_000))


@pytest.mark.slow  # seconds of CPU on a large input (see tests/conftest.py)
def test_zip_entry_count_cap(work: Path) -> None:
    data = raw_zip([{"name": f"d/{i}.txt".encode(), "data": b"x"} for i in range(100_000)])
    refuse(data, "many.zip", work, UnsafeArchive, "entries")


def test_tar_entry_count_cap(work: Path) -> None:
    data = make_tgz([(tinfo(f"{i}.txt"), b"x") for i in range(60)])
    refuse(data, "many.tgz", work, UnsafeArchive, "entries",
           limits=ArchiveLimits(max_entries=50))


# --------------------------------------------------------------------------- names


GBK_NAMES = ["中文目录/测试文档.md", "中文目录/图片/示例图.png"]
SJIS_NAMES = ["日本語/資料.md", "日本語/画像/表示.png"]
BIG5_NAMES = ["繁體中文/說明文件.md", "繁體中文/圖片.png"]


@pytest.mark.parametrize("names, codec", [
    (GBK_NAMES, "gbk"), (SJIS_NAMES, "shift_jis"), (BIG5_NAMES, "big5"),
])
def test_zip_names_without_utf8_flag_recovered(work: Path, names: list[str], codec: str) -> None:
    data = raw_zip([{"name": n.encode(codec), "data": n.encode()} for n in names])
    # the same bytes as zipfile sees them: mojibake decoded as cp437
    seen = [i.filename for i in zipfile.ZipFile(io.BytesIO(data)).infolist()]
    assert seen != names
    with unpacked(data, "legacy.zip", tmp_root=work) as root:
        assert list_files(root) == sorted(names)
        for n in names:
            assert (root / n).read_bytes() == n.encode()
    assert_clean(work)


def test_shift_jis_not_taken_for_gbk() -> None:
    raw = [n.encode("shift_jis") for n in SJIS_NAMES]
    # the trap: these bytes are valid GBK too
    assert all(r.decode("gbk") for r in raw)
    assert guess_name_encoding(raw) == "cp932"
    assert guess_name_encoding([n.encode("gbk") for n in GBK_NAMES]) == "gb18030"
    assert guess_name_encoding([b"plain.md"]) == "ascii"
    assert guess_name_encoding(["café.md".encode()]) == "utf-8"


def test_explicit_encoding_overrides_guess(work: Path) -> None:
    # "表示" in Shift-JIS reads as other valid GBK characters; the caller says it is GBK
    raw = "表示.md".encode("shift_jis")
    data = raw_zip([{"name": raw, "data": b"x"}])
    with unpacked(data, "a.zip", tmp_root=work, encoding="gbk") as root:
        assert list_files(root) == [raw.decode("gbk")]
    with unpacked(data, "a.zip", tmp_root=work, encoding="shift_jis") as root:
        assert list_files(root) == ["表示.md"]
    refuse(data, "a.zip", work, UnsupportedFormat, "encoding", encoding="no-such-codec")


def test_utf8_flag_names_kept(work: Path) -> None:
    data = make_zip({"ünïcødé/файл.md": b"x"})
    with unpacked(data, "u.zip", tmp_root=work) as root:
        assert list_files(root) == ["ünïcødé/файл.md"]


def test_unicode_path_extra_field_used(work: Path) -> None:
    raw = "资料.md".encode("gbk")
    utf8 = "资料.md".encode()
    body = b"\x01" + struct.pack("<I", zlib.crc32(raw)) + utf8
    extra = struct.pack("<HH", 0x7075, len(body)) + body
    data = raw_zip([{"name": raw, "data": b"x", "extra": extra}])
    with unpacked(data, "e.zip", tmp_root=work) as root:
        assert list_files(root) == ["资料.md"]


# --------------------------------------------------------------------------- corrupt input


@pytest.mark.parametrize("data, name", [
    (b"this is not an archive at all", "notes.zip"),
    (b"", "empty.zip"),
    (gzip.compress(b"just some gzip text, not a tar archive" * 20), "x.tar.gz"),
])
def test_not_an_archive(work: Path, data: bytes, name: str) -> None:
    refuse(data, name, work, CorruptDocument, "not a|corrupt|empty")


def test_truncated_zip(work: Path) -> None:
    data = make_zip({"a.md": os.urandom(5000)})
    refuse(data[: len(data) // 2] + data[-22:], "t.zip", work, CorruptDocument, "not a|corrupt")


def test_truncated_tgz(work: Path) -> None:
    data = make_tgz([(tinfo("a.bin"), os.urandom(100_000))])
    refuse(data[: len(data) // 2], "t.tgz", work, CorruptDocument, "truncated|corrupt")


def test_bad_crc_zip(work: Path) -> None:
    data = raw_zip([{"name": b"a.md", "data": b"hello", "crc": 12345}])
    refuse(data, "c.zip", work, CorruptDocument, "a.md")


def test_encrypted_zip_entry(work: Path) -> None:
    data = raw_zip([{"name": b"secret.md", "data": b"xxxxxxxxxxxx", "flags": 1}])
    refuse(data, "enc.zip", work, CorruptDocument, "encrypted")


def test_list_files_skips_symlinks(tmp_path: Path) -> None:
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs/a.md").write_text("x")
    outside = tmp_path.parent / f"{tmp_path.name}-outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("s")
    (tmp_path / "docs/link.txt").symlink_to(outside / "secret.txt")
    (tmp_path / "linkdir").symlink_to(outside, target_is_directory=True)
    assert list_files(tmp_path) == ["docs/a.md"]


def test_plain_tar_accepted(work: Path) -> None:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tf:
        info = tinfo("a/b.md")
        info.size = 2
        tf.addfile(info, io.BytesIO(b"ok"))
    assert detect_archive_kind("x.tar", buf.getvalue()) == "tar"
    with unpacked(buf.getvalue(), "x.tar", tmp_root=work) as root:
        assert (root / "a/b.md").read_bytes() == b"ok"
    assert_clean(work)


def test_ordinary_compressible_files_pass(work: Path) -> None:
    text = b"".join(b"line %d: lorem ipsum dolor sit amet %s\n" % (i, os.urandom(4).hex().encode())
                    for i in range(60_000))  # ~3 MB of text, ratio well under 200
    data = make_zip({"log.txt": text, "zeros.bin": bytes(900_000)})  # small entries are exempt
    with unpacked(data, "ok.zip", tmp_root=work) as root:
        assert (root / "log.txt").read_bytes() == text
        assert (root / "zeros.bin").stat().st_size == 900_000
    assert_clean(work)
