"""Browser safety in one place (see docs/security.md):

- ``Host`` must be one of ``PUBLIC_HOSTS`` when that is set (DNS rebinding), checked before
  routing (HTTP 421); under ``DOCS_AUTH=none`` (no credential protects anything) only
  loopback names (``localhost``, ``127.x.x.x``, ``[::1]``) and ``PUBLIC_HOSTS`` are served,
  so a page whose name was rebound to 127.0.0.1 cannot reach the service;
- a state-changing request (POST/PUT/PATCH/DELETE) with an ``Origin`` must come from this
  origin (scheme, host and port: the scheme is the connection's, or ``X-Forwarded-Proto``
  from a ``TRUSTED_PROXIES`` peer) or one of ``ALLOWED_ORIGINS``; without ``Origin``, a
  request with an ``Authorization`` header (a script) passes, and a form-style body (what a
  cross-site HTML form can send) is refused when no credential protects it
  (``DOCS_AUTH=none``; with caller auth on it has no credential and is answered 401);
- a docs request a browser marks ``Sec-Fetch-Site: cross-site`` needs an allowed origin;
- a GET that changes state (``GET /config/load_profile``) needs a credential header
  (``Authorization``) or ``Sec-Fetch-Site: same-origin``: a cross-site page can make a
  browser send a GET (an image, a link) but can set neither;
- CORS headers only for ``ALLOWED_ORIGINS`` (none by default), including preflights.
"""

from __future__ import annotations

import urllib.parse
from dataclasses import dataclass
from typing import Any

import tornado.httputil
import tornado.web
from tornado.routing import PathMatches, Rule

from tornado_app.callers import is_loopback_host

STATE_CHANGING = frozenset({"POST", "PUT", "PATCH", "DELETE"})
FORM_TYPES = ("application/x-www-form-urlencoded", "multipart/form-data", "text/plain")
CORS_METHODS = "GET, POST, PUT, DELETE, OPTIONS"
CORS_HEADERS = "Authorization, Content-Type, X-Request-Id"
CORS_EXPOSE = "X-Request-Id, X-Conversion-Warnings, Content-Disposition, Retry-After"
DEFAULT_PORTS = {"http": "80", "https": "443"}


def _split_host(host: str) -> tuple[str, str]:
    """``host[:port]`` (IPv6 in brackets) as (hostname, port); port '' when absent."""
    host = host.strip().lower()
    if host.startswith("["):
        name, _, rest = host[1:].partition("]")
        return name, rest[1:] if rest.startswith(":") else ""
    name, _, port = host.partition(":") if host.count(":") == 1 else (host, "", "")
    return name, port


def host_allowed(host: str, public_hosts: tuple[str, ...]) -> bool:
    """True when ``PUBLIC_HOSTS`` is empty, or lists this host name or host:port."""
    if not public_hosts:
        return True
    name, port = _split_host(host)
    full = f"{name}:{port}" if port else name
    return any(entry in (full, name) or _split_host(entry) == (name, port)
               for entry in public_hosts)


def normalise_origin(origin: str) -> str:
    return origin.strip().rstrip("/").lower()


def same_origin(origin: str, host: str, scheme: str) -> bool:
    """``Origin`` names the scheme and host the request was sent to (default ports ignored):
    ``https://h:p`` is another origin than the ``http://h:p`` this request came in on."""
    parts = urllib.parse.urlsplit(normalise_origin(origin))
    if parts.scheme not in DEFAULT_PORTS or not parts.netloc or not host:
        return False
    if parts.scheme != scheme.lower():
        return False
    o_name, o_port = _split_host(parts.netloc)
    h_name, h_port = _split_host(host)
    default = DEFAULT_PORTS[parts.scheme]
    return o_name == h_name and (o_port or default) == (h_port or default)


def origin_allowed(origin: str, request: tornado.httputil.HTTPServerRequest,
                   settings: Any) -> bool:
    """``origin`` is listed in ``ALLOWED_ORIGINS`` or is the origin ``request`` was sent to
    (``request.protocol`` is the connection's scheme, or what a trusted proxy says)."""
    return (normalise_origin(origin) in settings.allowed_origins
            or same_origin(origin, request.headers.get("Host", ""), request.protocol))


