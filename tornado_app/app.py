"""The route table: which handlers a process mounts, by service set."""

from __future__ import annotations

from typing import Any

import tornado.web

from tornado_app.auth.handlers import ROUTES as AUTH_ROUTES
from tornado_app.guards import GuardedApplication
from tornado_app.http import InFlight, NotFoundHandler, log_request
from tornado_app.openapi import openapi_routes
from tornado_app.ops import ROUTES as OPS_ROUTES
from tornado_app.ops import HealthHandler
from tornado_app.services import Services
from tornado_app.ui import default_static_dir, ui_routes

SERVICE_SETS = ("auth", "docs")


def parse_services(value: str) -> tuple[str, ...]:
    """``all`` or a comma list of ``auth``/``docs``."""
    if value.strip() in ("", "all"):
        return SERVICE_SETS
    chosen = tuple(dict.fromkeys(p.strip() for p in value.split(",") if p.strip()))
    unknown = [p for p in chosen if p not in SERVICE_SETS]
    if unknown or not chosen:
        raise ValueError(f"unknown service set(s): {', '.join(unknown) or value!r}")
    return chosen


def make_app(services: Services, mounted: tuple[str, ...] = SERVICE_SETS,
             **extra: Any) -> tornado.web.Application:
    """Build the Tornado application for ``services`` with the chosen route sets."""
    routes: list[Any] = [(r"/health", HealthHandler), *OPS_ROUTES, *openapi_routes()]
    if "auth" in mounted:
        from tornado_app.key_handlers import ROUTES as KEY_ROUTES

        routes += AUTH_ROUTES + KEY_ROUTES
    if "docs" in mounted:
        from tornado_app.documents.routes import docs_routes

        routes += docs_routes()
    routes += ui_routes(default_static_dir())
    return GuardedApplication(
        routes, services=services, default_handler_class=NotFoundHandler,
        log_function=log_request, xsrf_cookies=False, compress_response=True,
        inflight=InFlight(), **extra,
    )
