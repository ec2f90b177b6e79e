"""Archive benchmark: an archive of 200 Markdown files and 1,000 images processed end to end
through HTTP (embedded SeaweedFS), with upload concurrency 1 and N in the same run."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import tempfile
import time
import urllib.request
import uuid
import zipfile
import zlib
from pathlib import Path

from bench.common import AUTH_HEADER, SERVICE_ENV, machine, multipart, table
from tornado_app.embedded.servers import free_port

ROOT = Path(__file__).resolve().parents[1]


def _png(seed: int) -> bytes:
    """A small valid PNG whose pixels depend on ``seed`` (every image is distinct)."""
    width = height = 16
    raw = b"".join(b"\0" + bytes((seed + x + y) % 256 for x in range(width * 3))
                   for y in range(height))

    def chunk(kind: bytes, data: bytes) -> bytes:
        return (len(data).to_bytes(4, "big") + kind + data
                + zlib.crc32(kind + data).to_bytes(4, "big"))

    header = width.to_bytes(4, "big") + height.to_bytes(4, "big") + b"\x08\x02\0\0\0"
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(raw))
            + chunk(b"IEND", b""))


def build_archive(docs: int, images: int) -> bytes:
    buf = io.BytesIO()
    per_doc = max(1, images // docs)
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        for i in range(images):
            z.writestr(f"img/{i:04d}.png", _png(i))
        for d in range(docs):
            refs = "\n".join(f"![figure {k}](img/{(d * per_doc + k) % images:04d}.png)"
                             for k in range(per_doc))
            z.writestr(f"chapter-{d:03d}.md", f"# Chapter {d}\n\nText.\n\n{refs}\n")
    return buf.getvalue()


def _run(concurrency: int, archive: bytes, data_dir: Path) -> tuple[float, int]:
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("S3_", "MONGO_", "REDIS_"))}
    env.update(DATA_DIR=str(data_dir), UPLOAD_CONCURRENCY=str(concurrency), LOG_LEVEL="WARNING",
               PYTHONPATH=str(ROOT), **SERVICE_ENV)
    proc = subprocess.Popen([sys.executable, "-m", "tornado_app", "serve", "--port", str(port),
                             "--services", "docs"], env=env, cwd=ROOT,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        for _ in range(600):
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=1).close()
                break
            except OSError:
                time.sleep(0.1)
        body, ctype = multipart({"prefix": f"run-{uuid.uuid4().hex[:8]}"},
                                {"file": ("book.zip", archive)}, "application/zip")
        req = urllib.request.Request(f"http://127.0.0.1:{port}/api/upload-archive", data=body,
                                     headers={"Content-Type": ctype, **AUTH_HEADER}, method="POST")
        t0 = time.perf_counter()
        with urllib.request.urlopen(req, timeout=1200) as r:
            result = json.load(r)
        seconds = time.perf_counter() - t0
        assert result["code"] == 0, result
        files = result["data"]["files"]
        objects = len(files) + sum(f["asset_ok"] for f in files)
        return seconds, objects
    finally:
        proc.terminate()
        proc.wait(30)


def run(quick: bool = False) -> None:
    docs, images = (20, 100) if quick else (200, 1000)
    archive = build_archive(docs, images)
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        results = {}
        for concurrency in (1, 8):
            seconds, objects = _run(concurrency, archive, Path(tmp) / f"c{concurrency}")
            results[concurrency] = seconds
            rows.append([str(concurrency), f"{seconds:.2f}", str(objects),
                         f"{objects / seconds:.0f}", f"{results[1] / seconds:.2f}"])
    table(f"Archive of {docs} Markdown files and {images} images, end to end through HTTP "
          f"({machine()}, {len(archive) // 1024} KiB zip)",
          ["upload concurrency", "seconds", "objects stored", "objects/s",
           "speed-up vs concurrency 1"], rows)
