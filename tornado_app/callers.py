"""Who is calling the docs face (minimal version of the tenancy branch; the identity branch
brings the full one: API keys, DOCS_AUTH, roles on routes). The contract both keep:
``DocsHandler.caller`` is set in ``prepare()`` before any handler code runs, and
``caller.company_id`` is the tenant handlers pass to services and stores."""

from __future__ import annotations

import hmac
from dataclasses import dataclass

from tornado_app.http import ApiError
from tornado_app.services import Services

OPERATOR_COMPANY = "_operator"
LOCAL_COMPANY = "_local"


@dataclass(frozen=True)
class Caller:
    """The caller of one docs request, as the handlers and services see it."""

    kind: str  # "session" | "api_key" | "operator" (DOCS_API_TOKEN) | "local" (DOCS_AUTH=none)
    company_id: str  # str(company id) for session/api_key; "_operator" / "_local" otherwise
    role: str  # "ADMIN" | "REVIEWER" | "ANNOTATOR"; operator and local act as ADMIN
    user_id: str | None = None
    key_id: str | None = None

    @property
    def is_admin(self) -> bool:
        return self.role == "ADMIN"


async def identify(svc: Services, header: str | None) -> Caller:
    """The caller behind an ``Authorization`` header: the operator token, else a session
    (its company is the tenant); with no header and no operator token configured, the local
    caller. 401 otherwise."""
    from tornado_app.auth.service import authenticate

    expected = svc.settings.docs_api_token
    scheme, _, value = (header or "").strip().partition(" ")
    value = value.strip() if scheme.lower() == "bearer" else ""
    if expected and value and hmac.compare_digest(value.encode("utf-8", "replace"),
                                                  expected.encode("utf-8")):
        return Caller("operator", OPERATOR_COMPANY, "ADMIN")
    if not header and not expected:
        return Caller("local", LOCAL_COMPANY, "ADMIN")
    try:
        principal = await authenticate(svc, header)
    except ApiError as exc:
        raise ApiError(401, "UNAUTHORIZED", "a valid API token or session is needed") from exc
    return Caller("session", str(principal.company_id), principal.role,
                  user_id=str(principal.user_id))