def host_refusal(request: tornado.httputil.HTTPServerRequest, settings: Any) -> str | None:
    """Why the ``Host`` header is not served here (checked before routing), or None."""
    host = request.headers.get("Host", "")
    if settings.docs_auth == "none":
        name, _ = _split_host(host)
        if is_loopback_host(name) or (settings.public_hosts
                                      and host_allowed(host, settings.public_hosts)):
            return None
        return ("this Host is not served here: with DOCS_AUTH=none only localhost, "
                "127.0.0.1 and [::1] are (and PUBLIC_HOSTS); open the service by one of "
                "those names")
    if not host_allowed(host, settings.public_hosts):
        return "this Host is not served here (PUBLIC_HOSTS)"
    return None


def host_refused(request: tornado.httputil.HTTPServerRequest, settings: Any) -> bool:
    """The ``Host`` header is not served here (see :func:`host_refusal`)."""
    return host_refusal(request, settings) is not None


def origin_refused(request: tornado.httputil.HTTPServerRequest, settings: Any) -> bool:
    """A state-changing request from another site (checked by every API handler, which
    answers 403 in its own failure shape)."""
    if request.method not in STATE_CHANGING:
        return False
    headers = request.headers
    origin = headers.get("Origin")
    if origin is not None:
        return not origin_allowed(origin, request, settings)
    if headers.get("Authorization"):
        return False
    ctype = headers.get("Content-Type", "").strip().lower()
    return settings.docs_auth == "none" and (not ctype or ctype.startswith(FORM_TYPES))


ORIGIN_REFUSED = ("cross-origin request refused: send it from this site, from an origin "
                  "listed in ALLOWED_ORIGINS, or with an Authorization header")


def cross_site_refused(request: tornado.httputil.HTTPServerRequest, settings: Any) -> bool:
    """A browser says the request comes from another site, and that site is not allowed."""
    if request.headers.get("Sec-Fetch-Site", "").lower() != "cross-site":
        return False
    origin = request.headers.get("Origin", "")
    return not (origin and origin_allowed(origin, request, settings))


STATE_CHANGING_GET_REFUSED = (
    "this GET changes state: send it with an Authorization header, or from this site's "
    "own pages (Sec-Fetch-Site: same-origin), or use POST")


def state_changing_get_refused(request: tornado.httputil.HTTPServerRequest) -> bool:
    """A GET that changes state without a credential header or ``Sec-Fetch-Site:
    same-origin``: what a cross-site page can trigger (``<img src>``, a link) under
    ``DOCS_AUTH=none``, where no credential would stop it."""
    if request.method != "GET" or request.headers.get("Authorization"):
        return False
    return request.headers.get("Sec-Fetch-Site", "").strip().lower() != "same-origin"


def add_cors_headers(handler: tornado.web.RequestHandler, settings: Any) -> None:
    """CORS response headers, only for an origin listed in ``ALLOWED_ORIGINS``."""
    if not settings.allowed_origins:
        return
    handler.add_header("Vary", "Origin")
    origin = handler.request.headers.get("Origin")
    if origin and normalise_origin(origin) in settings.allowed_origins:
        handler.set_header("Access-Control-Allow-Origin", origin.strip())
        handler.set_header("Access-Control-Expose-Headers", CORS_EXPOSE)


class MisdirectedHandler(tornado.web.RequestHandler):
    """Answers a request whose ``Host`` is not served here (nothing else runs for it)."""

    def initialize(self, message: str = "this Host is not served here") -> None:
        self.message = message

    def prepare(self) -> None:
        self.set_header("Content-Type", "application/json; charset=utf-8")
        self.set_header("Cache-Control", "no-store")
        self.set_header("X-Content-Type-Options", "nosniff")
        self.set_status(421)
        self.finish({"code": "MISDIRECTED_REQUEST", "message": self.message})


