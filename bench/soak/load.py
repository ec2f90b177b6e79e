"""The soak's load: clients that log in, administer users and convert documents, and the
bookkeeping of every request (route, answer, latency, fault window)."""

from __future__ import annotations

import io
import json
import random
import time
import zipfile
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from tornado.httpclient import AsyncHTTPClient, HTTPRequest, HTTPResponse

from bench.common import AUTH_HEADER, multipart
from bench.soak import (
    ADMIN,
    ADMIN_PASSWORD,
    COMPANY,
    DOCX_DIR,
    DOCX_FILES,
    PDF_FILES,
    REQUEST_TIMEOUT,
    USER_PASSWORD,
)


# ---------------------------------------------------------------- request bookkeeping
@dataclass
class Record:
    route: str
    start: float
    end: float
    outcome: str  # ok | error | noanswer
    detail: str = ""


@dataclass
class Window:
    name: str
    start: float
    end: float = float("inf")
    recovered_after: float | None = None
    excuses: bool = True  # error answers inside it are expected (a replica kill: none are)


@dataclass
class Run:
    records: list[Record] = field(default_factory=list)
    windows: list[Window] = field(default_factory=list)
    timeline: list[tuple[float, dict[str, tuple[int, float]]]] = field(default_factory=list)
    t0: float = 0.0
    wall0: float = 0.0  # time.time() at t0

    def in_window(self, r: Record) -> bool:
        return any(r.start <= w.end and r.end >= w.start for w in self.windows if w.excuses)


def answer_json(resp: HTTPResponse) -> Any:
    try:
        return json.loads(resp.body or b"null")
    except ValueError:
        return None


def auth_ok(resp: HTTPResponse) -> str:
    """'' when an annotation call succeeded, else why not."""
    body = answer_json(resp)
    if resp.code in (200, 201) and isinstance(body, dict) and body.get("code") == "SUCCESS":
        return ""
    return f"{resp.code} {body.get('code') if isinstance(body, dict) else ''}".strip()


def docs_ok(resp: HTTPResponse) -> str:
    """'' when a conversion envelope answered code 0, else why not."""
    body = answer_json(resp)
    if resp.code == 200 and isinstance(body, dict) and body.get("code") == 0:
        return ""
    return f"{resp.code} {body.get('code') if isinstance(body, dict) else ''}".strip()


def file_ok(magic: bytes) -> Callable[[HTTPResponse], str]:
    """'' when the answer is a file starting with ``magic``, else why not."""
    def check(resp: HTTPResponse) -> str:
        if resp.code == 200 and (resp.body or b"").startswith(magic):
            return ""
        body = answer_json(resp)
        return f"{resp.code} {body.get('code') if isinstance(body, dict) else ''}".strip()
    return check


