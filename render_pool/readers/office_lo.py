"""OpenDocument and legacy Office files (ODT, ODS, ODP, DOC, XLS, PPT, RTF) read through
headless LibreOffice: converted to the matching OOXML format, then read by the DOCX, XLSX
or PPTX reader, so every format reaches the one document model with the same structure
rules.

How LibreOffice runs (as Gotenberg runs it):

- inside the pool job, so never more instances than pool slots, and the pool's time limit
  and memory bound apply to it (it is a child of the worker: a killed worker takes it along);
- with a private profile per worker process (``-env:UserInstallation``), created once with
  macros disabled (``DisableMacrosExecution``, security level "very high"), links to other
  files and the web never updated, untrusted referer links blocked and every proxy pointed
  at a closed loopback port;
- in a network namespace of its own (``unshare -rn``: no interface but loopback) where the
  kernel allows it;
- under its own time limit (``office_timeout``): past it the whole process group is killed
  and the profile thrown away, so the next conversion starts a fresh one.

Before LibreOffice sees an OpenDocument zip, it passes the zip-bomb and XML-bomb guards
(``safe_zip.verified_zip``); an encrypted OpenDocument or an OLE file LibreOffice cannot open
(password-protected DOC/XLS/PPT) answers 40003.
"""

from __future__ import annotations

import functools
import os
import shutil
import signal
import subprocess
import tempfile
import zipfile
from io import BytesIO
from pathlib import Path

from render_pool.errors import ConversionFailed, ConversionTimeout, CorruptDocument, TooLarge
from render_pool.model import Document
from render_pool.readers.safe_zip import verified_zip
from render_pool.sniff import detect_kind

DEFAULT_TIMEOUT = 60.0  # without the service (tests, scripts); it passes OFFICE_TIMEOUT_SECONDS
# LibreOffice output read back; not a setting: POOL_WORKER_MEMORY_MB bounds what follows
MAX_OUTPUT = 200 * 1024 * 1024
# source kind -> (OOXML kind, LibreOffice filter)
TARGETS = {
    "odt": ("docx", "docx:MS Word 2007 XML"), "doc": ("docx", "docx:MS Word 2007 XML"),
    "rtf": ("docx", "docx:MS Word 2007 XML"),
    "ods": ("xlsx", "xlsx:Calc MS Excel 2007 XML"), "xls": ("xlsx", "xlsx:Calc MS Excel 2007 XML"),
    "odp": ("pptx", "pptx:Impress MS PowerPoint 2007 XML"),
    "ppt": ("pptx", "pptx:Impress MS PowerPoint 2007 XML"),
}
_ODF = {"odt", "ods", "odp"}

_PROFILE_SETTINGS = {
    "/org.openoffice.Office.Common/Security/Scripting": {
        "MacroSecurityLevel": "3", "DisableMacrosExecution": "true",
        "BlockUntrustedRefererLinks": "true",
    },
    "/org.openoffice.Office.Writer/Content/Update": {"Link": "2"},  # 2: never update
    "/org.openoffice.Office.Calc/Content/Update": {"Link": "2"},
    "/org.openoffice.Inet/Settings": {
        "ooInetProxyType": "1", "ooInetHTTPProxyName": "127.0.0.1", "ooInetHTTPProxyPort": "9",
        "ooInetHTTPSProxyName": "127.0.0.1", "ooInetHTTPSProxyPort": "9",
        "ooInetFTPProxyName": "127.0.0.1", "ooInetFTPProxyPort": "9",
        "ooInetNoProxy": "",
    },
    "/org.openoffice.Office.Common/Misc": {"FirstRun": "false"},
}


def profile_xcu() -> str:
    """The ``registrymodifications.xcu`` of a fresh profile (macros off, no network)."""
    items = []
    for path, props in _PROFILE_SETTINGS.items():
        for name, value in props.items():
            items.append(f'<item oor:path="{path}"><prop oor:name="{name}" oor:op="fuse">'
                         f"<value>{value}</value></prop></item>")
    return ('<?xml version="1.0" encoding="UTF-8"?>\n<oor:items '
            'xmlns:oor="http://openoffice.org/2001/registry" '
            'xmlns:xs="http://www.w3.org/2001/XMLSchema" '
            'xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance">\n'
            + "\n".join(items) + "\n</oor:items>\n")


def soffice_path() -> str:
    """The LibreOffice executable (``SOFFICE_PATH`` or ``soffice`` on the PATH)."""
    found = os.environ.get("SOFFICE_PATH") or shutil.which("soffice") or shutil.which(
        "libreoffice")
    if not found:
        raise ConversionFailed("LibreOffice is not installed: ODT, ODS, ODP, DOC, XLS, PPT "
                               "and RTF cannot be converted here.")
    return found


def profile_dir() -> Path:
    """This worker's private LibreOffice profile (made on first use; profiles of workers
    that are gone, e.g. killed on a time limit, are removed then)."""
    root = Path(tempfile.gettempdir())
    path = root / f"docservice-lo-{os.getpid()}"
    xcu = path / "user" / "registrymodifications.xcu"
    if not xcu.exists():
        _remove_stale_profiles(root)
        xcu.parent.mkdir(parents=True, exist_ok=True)
        xcu.write_text(profile_xcu(), encoding="utf-8")
    return path


