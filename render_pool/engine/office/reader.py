"""OpenDocument and legacy Office files (ODT, ODS, ODP, DOC, XLS, PPT, RTF) read through
headless LibreOffice: converted to the matching OOXML format, then read by the DOCX, XLSX
or PPTX reader, so every format reaches the one document model with the same structure
rules.

How LibreOffice runs (as Gotenberg runs it):

- inside the pool job, so never more instances than pool slots, and the pool's time limit
  applies to it (it is a child of the worker: a killed worker takes it along);
- with a private profile per worker process (``-env:UserInstallation``), created once with
  macros disabled (``DisableMacrosExecution``, security level "very high"), links to other
  files and the web never updated, untrusted referer links blocked and every proxy pointed
  at a closed loopback port;
- in a sandbox (:mod:`render_pool.engine.office.sandbox`, bubblewrap): it sees only its
  job folder, its profile and read-only system files, has no network, runs as an
  unprivileged uid in a user namespace; under ``OFFICE_SANDBOX=required`` (the default) no
  sandbox means no conversion (50001); with ``OFFICE_SANDBOX=off`` it runs as before, in a
  network namespace of its own (``unshare -rn``) where the kernel allows it;
- under its own time limit (``office_timeout``): past it the whole process group is killed
  and the profile thrown away, so the next conversion starts a fresh one;
- under its own memory limit (``office_memory_mb``, an address-space limit set by
  ``prlimit`` as it starts) instead of the worker's: LibreOffice reserves far more address
  space than it uses, so under the worker's 1,500 MB it failed on ordinary presentations.

Before LibreOffice sees an OpenDocument zip, it passes the zip-bomb and XML-bomb guards
(``safe_zip.verified_zip``) and LibreOffice gets the verified copy; an encrypted OpenDocument
or an OLE file LibreOffice cannot open (password-protected DOC/XLS/PPT) answers 40003.

What LibreOffice could fetch or reveal is handled three times: links to other files are
removed from ODF and RTF before it opens them (:mod:`render_pool.engine.office.links`), the
sandbox hides every file it was not given, and what the reader gets from its output is
checked (:mod:`render_pool.engine.office.output`: images must be the upload's own, text
must not name the server).
"""

from __future__ import annotations

import functools
import os
import resource
import shutil
import signal
import subprocess
import tempfile
from collections.abc import Callable
from pathlib import Path

from render_pool.engine import config as engine_config
from render_pool.engine.model import Document
from render_pool.engine.office import cost as office_cost
from render_pool.engine.office import links as office_links
from render_pool.engine.office import output as office_output
from render_pool.engine.office import sandbox as office_sandbox
from render_pool.engine.office.links import Prepared
from render_pool.engine.sniff import detect_kind
from render_pool.errors import ConversionFailed, ConversionTimeout, CorruptDocument, TooLarge

DEFAULT_TIMEOUT = 60.0  # without the service (tests, scripts); it passes OFFICE_TIMEOUT_SECONDS
# LibreOffice output read back; not a setting: POOL_WORKER_MEMORY_MB bounds what follows
MAX_OUTPUT = 200 * 1024 * 1024
_MB = 1024 * 1024
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
    # 1: never recalculate on load: the values the file saved are kept (a recalculation
    # turns formulas LibreOffice evaluates differently into #VALUE!)
    "/org.openoffice.Office.Calc/Formula/Load": {"OOXMLRecalcMode": "1", "ODFRecalcMode": "1"},
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
    """The LibreOffice executable: the configured one (``SOFFICE_PATH``, see
    :mod:`render_pool.engine.config`), else ``soffice`` or ``libreoffice`` on the PATH."""
    found = engine_config.current().soffice_path or shutil.which("soffice") or shutil.which(
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


def _soffice_args(source: str, outdir: str, filter_name: str, profile_uri: str) -> list[str]:
    return [soffice_path(), "--headless", "--invisible", "--nologo", "--nodefault",
            "--norestore", "--nolockcheck", "--nofirststartwizard",
            f"-env:UserInstallation={profile_uri}",
            "--convert-to", filter_name, "--outdir", outdir, source]


def command(source: Path, outdir: Path, filter_name: str, profile: Path) -> list[str]:
    """The LibreOffice command line for one conversion without the sandbox
    (``OFFICE_SANDBOX=off``): no network where possible."""
    cmd = _soffice_args(str(source), str(outdir), filter_name, profile.as_uri())
    return (["unshare", "-rn", *cmd]) if _can_unshare() else cmd


def sandboxed_command(job: Path, name: str, filter_name: str, profile: Path) -> list[str]:
    """The LibreOffice command line for one conversion in the sandbox: the job folder
    ``job`` (holding ``name`` and ``out/``) and ``profile`` seen under neutral names."""
    inner = _soffice_args(f"{office_sandbox.JOB}/{name}", f"{office_sandbox.JOB}/out",
                          filter_name, Path(office_sandbox.PROFILE).as_uri())
    return office_sandbox.wrap(inner, job, profile)


def memory_bounded(cmd: list[str]) -> tuple[list[str], int]:
    """``cmd`` started under LibreOffice's own address-space limit (``office_memory_mb``,
    never above this process's hard limit) in place of the one this worker passes on;
    with the limit in MiB it will run under (0: none)."""
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    wanted = engine_config.current().office_memory_mb * _MB
    if wanted > 0 and hard != resource.RLIM_INFINITY:
        wanted = min(wanted, hard)
    tool = shutil.which("prlimit")  # util-linux, on every Debian system
    if wanted <= 0 or tool is None:  # the worker's own limit, inherited
        return cmd, 0 if soft == resource.RLIM_INFINITY else soft // _MB
    return [tool, f"--as={wanted}", "--", *cmd], wanted // _MB


def run_libreoffice(data: bytes, kind: str, timeout: float = DEFAULT_TIMEOUT, *,
                    sandboxed: bool = True) -> tuple[bytes, list[str]]:
    """``data`` (of ``kind``, taken as it is) converted by LibreOffice to DOCX, XLSX or PPTX
    bytes, in the sandbox or not; with the host folders it used (for the output check)."""
    target, filter_name = TARGETS[kind]
    profile = profile_dir()
    with tempfile.TemporaryDirectory(prefix="docservice-lo-job-") as tmp:
        name = f"input.{kind}"
        source = Path(tmp) / name
        source.write_bytes(data)
        outdir = Path(tmp) / "out"
        outdir.mkdir()
        if sandboxed:
            cmd, env = sandboxed_command(Path(tmp), name, filter_name, profile), None
        else:
            cmd = command(source, outdir, filter_name, profile)
            env = {"PATH": "/usr/bin:/bin", **engine_config.current().environment, "HOME": tmp}
        cmd, limit_mb = memory_bounded(cmd)
        proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                stderr=subprocess.STDOUT, start_new_session=True,
                                cwd=tmp, env=env)
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
            # LibreOffice says nothing telling when it runs out of address space (a store
            # error, an "unspecified application error"), so the limit is named as a cause
            memory = (f", or needs more than the {limit_mb:,} MB of memory LibreOffice may use "
                      "here" if limit_mb else "")
            raise CorruptDocument(f"The {kind.upper()} file cannot be read: it is damaged or "
                                  f"password-protected{memory}"
                                  + (f" ({tail[0][:200]})" if tail else "") + ".")
        if result.stat().st_size > MAX_OUTPUT:
            raise TooLarge(f"The {kind.upper()} file converts to more than the size limit.")
        return result.read_bytes(), [tmp, str(profile)]


