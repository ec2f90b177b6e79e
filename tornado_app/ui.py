"""Routes of the browser app: static files under ``/ui/`` with a restrictive
Content-Security-Policy (no inline script, nothing loaded from other origins)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import tornado.web

# Scripts, styles, fonts and fetches only from this origin. Images may come from storage
# links (any http/https host) and from data:/blob: (inline images of converted documents).
# Inline styles are allowed because the sandboxed HTML preview (an iframe with ``srcdoc``,
# which inherits this policy) shows converted documents that carry their own <style>.
CONTENT_SECURITY_POLICY = "; ".join([
    "default-src 'self'",
    "script-src 'self'",
    "style-src 'self' 'unsafe-inline'",
    "img-src 'self' data: blob: http: https:",
    "frame-src 'self' blob: data:",
    "connect-src 'self'",
    "font-src 'self'",
    "object-src 'none'",
    "base-uri 'none'",
    "form-action 'self'",
    "frame-ancestors 'none'",
])

SECURITY_HEADERS = {
    "Content-Security-Policy": CONTENT_SECURITY_POLICY,
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "X-Frame-Options": "DENY",
}


class UiStaticHandler(tornado.web.StaticFileHandler):
    """Static files of the app with the security headers; ``index.html`` is never cached
    (so a new release is picked up), the other files are revalidated by ETag."""

    def set_default_headers(self) -> None:
        for name, value in SECURITY_HEADERS.items():
            self.set_header(name, value)

    def set_extra_headers(self, path: str) -> None:
        self.set_header("Cache-Control", "no-cache")

    @classmethod
    def get_content_type_for(cls, path: str) -> str:
        """JavaScript modules need a JavaScript type (browsers refuse others)."""
        return "text/javascript; charset=utf-8" if path.endswith(".js") else ""

    def get_content_type(self) -> str:
        assert self.absolute_path is not None
        return self.get_content_type_for(self.absolute_path) or super().get_content_type()


def ui_routes(static_dir: str | Path) -> list[Any]:
    """Tornado routes serving the app in ``static_dir`` at ``/ui/``.

    ``/`` and ``/ui`` redirect to ``/ui/``, ``/ui/`` answers ``index.html``, ``/ui/<file>`` answers
    that file; all with :data:`CONTENT_SECURITY_POLICY`.
    """
    root = str(Path(static_dir).resolve())
    return [
        (r"/", tornado.web.RedirectHandler, {"url": "/ui/", "permanent": False}),
        (r"/ui", tornado.web.RedirectHandler, {"url": "/ui/", "permanent": False}),
        (r"/ui/(.*)", UiStaticHandler, {"path": root, "default_filename": "index.html"}),
    ]


def default_static_dir() -> Path:
    """The ``ui/`` folder of this checkout (beside ``tornado_app/``)."""
    return Path(__file__).resolve().parent.parent / "ui"
