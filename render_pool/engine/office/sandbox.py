"""The sandbox LibreOffice runs in: a bubblewrap (``bwrap``) mount namespace that sees only
its job folder, its profile and the read-only system files it needs.

Why: LibreOffice follows links in the files it opens (pictures, sections, linked sheets and
objects, RTF ``INCLUDEPICTURE``/``INCLUDETEXT`` fields) and reports where it runs (Calc's
``INFO``/``CELL``, file-name fields). Neutralising those links first
(:mod:`render_pool.engine.office.links`) is a second line; this is the first: whatever a
document names, LibreOffice can only open what is mounted here.

What LibreOffice sees (everything else on the machine does not exist for it):

- ``/usr`` read-only (programs, libraries, fonts), the top-level ``/bin``, ``/lib``...
  links or folders of the host, and, read-only, ``/etc/fonts``, ``/etc/ld.so.cache``,
  ``/etc/libreoffice``, ``/etc/localtime`` and ``/var/cache/fontconfig``; a LibreOffice
  installed outside ``/usr`` (``SOFFICE_PATH``) has its installation folder read-only too;
- the job folder at :data:`JOB` (the input and the output folder, read-write) and this
  worker's profile at :data:`PROFILE` (read-write), under neutral names, so the host paths
  never reach the document;
- a private ``/tmp`` (a size-bounded tmpfs), a new ``/proc`` of its own processes (with
  ``/proc/version`` and the kernel's release and version files hidden) and a minimal
  ``/dev``;
- no network (a network namespace with loopback only, as ``unshare -rn`` gave before), its
  own PID, IPC, UTS (hostname :data:`HOSTNAME`) and cgroup namespaces, an empty environment
  but for ``PATH``, ``HOME``, ``TMPDIR`` and the locale, uid/gid 65534 inside a user
  namespace, no capabilities, no further user namespaces, and it dies with its parent.

``OFFICE_SANDBOX`` (a setting, handed to the pool's workers as
:attr:`render_pool.engine.config.EngineConfig.office_sandbox`) chooses: ``required`` (the
default): no sandbox, no conversion (:func:`check` raises); ``off``: LibreOffice runs as
before, in a network namespace where the kernel allows it. The locale LibreOffice sees is
the one of the environment the settings hand over (``EngineConfig.environment``).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from pathlib import Path

from render_pool.engine import config as engine_config
from render_pool.errors import ConversionFailed

JOB = "/lo-job"  # the job folder, as LibreOffice sees it
PROFILE = "/lo-profile"  # the worker's profile, as LibreOffice sees it
HOSTNAME = "sandbox"
TMP = "/tmp"  # noqa: S108  # inside the sandbox: a private tmpfs, never the host's /tmp
SANDBOX_UID = 65534  # "nobody" inside the user namespace
TMP_BYTES = 512 * 1024 * 1024  # LibreOffice's own /tmp, in memory
_RO_FILES = ("/etc/fonts", "/etc/ld.so.cache", "/etc/libreoffice", "/etc/localtime",
             "/var/cache/fontconfig")
_TOP_LEVEL = ("bin", "sbin", "lib", "lib32", "lib64", "libx32")
# files of /proc that name the kernel: made unreadable inside
_HIDDEN_PROC = ("/proc/version", "/proc/sys/kernel/osrelease", "/proc/sys/kernel/version")
_works = False  # a sandbox started in this process (see check)
_ENV_KEPT = ("LANG", "LANGUAGE", "LC_ALL", "LC_CTYPE", "LC_NUMERIC", "LC_TIME", "LC_COLLATE",
             "LC_MONETARY", "LC_MESSAGES", "TZ")


def mode() -> str:
    """``required`` or ``off``, as configured (``required`` unless said otherwise: a worker
    nobody configured never runs LibreOffice unconfined)."""
    return engine_config.current().office_sandbox


def bwrap_path() -> str | None:
    """The bubblewrap executable, if installed."""
    return shutil.which("bwrap")


def _system_binds(soffice: str) -> list[str]:
    args = ["--ro-bind", "/usr", "/usr"]
    for name in _TOP_LEVEL:
        top = Path("/") / name
        if top.is_symlink():
            args += ["--symlink", os.readlink(top), str(top)]
        elif top.is_dir():
            args += ["--ro-bind", str(top), str(top)]
    for path in _RO_FILES:
        args += ["--ro-bind-try", path, path]
    real = Path(os.path.realpath(soffice))
    if not real.is_relative_to("/usr") and len(real.parents) > 2:
        home = str(real.parents[1])  # /opt/libreoffice/program/soffice -> /opt/libreoffice
        args += ["--ro-bind", home, home]
    return args


def wrap(inner: list[str], job: Path, profile: Path) -> list[str]:
    """``inner`` (a command naming :data:`JOB` and :data:`PROFILE`) run in the sandbox, with
    the host's ``job`` folder and ``profile`` mounted there."""
    tool = bwrap_path()
    if tool is None:
        raise ConversionFailed(_refusal("bubblewrap (bwrap) is not installed"))
    env: list[str] = ["--setenv", "PATH", "/usr/bin:/bin", "--setenv", "HOME", TMP,
                      "--setenv", "TMPDIR", TMP]
    handed = engine_config.current().environment
    for name in _ENV_KEPT:
        if handed.get(name):
            env += ["--setenv", name, handed[name]]
    hidden: list[str] = []
    for path in _HIDDEN_PROC:
        hidden += ["--ro-bind-try", "/dev/null", path]
    return [tool, "--unshare-all", "--unshare-user", "--disable-userns", "--die-with-parent",
            "--new-session", "--cap-drop", "ALL", "--uid", str(SANDBOX_UID),
            "--gid", str(SANDBOX_UID), "--hostname", HOSTNAME,
            *_system_binds(inner[0]),
            "--proc", "/proc", *hidden, "--dev", "/dev",
            "--size", str(TMP_BYTES), "--tmpfs", TMP,
            "--bind", str(job), JOB, "--bind", str(profile), PROFILE,
            "--chdir", JOB, "--clearenv", *env, "--", *inner]


