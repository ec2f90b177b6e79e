"""Write password-protected copies of office files with LibreOffice (UNO), for tests.

Run with the system Python that has LibreOffice's ``uno`` module (python3-uno, which the
nogui LibreOffice packages bring): ``/usr/bin/python3 tests/lo_protect.py PROFILE_DIR
SRC DST FILTER [SRC DST FILTER ...]``. LibreOffice is reached over a named pipe (no
socket) and stores each file with the password ``secret``: DOCX/XLSX/PPTX as encrypted OLE
packages, ODF with encrypted parts, DOC/XLS/PPT with their legacy encryption.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import uno  # type: ignore[import-not-found]  # LibreOffice's own Python bridge
from com.sun.star.beans import PropertyValue  # type: ignore[import-not-found]  # ditto


def _prop(name: str, value: object) -> PropertyValue:
    p = PropertyValue()
    p.Name, p.Value = name, value
    return p


def main(profile: str, *jobs: str) -> int:
    pipe = f"docservice-test-{os.getpid()}"
    proc = subprocess.Popen(["soffice", "--headless", "--norestore", "--nolockcheck",
                             f"-env:UserInstallation={Path(profile).as_uri()}",
                             f"--accept=pipe,name={pipe};urp;"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        local = uno.getComponentContext()
        resolver = local.ServiceManager.createInstanceWithContext(
            "com.sun.star.bridge.UnoUrlResolver", local)
        deadline = time.monotonic() + 90
        while True:
            try:
                ctx = resolver.resolve(f"uno:pipe,name={pipe};urp;StarOffice.ComponentContext")
                break
            except Exception:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.3)
        desktop = ctx.ServiceManager.createInstanceWithContext("com.sun.star.frame.Desktop", ctx)
        for i in range(0, len(jobs), 3):
            src, dst, filter_name = jobs[i:i + 3]
            doc = desktop.loadComponentFromURL(uno.systemPathToFileUrl(src), "_blank", 0,
                                               (_prop("Hidden", True),))
            doc.storeToURL(uno.systemPathToFileUrl(dst),
                           (_prop("FilterName", filter_name), _prop("Password", "secret")))
            doc.close(True)
        try:
            desktop.terminate()
        except Exception as exc:  # the bridge drops as LibreOffice exits
            print(f"terminate: {type(exc).__name__}", file=sys.stderr)
    finally:
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
    return 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:]))