def _remove_stale_profiles(root: Path) -> None:
    import psutil

    for old in root.glob("docservice-lo-*"):
        pid = old.name.removeprefix("docservice-lo-")
        if pid.isdigit() and not psutil.pid_exists(int(pid)):
            shutil.rmtree(old, ignore_errors=True)


@functools.lru_cache(maxsize=1)
def _can_unshare() -> bool:
    """Whether this process may start children in a network namespace of their own."""
    tool = shutil.which("unshare")
    if not tool:
        return False
    try:
        return subprocess.run([tool, "-rn", "true"], capture_output=True, timeout=10,
                              check=False).returncode == 0
    except (OSError, subprocess.SubprocessError):
        return False


def command(source: Path, outdir: Path, filter_name: str, profile: Path) -> list[str]:
    """The LibreOffice command line for one conversion (no network where possible)."""
    cmd = [soffice_path(), "--headless", "--invisible", "--nologo", "--nodefault",
           "--norestore", "--nolockcheck", "--nofirststartwizard",
           f"-env:UserInstallation={profile.as_uri()}",
           "--convert-to", filter_name, "--outdir", str(outdir), str(source)]
    return (["unshare", "-rn", *cmd]) if _can_unshare() else cmd


def _check_odf(data: bytes, kind: str) -> None:
    """Zip-bomb and XML-bomb guards; an encrypted OpenDocument is 40003."""
    label = f"The {kind.upper()} package"
    # LibreOffice's own XML parser reads these parts: no DOCTYPE at all (ODF has none)
    safe = zipfile.ZipFile(BytesIO(verified_zip(data, label, strict_dtd=True)))
    try:
        manifest = safe.read("META-INF/manifest.xml")
    except KeyError:
        return
    if b"encryption-data" in manifest:
        raise CorruptDocument(f"The {kind.upper()} document is password-protected "
                              "(encrypted); remove the password and retry.")


def convert_to_ooxml(data: bytes, kind: str, timeout: float = DEFAULT_TIMEOUT) -> bytes:
    """``data`` (of ``kind``) converted by LibreOffice to DOCX, XLSX or PPTX bytes."""
    target, filter_name = TARGETS[kind]
    if kind in _ODF:
        _check_odf(data, kind)
    profile = profile_dir()
    with tempfile.TemporaryDirectory(prefix="docservice-lo-job-") as tmp:
        source = Path(tmp) / f"input.{kind}"
        source.write_bytes(data)
        outdir = Path(tmp) / "out"
        outdir.mkdir()
        proc = subprocess.Popen(command(source, outdir, filter_name, profile),
                                stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                stderr=subprocess.STDOUT, start_new_session=True,
                                cwd=tmp, env={**os.environ, "HOME": tmp})
        try:
            output, _ = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            _kill_group(proc)
            shutil.rmtree(profile, ignore_errors=True)  # a killed instance may leave it broken
            raise ConversionTimeout(f"LibreOffice did not convert the {kind.upper()} file within "
                                    f"{timeout:g} s.") from None
        result = outdir / f"input.{target}"
        if not result.exists():
            tail = output.decode("utf-8", "replace").strip().splitlines()[-1:] if output else []
            raise CorruptDocument(f"The {kind.upper()} file cannot be read: it is damaged or "
                                  "password-protected" + (f" ({tail[0][:200]})" if tail else "")
                                  + ".")
        if result.stat().st_size > MAX_OUTPUT:
            raise TooLarge(f"The {kind.upper()} file converts to more than the size limit.")
        return result.read_bytes()


def _kill_group(proc: subprocess.Popen) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    proc.wait()


def _converted(data: bytes, timeout: float, family: str) -> tuple[bytes, str]:
    kind = detect_kind(data) or ""
    if kind not in TARGETS or TARGETS[kind][0] != family:
        raise CorruptDocument(f"Not a file LibreOffice converts to {family.upper()}.")
    return convert_to_ooxml(data, kind, timeout), kind


def _note(doc: Document, kind: str, target: str) -> Document:
    doc.warn(f"{kind.upper()} was converted to {target.upper()} by LibreOffice before reading.")
    return doc


def read_lo_text(data: bytes, include_furniture: bool = False, track_changes: str = "accept",
                 office_timeout: float = DEFAULT_TIMEOUT) -> Document:
    """ODT, DOC or RTF through LibreOffice and the DOCX reader."""
    from render_pool.readers.docx.reader import read_docx

    docx, kind = _converted(data, office_timeout, "docx")
    return _note(read_docx(docx, include_furniture=include_furniture,
                           track_changes=track_changes), kind, "docx")


def read_lo_sheets(data: bytes, max_cells: int = 50_000,
                   office_timeout: float = DEFAULT_TIMEOUT) -> Document:
    """ODS or XLS through LibreOffice and the XLSX reader."""
    from render_pool.readers.xlsx import read_xlsx

    xlsx, kind = _converted(data, office_timeout, "xlsx")
    return _note(read_xlsx(xlsx, max_cells=max_cells), kind, "xlsx")


def read_lo_slides(data: bytes, notes: bool = True,
                   office_timeout: float = DEFAULT_TIMEOUT) -> Document:
    """ODP or PPT through LibreOffice and the PPTX reader."""
    from render_pool.readers.pptx import read_pptx

    pptx, kind = _converted(data, office_timeout, "pptx")
    return _note(read_pptx(pptx, notes=notes), kind, "pptx")