class Client:
    """One simulated user: its own admin session, its own users to administer."""

    def __init__(self, n: int, base: str, run: Run, inputs: Inputs) -> None:
        self.n, self.base, self.run, self.inputs = n, base, run, inputs
        self.http = AsyncHTTPClient()
        self.rng = random.Random(n)
        self.admin_token = ""
        self.target_id = 0
        self.target_state = 0

    async def call(self, route: str, method: str, path: str, check: Callable[[HTTPResponse], str],
                   *, body: Any = None, form: tuple[bytes, str] | None = None,
                   token: str | None = None) -> HTTPResponse | None:
        headers: dict[str, str] = {}
        data: bytes | None = None
        if token:
            headers["Authorization"] = f"Bearer {token}"
        elif not path.startswith("/api/auth/"):
            headers.update(AUTH_HEADER)  # the docs caller: the service's operator token
        if form is not None:
            data, headers["Content-Type"] = form
        elif body is not None:
            data, headers["Content-Type"] = json.dumps(body).encode(), "application/json"
        elif method in ("POST", "PUT"):
            data = b""
        req = HTTPRequest(self.base + path, method=method, body=data, headers=headers,
                          request_timeout=REQUEST_TIMEOUT, connect_timeout=10)
        start = time.monotonic()
        try:
            resp = await self.http.fetch(req, raise_error=False)
            failure = str(resp.error) if resp.code == 599 else ""
        except Exception as exc:  # refused, reset, timed out: no HTTP answer at all
            failure = f"{type(exc).__name__}: {exc}"
        end = time.monotonic()
        if failure:
            self.run.records.append(Record(route, start, end, "noanswer", failure))
            return None
        why = check(resp)
        self.run.records.append(Record(route, start, end, "error" if why else "ok", why))
        return resp

    async def setup(self) -> None:
        resp = await self.call("POST /api/auth/login", "POST", "/api/auth/login", auth_ok,
                               body={"companyCode": COMPANY, "username": ADMIN,
                                     "password": ADMIN_PASSWORD})
        assert resp is not None and resp.code == 200, "admin login failed"
        self.admin_token = answer_json(resp)["data"]["token"]
        for name, role in ((f"login{self.n}", "ANNOTATOR"), (f"target{self.n}", "REVIEWER")):
            resp = await self.call("POST /api/users", "POST", "/api/users", auth_ok,
                                   body={"username": name, "password": USER_PASSWORD,
                                         "role": role}, token=self.admin_token)
            assert resp is not None and resp.code == 201, f"creating {name} failed"
            if name.startswith("target"):
                self.target_id = answer_json(resp)["data"]["id"]

    # ------------------------------------------------------------ operations
    async def op_login(self) -> None:
        resp = await self.call("POST /api/auth/login", "POST", "/api/auth/login", auth_ok,
                               body={"companyCode": COMPANY, "username": f"login{self.n}",
                                     "password": USER_PASSWORD})
        if resp is None or resp.code != 200:
            return
        token = answer_json(resp)["data"]["token"]
        await self.call("GET /api/auth/me", "GET", "/api/auth/me", auth_ok, token=token)
        await self.call("POST /api/auth/logout", "POST", "/api/auth/logout", auth_ok,
                        token=token)

    async def op_me(self) -> None:
        await self.call("GET /api/auth/me", "GET", "/api/auth/me", auth_ok,
                        token=self.admin_token)

    async def op_users(self) -> None:
        uid, step = self.target_id, self.target_state % 5
        self.target_state += 1
        if step == 0:
            await self.call("GET /api/users", "GET", "/api/users?page=1&pageSize=20", auth_ok,
                            token=self.admin_token)
        elif step == 1:
            await self.call("PUT /api/users/{id}", "PUT", f"/api/users/{uid}", auth_ok,
                            body={"realName": f"Target {self.rng.randrange(10**6)}"},
                            token=self.admin_token)
        elif step == 2:
            role = self.rng.choice(["ANNOTATOR", "REVIEWER"])
            await self.call("PUT /api/users/{id}/role", "PUT", f"/api/users/{uid}/role",
                            auth_ok, body={"role": role}, token=self.admin_token)
        else:
            status = "DISABLED" if step == 3 else "ACTIVE"
            await self.call("PUT /api/users/{id}/status", "PUT", f"/api/users/{uid}/status",
                            auth_ok, body={"status": status}, token=self.admin_token)

    async def op_docx(self) -> None:
        name, data = self.rng.choice(self.inputs.docx)
        export = self.rng.choice(["markdown", "html", "json", "doctags"])
        await self.call("POST /api/convert (docx)", "POST", "/api/convert", docs_ok,
                        form=multipart({"export": export}, {"file": (name, data)}))

    async def op_pdf(self) -> None:
        name, data = self.rng.choice(self.inputs.pdf)
        await self.call("POST /api/convert (pdf)", "POST", "/api/convert", docs_ok,
                        form=multipart({"export": "markdown"}, {"file": (name, data)}))

    async def op_md_pdf(self) -> None:
        await self.call("POST /md/convert (pdf)", "POST", "/md/convert", file_ok(b"%PDF"),
                        form=multipart({"markdown_text": markdown(self.rng),
                                        "target": "pdf"}))

    async def op_md_docx(self) -> None:
        await self.call("POST /md/convert (docx)", "POST", "/md/convert", file_ok(b"PK"),
                        form=multipart({"markdown_text": markdown(self.rng),
                                        "target": "docx"}))

    async def op_archive(self) -> None:
        await self.call("POST /api/upload-archive", "POST", "/api/upload-archive", docs_ok,
                        form=multipart({"prefix": f"soak/c{self.n}"},
                                       {"file": ("site.zip", self.inputs.archive)}))

    async def prime(self) -> None:
        """Every operation once, in turn."""
        for op in (self.op_md_pdf, self.op_docx, self.op_pdf, self.op_md_docx,
                   self.op_archive, self.op_users, self.op_me):
            await op()

    async def loop(self, deadline: float) -> None:
        ops = [(self.op_login, 1), (self.op_me, 4), (self.op_users, 2), (self.op_docx, 2),
               (self.op_pdf, 1), (self.op_md_pdf, 1), (self.op_md_docx, 1),
               (self.op_archive, 1)]
        fns, weights = zip(*ops, strict=True)
        while time.monotonic() < deadline:
            await self.rng.choices(fns, weights)[0]()


@dataclass
class Inputs:
    docx: list[tuple[str, bytes]]
    pdf: list[tuple[str, bytes]]
    archive: bytes


def _png() -> bytes:
    import zlib

    raw = b"".join(b"\0" + bytes((x * 7 + y) % 256 for x in range(24)) for y in range(8))

    def chunk(kind: bytes, data: bytes) -> bytes:
        return (len(data).to_bytes(4, "big") + kind + data
                + zlib.crc32(kind + data).to_bytes(4, "big"))

    header = (8).to_bytes(4, "big") + (8).to_bytes(4, "big") + b"\x08\x02\0\0\0"
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(raw))
            + chunk(b"IEND", b""))


def load_inputs() -> Inputs:
    """Small real documents from tests/data and a generated archive."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("img/logo.png", _png())
        z.writestr("docs/a.md", "# A\n\n![logo](../img/logo.png)\n\nSee [b](b.md).\n")
        z.writestr("docs/b.md", "# B\n\n- one\n- two\n\n![logo](../img/logo.png)\n")
        z.writestr("page.html", '<h1>Page</h1><p><img src="img/logo.png"></p>')
    return Inputs(
        docx=[(n, (DOCX_DIR / n).read_bytes()) for n in DOCX_FILES],
        pdf=[(p.name, p.read_bytes()) for p in PDF_FILES],
        archive=buf.getvalue(),
    )


def markdown(rng: random.Random) -> str:
    """A small generated Markdown document (headings, lists, a table, code)."""
    n = rng.randrange(1, 4)
    parts = [f"# Report {rng.randrange(1000)}\n"]
    for s in range(n):
        parts.append(f"## Section {s + 1}\n\nSome *text* with **bold** and `code` "
                     f"number {rng.random():.4f}.\n\n- item one\n- item two\n  1. nested\n")
        parts.append("| a | b |\n|---|---|\n| 1 | 2 |\n| 3 | 4 |\n")
        parts.append("```python\nprint('hello')\n```\n")
    return "\n".join(parts)


