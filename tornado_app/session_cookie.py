"""The browser app's session cookie: one session for every tab of a browser.

A login (or the first setup) answers the session token in its body, as the spec says, and
also sets a cookie holding the same token (the same Redis session): ``HttpOnly`` (no script
reads it), ``SameSite=Strict`` (no other site's page makes the browser send it), ``Path=/``,
``Max-Age`` the session's lifetime, and ``Secure`` when the request came over HTTPS (the
connection's scheme, or ``X-Forwarded-Proto`` from a ``TRUSTED_PROXIES`` peer), where its name
also carries the ``__Host-`` prefix (no subdomain can set or shadow it). A new tab of the app
is signed in by the cookie; sign-out deletes the session, so every tab's next request
answers 401, and clears the cookie.

Who is calling (:func:`credential`): an ``Authorization`` header always wins and is used
exactly as before (scripts, API keys, the operator token); only without one is the cookie read.
A state-changing request (POST/PUT/PATCH/DELETE) authenticated by the cookie also needs, on
top of ``SameSite=Strict``:

- the header ``X-Requested-With: docservice`` (the app sends it on every request): another
  origin cannot add a custom header without a CORS preflight, which this service grants to no
  one for it, so a form or script elsewhere cannot make the browser send it;
- an ``Origin``, when the browser sends one, naming this service itself (``ALLOWED_ORIGINS``
  do not count here: they are for callers with their own credential).

Otherwise the request is refused (403) before any handler code runs.
"""

from __future__ import annotations

from http.cookies import CookieError

import tornado.httputil
import tornado.web

from tornado_app.api_errors import ApiError
from tornado_app.auth.fields import is_canonical_uuid
from tornado_app.guards import same_origin

COOKIE = "docservice_session"
SECURE_COOKIE = "__Host-docservice_session"  # over HTTPS: Secure, Path=/, no Domain
CSRF_HEADER = "X-Requested-With"
CSRF_VALUE = "docservice"
STATE_CHANGING = frozenset({"POST", "PUT", "PATCH", "DELETE"})

CSRF_REFUSED = ApiError(
    403, "FORBIDDEN", "a change sent with the browser's session cookie needs the header "
                      "X-Requested-With: docservice and no Origin but this site's own; "
                      "scripts send Authorization: Bearer <token> instead")


def is_https(request: tornado.httputil.HTTPServerRequest) -> bool:
    """The request came over HTTPS (``request.protocol`` already holds what a trusted proxy
    says: ``tornado_app.http.BaseHandler.initialize``)."""
    return request.protocol == "https"


def cookie_name(request: tornado.httputil.HTTPServerRequest) -> str:
    return SECURE_COOKIE if is_https(request) else COOKIE


def set_session_cookie(handler: tornado.web.RequestHandler, token: str,
                       max_age_seconds: int) -> None:
    """Set the session cookie on ``handler``'s answer (a login or the first setup)."""
    handler.set_cookie(cookie_name(handler.request), token, path="/", httponly=True,
                       samesite="Strict", secure=is_https(handler.request),
                       max_age=max_age_seconds)


def clear_session_cookie(handler: tornado.web.RequestHandler) -> None:
    """Expire the session cookie in the browser (sign-out; both names, either scheme)."""
    for name in (COOKIE, SECURE_COOKIE):
        if name in handler.request.cookies:
            handler.clear_cookie(name, path="/", httponly=True, samesite="Strict",
                                 secure=name == SECURE_COOKIE or is_https(handler.request))


def _cookie_token(request: tornado.httputil.HTTPServerRequest) -> str | None:
    try:
        cookies = request.cookies
    except CookieError:  # a header Python's parser refuses: no cookie, as for a browser
        return None
    morsel = cookies.get(cookie_name(request))
    return morsel.value if morsel is not None else None


def _origin_is_own(request: tornado.httputil.HTTPServerRequest) -> bool:
    origin = request.headers.get("Origin")
    return origin is None or same_origin(origin, request.headers.get("Host", ""),
                                         request.protocol)


def credential(request: tornado.httputil.HTTPServerRequest) -> str | None:
    """The ``Authorization`` header value the request authenticates with: its own header
    when it has one, else ``Bearer <session cookie>`` (after the checks above), else None.
    Raises 403 for a cookie-authenticated change that fails them."""
    header = request.headers.get("Authorization")
    if header:
        return header
    token = _cookie_token(request)
    if not token:
        return None
    if not is_canonical_uuid(token):  # a stale or forged cookie: like no credential
        return None
    if request.method in STATE_CHANGING and (
            request.headers.get(CSRF_HEADER, "").strip().lower() != CSRF_VALUE
            or not _origin_is_own(request)):
        raise CSRF_REFUSED
    return f"Bearer {token}"
