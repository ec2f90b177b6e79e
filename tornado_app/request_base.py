"""Where the service is being reached: the scheme and host of the request in hand, for the
links the service makes to itself (``tornado_app.documents.object_links``).

The docs face records it before any handler code runs (:func:`remember`); code that makes
links reads it with :func:`current`. A context variable keeps one request's address apart
from another's. A job carries the address of the request that queued it and runs under it
(:func:`use`), so the links it writes name the address its caller used; nothing falls back
to another request's address (a Host header one company sent never reaches another's links).
"""

from __future__ import annotations

import contextvars

import tornado.httputil

_REQUEST_BASE: contextvars.ContextVar[str] = contextvars.ContextVar("request_base", default="")


def of(request: tornado.httputil.HTTPServerRequest) -> str:
    """``scheme://host`` of ``request`` (its scheme already the trusted proxy's, see
    ``tornado_app.http.BaseHandler.initialize``); "" for no or a malformed Host header."""
    host = request.host or ""
    if not host or any(c in host for c in "/\\@?# \t"):
        return ""
    return f"{request.protocol}://{host}"


def remember(request: tornado.httputil.HTTPServerRequest) -> None:
    """Record the base of ``request`` for the rest of its handling."""
    use(of(request))


def use(base: str) -> None:
    """Make ``base`` the address links are made on for the rest of this task (a job)."""
    _REQUEST_BASE.set(base)


def current() -> str:
    """The base of the request (or job) in hand, else ``""``."""
    return _REQUEST_BASE.get()
