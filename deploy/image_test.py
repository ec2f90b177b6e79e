"""Run the built image and check it from outside, as an operator would after `docker run`.

Starts a throwaway container of IMAGE with buildah (`buildah run --isolation chroot`: no
daemon, the host's network; the image's own ENTRYPOINT, CMD, USER, ENV and WORKDIR, with only
the listen address and port replaced by a free loopback port) on the embedded defaults, and
checks over HTTP: /health; /ready with every dependency green; a login with the account of a
SEED_FILE, whose Bearer token goes with every docs call; a DOCX -> Markdown conversion and
an RTF one (LibreOffice in the image); a PNG of printed words read by OCR (Tesseract in
the image); a
Markdown -> PDF render with Chinese text whose fonts are embedded, tagged and with its outline
(pypdfium2); the image's HEALTHCHECK command; that tini and every process under it (the
service, redis-server, SecantusDB, SeaweedFS, Chromium) run as the image's non-root user with
their data in /data;
and that SIGTERM to tini (what `docker stop` sends to PID 1) ends everything within 10 s with
exit code 0. Prints the image size. Exit status 0 when every check passed.

    python deploy/image_test.py [IMAGE]      (root, buildah; IMAGE=localhost/docservice:latest)
"""

from __future__ import annotations

import ctypes
import io
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import pypdfium2 as pdfium
import pypdfium2.raw as pdfium_c
import urllib3
from docx import Document

SEED_PASSWORD = "image test password 1"  # noqa: S105 - a throwaway container's account
CJK_SENTENCE = "这是中文正文，用于检查字体嵌入。"  # noqa: RUF001 - real Chinese punctuation
STOP_LIMIT_S = 10.0
http = urllib3.PoolManager(retries=False, timeout=urllib3.Timeout(connect=2, read=120))


class CheckFailed(AssertionError):
    """One of the image checks failed; the message says which and what was seen."""



def scan_png() -> bytes:
    """A 300 dpi page image of printed words (Pillow, DejaVu Sans from the host)."""
    from PIL import Image, ImageDraw, ImageFont

    page = Image.new("L", (2480, 800), 255)
    font = ImageFont.truetype("/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf", 90)
    ImageDraw.Draw(page).text((200, 300), "Container scan check", fill=0, font=font)
    out = io.BytesIO()
    page.save(out, format="PNG", dpi=(300, 300))
    return out.getvalue()

def check(condition: bool, message: str) -> None:
    """Fail with ``message`` unless ``condition``."""
    if not condition:
        raise CheckFailed(message)


def ok(message: str) -> None:
    """Report a passed check."""
    print(f"  ok  {message}", flush=True)


def buildah(*args: str, capture: bool = True) -> str:
    """Run buildah; its stdout, or a CheckFailed carrying its stderr."""
    proc = subprocess.run(["buildah", *args], capture_output=capture, text=True, check=False)
    if proc.returncode != 0:
        raise CheckFailed(f"buildah {' '.join(args[:2])}: {(proc.stderr or '').strip()[-800:]}")
    return proc.stdout or ""


def free_port() -> int:
    """A free loopback TCP port."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def image_size(image: str) -> str:
    """The image's size as buildah lists it."""
    return buildah("images", "--format", "{{.Size}}", image).strip().splitlines()[0]


def service_command(config: dict[str, Any], port: int) -> list[str]:
    """The image's ENTRYPOINT + CMD with the listen host and port set to loopback:``port``."""
    argv = [*(config.get("Entrypoint") or []), *(config.get("Cmd") or [])]
    for flag, value in (("--host", "127.0.0.1"), ("--port", str(port))):
        if flag in argv:
            argv[argv.index(flag) + 1] = value
        else:
            argv += [flag, value]
    return argv


# ---- processes, read from the host's /proc (chroot isolation shares the PID namespace) ----

def children(pid: int) -> list[int]:
    """Direct children of ``pid``."""
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                found.append(int(entry))
    return found


def descendants(pid: int) -> list[int]:
    """Every process below ``pid``."""
    out, todo = [], [pid]
    while todo:
        for child in children(todo.pop()):
            out.append(child)
            todo.append(child)
    return out