def _probe() -> str:
    """Empty when a sandbox starts here, else why not."""
    if bwrap_path() is None:
        return "bubblewrap (bwrap) is not installed"
    try:
        with tempfile.TemporaryDirectory(prefix="docservice-lo-probe-") as scratch:
            done = subprocess.run(wrap(["/usr/bin/true"], Path(scratch), Path(scratch)),
                                  capture_output=True, timeout=20, check=False,
                                  stdin=subprocess.DEVNULL)
    except (OSError, subprocess.SubprocessError) as exc:
        return f"bubblewrap does not start ({type(exc).__name__})"
    if done.returncode != 0:
        tail = done.stderr.decode("utf-8", "replace").strip().splitlines()[-1:]
        return "bubblewrap cannot create its namespaces here" + (
            f" ({tail[0][:160]})" if tail else "")
    return ""


def _refusal(reason: str) -> str:
    return ("ODT, ODS, ODP, DOC, XLS, PPT and RTF files are not converted on this server: "
            f"LibreOffice runs only in a sandbox and {reason}. The operator can install "
            "bubblewrap and allow user namespaces, or set OFFICE_SANDBOX=off.")


def check() -> bool:
    """Whether LibreOffice runs sandboxed: True under ``required`` when the sandbox works,
    False under ``off``; under ``required`` without a working sandbox, ConversionFailed
    (50001) saying why. A success is remembered for the process; a failure is probed again
    next time (a few milliseconds), so a passing fault does not refuse for good."""
    global _works
    if mode() == "off":
        return False
    if not _works:
        reason = _probe()
        if reason:
            raise ConversionFailed(_refusal(reason))
        _works = True
    return True
