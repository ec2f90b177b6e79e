"""A tiny threaded HTTP server on loopback for tests: fixed routes, hits counted."""

from __future__ import annotations

import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

Route = Callable[[BaseHTTPRequestHandler], None]


class LocalServer:
    def __init__(self, routes: dict[str, Route], fallback: Route | None = None) -> None:
        self.routes = routes
        self.fallback = fallback  # answers paths without a route (else 404)
        self.hits: list[str] = []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                outer.hits.append(self.path)
                route = outer.routes.get(self.path.split("?", 1)[0]) or outer.fallback
                if route is None:
                    self.send_error(404)
                    return
                route(self)

            def log_message(self, *args: object) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.port = self.httpd.server_address[1]
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    def url(self, path: str) -> str:
        return f"http://127.0.0.1:{self.port}{path}"

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@contextmanager
def counting_server() -> Iterator[tuple[str, list[str]]]:
    """A loopback server answering every GET with ``REMOTE-CONTENT``: yields its base URL
    and the list of paths requested, for tests that must fetch nothing."""
    server = LocalServer({}, fallback=body(b"REMOTE-CONTENT", "text/plain"))
    try:
        yield server.url(""), server.hits
    finally:
        server.close()


def body(data: bytes, content_type: str = "application/octet-stream") -> Route:
    def route(h: BaseHTTPRequestHandler) -> None:
        h.send_response(200)
        h.send_header("Content-Type", content_type)
        h.send_header("Content-Length", str(len(data)))
        h.end_headers()
        h.wfile.write(data)

    return route


def redirect(location: str) -> Route:
    def route(h: BaseHTTPRequestHandler) -> None:
        h.send_response(302)
        h.send_header("Location", location)
        h.send_header("Content-Length", "0")
        h.end_headers()

    return route


def hang(seconds: float) -> Route:
    def route(h: BaseHTTPRequestHandler) -> None:
        time.sleep(seconds)
        try:
            h.send_response(200)
            h.end_headers()
        except OSError:
            pass

    return route


def download(url: str) -> tuple[int, bytes]:
    """GET ``url`` (a stored link on the loopback S3); the status and body (empty on an
    HTTP error)."""
    try:
        with urllib.request.urlopen(url, timeout=10) as r:
            return r.status, r.read()
    except urllib.error.HTTPError as e:
        return e.code, b""