def cmdline(pid: int) -> list[str]:
    """A process's argv (empty once it is gone)."""
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().decode(errors="replace").split("\0")[:-1]
    except OSError:
        return []


def comm(pid: int) -> str:
    """A process's name as the kernel keeps it (argv may be rewritten, e.g. by Chromium)."""
    try:
        return Path(f"/proc/{pid}/comm").read_text().strip()
    except OSError:
        return ""


def uids(pid: int) -> tuple[int, int]:
    """Real and effective uid of ``pid``."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("Uid:"):
            real, effective = line.split()[1:3]
            return int(real), int(effective)
    raise CheckFailed(f"no Uid line for pid {pid}")


def alive(pid: int) -> bool:
    """Whether ``pid`` exists and is not a zombie."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def find_tini(root_pid: int, timeout: float = 30.0) -> int:
    """The tini process (the container's init) below the ``buildah run`` process."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for pid in descendants(root_pid):
            argv = cmdline(pid)
            if argv and argv[0].endswith("tini"):
                return pid
        time.sleep(0.2)
    raise CheckFailed("tini did not start: the image's ENTRYPOINT should be /usr/bin/tini")


# ---- HTTP ----

def get_json(url: str, headers: dict[str, str] | None = None) -> tuple[int, Any]:
    """GET ``url``: status and decoded JSON (None when the body is not JSON)."""
    r = http.request("GET", url, headers=headers or {})
    try:
        return r.status, json.loads(r.data)
    except ValueError:
        return r.status, None


def wait_health(base: str, runner: subprocess.Popen, log: Path, timeout: float = 120) -> float:
    """Seconds until /health answers 200; fails early if the container exits."""
    start = time.monotonic()
    while time.monotonic() - start < timeout:
        if runner.poll() is not None:
            raise CheckFailed(f"container exited with {runner.returncode}:\n{tail(log)}")
        try:
            status, body = get_json(f"{base}/health")
            if status == 200:
                check(body == {"status": "ok"}, f"/health body {body!r}")
                return time.monotonic() - start
        except urllib3.exceptions.HTTPError:
            pass
        time.sleep(0.5)
    raise CheckFailed(f"/health did not answer within {timeout:.0f} s:\n{tail(log)}")


def read_ready(base: str, ctr: str, port: int, metrics_port: int) -> tuple[int, Any]:
    """/ready on the service port, or, where it has moved to the loopback-only
    METRICS_ADDRESS (the service port answers 404, 401 or 403), read from inside the
    container with its own python (like `docker exec`): the metrics port first, then the
    service port. IMAGE_TEST_READY_INSIDE=1 always reads it from inside."""
    if not os.environ.get("IMAGE_TEST_READY_INSIDE"):
        status, body = get_json(f"{base}/ready")
        if status in (200, 503) and isinstance(body, dict) and "checks" in body:
            return status, body
    code = (
        "import json, sys, urllib.request as u, urllib.error as e\n"
        f"for port in ({metrics_port}, {port}):\n"
        "    try:\n"
        "        r = u.urlopen(f'http://127.0.0.1:{port}/ready', timeout=10)\n"
        "        status, body = r.status, r.read().decode()\n"
        "    except e.HTTPError as err:\n"
        "        status, body = err.code, err.read().decode()\n"
        "    except OSError:\n"
        "        continue\n"
        "    if status in (200, 503) and '\"checks\"' in body:\n"
        "        print(status); print(body); sys.exit(0)\n"
        "print(0); print('null')\n"
    )
    out = buildah("run", "--isolation", "chroot", ctr, "--", "python", "-c", code)
    first, _, rest = out.partition("\n")
    return int(first), json.loads(rest)


def wait_ready(base: str, ctr: str, port: int, metrics_port: int,
               timeout: float = 90) -> dict[str, Any]:
    """The /ready checks once every dependency is green."""
    deadline = time.monotonic() + timeout
    status, body = 0, None
    while time.monotonic() < deadline:
        status, body = read_ready(base, ctr, port, metrics_port)
        if status == 200:
            return body
        time.sleep(1)
    raise CheckFailed(f"/ready not green within {timeout:.0f} s: {status} {body}")


def login(base: str) -> str:
    """A session token for the seeded account (POST /api/auth/login)."""
    r = http.request("POST", f"{base}/api/auth/login",
                     body=json.dumps({"companyCode": "IMGTEST", "username": "operator",
                                      "password": SEED_PASSWORD}),
                     headers={"Content-Type": "application/json"})
    check(r.status == 200, f"login answered {r.status}: {r.data[:300]!r}")
    return json.loads(r.data)["data"]["token"]


def post_form(url: str, fields: dict[str, Any], token: str) -> urllib3.BaseHTTPResponse:
    """A multipart POST with the session token."""
    body, content_type = urllib3.encode_multipart_formdata(fields)
    return http.request("POST", url, body=body, headers={
        "Content-Type": content_type, "Authorization": f"Bearer {token}"})


def sample_docx() -> bytes:
    """A small DOCX: a heading, a paragraph with bold and Chinese text, a list item."""
    doc = Document()
    doc.add_heading("Container check", level=1)
    para = doc.add_paragraph("Converted inside the image: ")
    para.add_run("bold words").bold = True
    para.add_run(" and 你好世界.")
    doc.add_paragraph("first point", style="List Bullet")
    buf = io.BytesIO()
    doc.save(buf)
    return buf.getvalue()


def pdf_fonts(data: bytes) -> tuple[str, list[tuple[str, bool, str]]]:
    """The PDF's text and, for every text object, (font name, embedded?, its text)."""
    pdf = pdfium.PdfDocument(data)
    text, fonts = "", []
    try:
        for page in pdf:
            textpage = page.get_textpage()
            text += textpage.get_text_range()
            for obj in page.get_objects(filter=[pdfium_c.FPDF_PAGEOBJ_TEXT], max_depth=5):
                font = pdfium_c.FPDFTextObj_GetFont(obj.raw)
                buf = ctypes.create_string_buffer(256)
                pdfium_c.FPDFFont_GetBaseFontName(font, buf, 256)
                n = pdfium_c.FPDFTextObj_GetText(obj.raw, textpage.raw, None, 0)
                tbuf = ctypes.create_string_buffer(n * 2)
                pdfium_c.FPDFTextObj_GetText(obj.raw, textpage.raw,
                                             ctypes.cast(tbuf, ctypes.POINTER(ctypes.c_ushort)), n)
                obj_text = tbuf.raw.decode("utf-16-le", errors="replace").rstrip("\0")
                fonts.append((buf.value.decode(errors="replace"),
                              bool(pdfium_c.FPDFFont_GetIsEmbedded(font)), obj_text))
    finally:
        pdf.close()
    return text, fonts