def convert(data: bytes, kind: str, timeout: float = DEFAULT_TIMEOUT
            ) -> tuple[bytes, Prepared, list[str]]:
    """``data`` of ``kind`` with its links neutralised, converted by LibreOffice in the
    sandbox (unless ``OFFICE_SANDBOX=off``): the OOXML bytes, what was prepared, and the
    host folders used."""
    prepared = office_links.prepare(data, kind)  # a damaged or encrypted file: 40003 first
    sandboxed = office_sandbox.check()  # no sandbox: refused before LibreOffice starts
    ooxml, places = run_libreoffice(prepared.data, kind, timeout, sandboxed=sandboxed)
    return ooxml, prepared, places


def convert_to_ooxml(data: bytes, kind: str, timeout: float = DEFAULT_TIMEOUT) -> bytes:
    """``data`` (of ``kind``) converted by LibreOffice to DOCX, XLSX or PPTX bytes."""
    return convert(data, kind, timeout)[0]


def _kill_group(proc: subprocess.Popen[bytes]) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    proc.wait()


def _read(data: bytes, timeout: float, family: str,
          reader: Callable[[bytes], Document]) -> Document:
    """``data`` converted by LibreOffice to ``family`` (docx/xlsx/pptx), read by ``reader``
    and passed through the output check."""
    kind = detect_kind(data) or ""
    if kind not in TARGETS or TARGETS[kind][0] != family:
        raise CorruptDocument(f"Not a file LibreOffice converts to {family.upper()}.")
    office_cost.check_cost(data, kind)  # 41301 at once for what LibreOffice would take minutes on
    ooxml, prepared, places = convert(data, kind, timeout)
    doc = office_output.check(reader(ooxml), prepared, places)
    doc.note(f"{kind.upper()} was converted to {family.upper()} by LibreOffice before reading.")
    return doc


def read_lo_text(data: bytes, include_furniture: bool = False, track_changes: str = "accept",
                 office_timeout: float = DEFAULT_TIMEOUT) -> Document:
    """ODT, DOC or RTF through LibreOffice and the DOCX reader."""
    from render_pool.engine.docx.reader import read_docx

    return _read(data, office_timeout, "docx", lambda docx: read_docx(
        docx, include_furniture=include_furniture, track_changes=track_changes))


def read_lo_sheets(data: bytes, max_cells: int = 50_000,
                   office_timeout: float = DEFAULT_TIMEOUT) -> Document:
    """ODS or XLS through LibreOffice and the XLSX reader."""
    from render_pool.engine.xlsx.reader import read_xlsx

    return _read(data, office_timeout, "xlsx", lambda xlsx: read_xlsx(xlsx, max_cells=max_cells))


def read_lo_slides(data: bytes, notes: bool = True,
                   office_timeout: float = DEFAULT_TIMEOUT) -> Document:
    """ODP or PPT through LibreOffice and the PPTX reader."""
    from render_pool.engine.pptx.reader import read_pptx

    return _read(data, office_timeout, "pptx", lambda pptx: read_pptx(pptx, notes=notes))