class PreflightHandler(tornado.web.RequestHandler):
    """CORS preflight: 204 with the allowed methods and headers for a listed origin."""

    def initialize(self, settings: Any) -> None:
        self.docs_settings = settings

    def options(self, *args: Any) -> None:
        origin = self.request.headers.get("Origin", "")
        self.set_header("Vary", "Origin")
        if normalise_origin(origin) in self.docs_settings.allowed_origins:
            self.set_header("Access-Control-Allow-Origin", origin.strip())
            self.set_header("Access-Control-Allow-Methods", CORS_METHODS)
            self.set_header("Access-Control-Allow-Headers", CORS_HEADERS)
            self.set_header("Access-Control-Max-Age", "600")
            self.set_status(204)
        else:
            self.set_status(403)
        self.finish()


_REGEX_SYNTAX = frozenset("\\.^$*+?{}[]|()")


def literal_path(pattern: str) -> str | None:
    """The one path a route pattern matches when it is plain text (``/api/auth/me``, or with
    punctuation escaped: ``/a\\-b``), else None (groups, classes, an unescaped ``.``)."""
    body = pattern[:-1] if pattern.endswith("$") and not pattern.endswith("\\$") else pattern
    out: list[str] = []
    escaped = False
    for char in body:
        if escaped:
            if char.isalnum():  # \d, \w, \A...: a class or an anchor, not a character
                return None
            out.append(char)
            escaped = False
        elif char == "\\":
            escaped = True
        elif char in _REGEX_SYNTAX:
            return None
        else:
            out.append(char)
    return None if escaped else "".join(out)


@dataclass(frozen=True)
class _PathOnly:
    """What a path matcher reads of a request: its path (to test a route at start-up)."""

    path: str


def exact_routes(rules: list[Rule]) -> dict[str, Rule]:
    """Route rules by the one path each matches, for the rules that are plain text, lead to
    a handler class, and whose path no earlier rule takes: a request for that path reaches
    the same rule as the walk down the table would, without the walk (the table is walked
    for every other path). Empty unless every rule matches on the path alone."""
    if not all(isinstance(rule.matcher, PathMatches) for rule in rules):
        return {}
    table: dict[str, Rule] = {}
    for index, rule in enumerate(rules):
        matcher = rule.matcher
        assert isinstance(matcher, PathMatches)
        path = literal_path(matcher.regex.pattern)
        if (path is None or path in table or not isinstance(rule.target, type)
                or not issubclass(rule.target, tornado.web.RequestHandler)
                or matcher.match(_PathOnly(path)) != {}):  # type: ignore[arg-type]
            continue
        if any(earlier.matcher.match(_PathOnly(path)) is not None  # type: ignore[arg-type]
               for earlier in rules[:index]):
            continue
        table[path] = rule
    return table


class GuardedApplication(tornado.web.Application):
    """The Tornado application with the Host check and CORS preflights in front of the
    route table (the Origin check runs in the handlers, so each answers in its shape).

    Paths that name one route exactly (``/health``, ``/api/auth/me``) are found in a
    dictionary (:func:`exact_routes`) instead of by trying each earlier route's pattern."""

    _exact: dict[str, Rule] | None = None
    _exact_from: tuple[int, int] = (-1, -1)  # the rule counts the dictionary was made from

    def _exact_rule(self, path: str) -> Rule | None:
        """The rule a request for ``path`` reaches, when a dictionary look-up tells (None:
        walk the table). Made again when rules were added since (``add_handlers``)."""
        counts = (len(self.default_router.rules), len(self.wildcard_router.rules))
        if self._exact is None or counts != self._exact_from:
            self._exact_from = counts
            # only the wildcard table: host-specific rules (add_handlers) come before it
            self._exact = exact_routes(self.wildcard_router.rules) if counts[0] == 1 else {}
        return self._exact.get(path)

    def find_handler(self, request: tornado.httputil.HTTPServerRequest,
                     **kwargs: Any) -> Any:
        settings = self.settings["services"].settings
        refusal = host_refusal(request, settings)
        if refusal is not None:
            return self.get_handler_delegate(request, MisdirectedHandler,
                                             {"message": refusal})
        if (request.method == "OPTIONS" and settings.allowed_origins
                and "Access-Control-Request-Method" in request.headers):
            return self.get_handler_delegate(request, PreflightHandler, {"settings": settings})
        rule = self._exact_rule(request.path)
        if rule is not None:  # what RuleRouter.find_handler returns for this rule
            return self.get_handler_delegate(request, rule.target, rule.target_kwargs or None)
        return super().find_handler(request, **kwargs)