def pdf_structure(data: bytes) -> tuple[bool, list[str]]:
    """Whether the PDF is tagged, and its outline's titles (what the TOC pass relies on)."""
    pdf = pdfium.PdfDocument(data)
    try:
        return bool(pdfium_c.FPDFCatalog_IsTagged(pdf.raw)), [b.get_title() for b in pdf.get_toc()]
    finally:
        pdf.close()


def tail(path: Path, lines: int = 25) -> str:
    """The last lines of the container's log."""
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return "(no log)"


# ---- the run ----

def run_checks(image: str) -> None:
    """Every check, against one container; the container is removed afterwards."""
    check(os.geteuid() == 0, "run as root (buildah)")
    print(f"image {image}: size {image_size(image)}", flush=True)
    info = json.loads(buildah("inspect", "--type", "image", image))
    config = info["Docker"]["config"]
    user = config.get("User")
    check(user not in (None, "", "root", "0"), f"image USER is {user!r}")
    ok(f"image USER {config['User']}, volumes {sorted(config.get('Volumes') or {})}")

    port, metrics_port = free_port(), free_port()
    base = f"http://127.0.0.1:{port}"
    ctr = f"docservice-imagetest-{os.getpid()}"
    workdir = Path(tempfile.mkdtemp(prefix="image-test-"))
    log = workdir / "container.log"
    runner: subprocess.Popen | None = None
    buildah("from", "--pull=false", "--name", ctr, image)
    try:
        seed = workdir / "seed.json"
        seed.write_text(json.dumps({"companies": [{"code": "IMGTEST", "name": "Image test",
            "users": [{"username": "operator", "password": SEED_PASSWORD, "realName": "Op",
                       "role": "ADMIN", "status": "ACTIVE"}]}]}))
        buildah("copy", "--chown", config["User"], "--chmod", "0600", ctr, str(seed),
                "/home/app/seed.json")
        buildah("config", "--env", "SEED_FILE=/home/app/seed.json",
                "--env", f"METRICS_ADDRESS=127.0.0.1:{metrics_port}",
                "--env", "POOL_WORKERS=1", ctr)
        argv = service_command(config, port)
        print(f"starting: buildah run --isolation chroot {ctr} -- {' '.join(argv)}", flush=True)
        with log.open("wb") as out:
            runner = subprocess.Popen(["buildah", "run", "--isolation", "chroot", ctr, "--", *argv],
                                      stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
        started = wait_health(base, runner, log)
        ok(f"/health 200 after {started:.1f} s")

        ready = wait_ready(base, ctr, port, metrics_port)
        checks = ready.get("checks", {})
        check(checks and all(c.get("ok") for c in checks.values()), f"/ready checks {checks}")
        ok(f"/ready 200, all green: {', '.join(sorted(checks))}")

        token = login(base)
        ok("login with the SEED_FILE account; Bearer token sent on every docs call")

        r = post_form(f"{base}/api/convert",
                      {"file": ("check.docx", sample_docx()), "export": "markdown"}, token)
        check(r.status == 200, f"/api/convert answered {r.status}: {r.data[:300]!r}")
        content = json.loads(r.data)["data"]["content"]
        check("# Container check" in content and "**bold words**" in content
              and "你好世界" in content and "first point" in content,
              f"DOCX -> Markdown content {content!r}")
        ok(f"DOCX -> Markdown: {content.strip().splitlines()[0]!r} ... ({len(content)} chars)")

        rtf = rb"{\rtf1\ansi{\fonttbl\f0 Helvetica;}\f0\pard {\b Container RTF} check\par}"
        r = post_form(f"{base}/api/convert", {"file": ("check.rtf", rtf)}, token)
        reply = json.loads(r.data)
        check(r.status == 200 and reply["code"] == 0
              and "**Container RTF**" in reply["data"]["content"],
              f"RTF -> Markdown (LibreOffice in the image) answered {reply}")
        ok("RTF -> Markdown through LibreOffice in the image")

        r = post_form(f"{base}/api/convert", {"file": ("scan.png", scan_png())}, token)
        reply = json.loads(r.data)
        check(r.status == 200 and reply["code"] == 0
              and "Container scan check" in reply["data"]["content"],
              f"PNG -> Markdown (OCR in the image) answered {reply}")
        ok("PNG -> Markdown through Tesseract in the image: "
           f"{reply['data']['content'].strip().splitlines()[0]!r}")

        markdown = f"# 中文标题 Chinese title\n\n{CJK_SENTENCE}\n\nLatin text beside it.\n"
        r = post_form(f"{base}/md/convert", {"markdown_text": markdown, "target": "pdf"}, token)
        check(r.status == 200 and r.data.startswith(b"%PDF"),
              f"/md/convert answered {r.status} {r.headers.get('Content-Type')}: {r.data[:200]!r}")
        text, fonts = pdf_fonts(r.data)
        check(CJK_SENTENCE in text.replace("\r", "").replace("\n", ""),
              f"Chinese sentence missing from the PDF text: {text!r}")
        cjk = [(name, emb) for name, emb, t in fonts if any("\u4e00" <= ch <= "\u9fff" for ch in t)]
        check(bool(cjk), f"no text object holds the Chinese text: {fonts}")
        check(all(emb for _, emb, _ in fonts), f"fonts not embedded: {fonts}")
        names = sorted({name for name, _, _ in fonts if name})
        ok(f"Markdown -> PDF ({len(r.data)} bytes): Chinese text present; fonts embedded: "
           f"{names}; Chinese set in {sorted({n for n, _ in cjk if n})}")
        tagged, outline = pdf_structure(r.data)
        check(tagged and any("Chinese title" in title for title in outline),
              f"PDF tagged {tagged}, outline {outline}: Chromium's printing lost structure")
        ok(f"the PDF is tagged and has its outline: {outline}")

        health = (config.get("Healthcheck") or {}).get("Test") or []
        check(health[:1] == ["CMD"], f"image HEALTHCHECK {health!r}")
        cmd = [part.replace(":8080/", f":{port}/") for part in health[1:]]
        buildah("run", "--isolation", "chroot", ctr, "--", *cmd)
        ok("the image's HEALTHCHECK command passes inside the container")

        tini = find_tini(runner.pid)
        tree = [tini, *descendants(tini)]
        root_fs = Path(f"/proc/{tini}/root")
        passwd = {line.split(":")[2]: line.split(":")[0]
                  for line in (root_fs / "etc/passwd").read_text().splitlines() if line}
        names = {}
        for pid in tree:
            real, effective = uids(pid)
            names[comm(pid)] = passwd.get(str(effective), str(effective))
            check(real != 0 and effective != 0, f"pid {pid} {comm(pid)} runs as root")
        wanted = {"tini", "redis-server", "weed"}
        check(wanted <= set(names), f"expected processes {wanted}, saw {sorted(names)}")
        # comm is cut at 15 characters: "chromium-headle" for chromium-headless-shell.
        check(any(name.startswith("chromium") for name in names),
              f"no Chromium process, saw {sorted(names)}")
        check(any("secantus" in " ".join(cmdline(p)) for p in tree), "no SecantusDB process")
        check(any("tornado_app" in cmdline(p) for p in tree), "no service process")
        users = set(names.values())
        check(users == {config["User"]}, f"processes run as {users}")
        ok(f"{len(tree)} processes, all as {config['User']} (uid "
           f"{uids(tini)[1]}): {', '.join(sorted(names))}")
        data = sorted(p.name for p in (root_fs / "data").iterdir())
        owners = {passwd.get(str(p.stat().st_uid)) for p in (root_fs / "data").iterdir()}
        check({"mongo", "redis", "s3"} <= set(data) and owners == {config["User"]},
              f"/data holds {data} owned by {owners}")
        ok(f"embedded servers keep their data in /data: {', '.join(data)}")

        start = time.monotonic()
        os.kill(tini, signal.SIGTERM)
        try:
            code = runner.wait(timeout=STOP_LIMIT_S + 5)
        except subprocess.TimeoutExpired as exc:
            raise CheckFailed(f"still running {STOP_LIMIT_S + 5:.0f} s after SIGTERM") from exc
        stopped = time.monotonic() - start
        left = [(p, cmdline(p)[:2]) for p in tree if alive(p)]
        check(code == 0, f"exit code {code} after SIGTERM:\n{tail(log)}")
        check(stopped <= STOP_LIMIT_S, f"SIGTERM took {stopped:.1f} s (limit {STOP_LIMIT_S:.0f})")
        check(not left, f"processes left after stop: {left}")
        ok(f"SIGTERM: stopped in {stopped:.1f} s, exit code 0, no process left behind")
    finally:
        if runner is not None and runner.poll() is None:
            os.killpg(runner.pid, signal.SIGKILL)
            runner.wait()
        subprocess.run(["buildah", "rm", ctr], capture_output=True, check=False)
        if os.environ.get("IMAGE_TEST_KEEP_LOG"):
            print(f"container log: {log}")
        else:
            log.unlink(missing_ok=True)
            (workdir / "seed.json").unlink(missing_ok=True)
            workdir.rmdir()


def main() -> int:
    """Run the checks; 0 when all pass."""
    image = sys.argv[1] if len(sys.argv) > 1 else os.environ.get(
        "IMAGE", "localhost/docservice:latest")
    start = time.monotonic()
    try:
        run_checks(image)
    except CheckFailed as exc:
        print(f"FAIL  {exc}", file=sys.stderr)
        return 1
    print(f"image test passed in {time.monotonic() - start:.0f} s ({image}, "
          f"{image_size(image)})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
