"""Operations endpoints: ``/metrics`` (Prometheus) and ``/ready`` (dependency checks).
``/health`` stays the spec's liveness answer (see ``tornado_app.app``).

Both reveal internals (routes, dependency errors), so they are served openly only on the
``METRICS_ADDRESS`` listener (default ``127.0.0.1:9108``, loopback only). On the main port
they answer only to the operator token (``DOCS_API_TOKEN``): 401 without it, and 404 (as
if not mounted) when no operator token is configured."""

from __future__ import annotations

import asyncio
import hmac
import logging
import os
from typing import TYPE_CHECKING, Any

import tornado.web

from render_pool.runtime.browser import find_chromium
from store.storage_settings import SERVICE
from tornado_app.api_errors import ApiError
from tornado_app.http import BaseHandler, NotFoundHandler, log_request
from tornado_app.metrics import CONTENT_TYPE

if TYPE_CHECKING:
    from tornado_app.services import Services

CHECK_TIMEOUT = 3.0  # per /ready probe; below common orchestrator probe timeouts, not a tunable
log = logging.getLogger("tornado_app.ops")


class OpsHandler(BaseHandler):
    """Open on the metrics listener; operator token only on the main port."""

    def initialize(self, open_access: bool = False, **kwargs: Any) -> None:
        super().initialize(**kwargs)
        self.open_access = open_access

    def prepare(self) -> None:
        super().prepare()
        if self.open_access:
            return
        from tornado_app.callers import bearer_value

        expected = self.services.settings.docs_api_token
        if not expected:
            raise ApiError(404, "NOT_FOUND", "no such endpoint")
        given = bearer_value(self.request.headers.get("Authorization"))
        if not hmac.compare_digest(given.encode("utf-8", "replace"), expected.encode("utf-8")):
            raise ApiError(401, "UNAUTHORIZED", "this endpoint needs the operator token",
                           {"WWW-Authenticate": 'Bearer realm="operator"'})


class MetricsHandler(OpsHandler):
    def get(self) -> None:
        self.set_header("Content-Type", CONTENT_TYPE)
        self.finish(self.services.metrics.render(self.services.pool))


async def _check(name: str, probe: Any) -> tuple[str, dict[str, Any]]:
    try:
        detail = await asyncio.wait_for(probe(), CHECK_TIMEOUT)
        return name, {"ok": True, "detail": detail or "ok"}
    except Exception as exc:  # every failure is a "not ready" answer, never a 500
        return name, {"ok": False, "detail": f"{type(exc).__name__}: {exc}"[:300]}


class ReadyHandler(OpsHandler):
    """200 when every dependency this process uses answers, else 503 with the details."""

    async def get(self) -> None:
        svc = self.services

        async def mongo() -> str:
            await svc.db.command("ping")
            return "ping ok"

        async def redis() -> str:
            await svc.redis.ping()
            return "ping ok"

        probes = [_check("mongodb", mongo), _check("redis", redis)]
        storage_io = svc.storage
        if storage_io is not None:
            async def storage() -> str:
                config = await storage_io.configs.active_config(SERVICE)
                if config is None:
                    raise RuntimeError("no service-wide storage configured")
                store = storage_io.store_for(config)
                exists = await storage_io.io(store.bucket_exists)
                if not exists:
                    raise RuntimeError(f"bucket {store.config.bucket} does not exist")
                return f"bucket {store.config.bucket} reachable"

            probes.append(_check("storage", storage))
        if svc.pool is not None:
            async def chromium() -> str:
                path = find_chromium(svc.settings.chromium_path)
                if not path or not os.access(path, os.X_OK):
                    raise RuntimeError("chromium not found (apt-get install chromium)")
                return path

            probes.append(_check("chromium", chromium))
        checks = dict(await asyncio.gather(*probes))
        ready = all(c["ok"] for c in checks.values())
        self.write_json(200 if ready else 503,
                        {"status": "ok" if ready else "degraded", "checks": checks})


class HealthHandler(BaseHandler):
    """Liveness: answers as soon as the process serves."""

    def get(self) -> None:
        self.write_json(200, {"status": "ok"})


ROUTES = [(r"/metrics", MetricsHandler), (r"/ready", ReadyHandler)]  # main port: operator only


def make_metrics_app(services: Services) -> tornado.web.Application:
    """The application of the ``METRICS_ADDRESS`` listener: ``/metrics``, ``/ready`` and
    ``/health``, open (bind it to loopback or an internal network only)."""
    return tornado.web.Application(
        [(r"/metrics", MetricsHandler, {"open_access": True}),
         (r"/ready", ReadyHandler, {"open_access": True}), (r"/health", HealthHandler)],
        services=services, default_handler_class=NotFoundHandler, log_function=log_request)


def parse_address(value: str) -> tuple[str, int] | None:
    """``METRICS_ADDRESS`` as (host, port); None for ``off``. ValueError when malformed."""
    value = value.strip()
    if value.lower() in ("", "off", "none", "0"):
        return None
    host, sep, port = value.rpartition(":")
    if not sep or not port.isdigit() or not 0 < int(port) < 65536:
        raise ValueError(f"METRICS_ADDRESS must be host:port or off, got {value!r}")
    return host.strip("[]") or "127.0.0.1", int(port)


def listen_metrics(services: Services, address: str) -> Any:
    """Start the metrics listener; None when it is off or its port is taken (logged: the
    service itself keeps running, only the metrics are missing)."""
    import tornado.httpserver

    where = parse_address(address)
    if where is None:
        return None
    server = tornado.httpserver.HTTPServer(make_metrics_app(services))
    try:
        server.listen(where[1], address=where[0])
    except OSError as exc:
        log.error("metrics listener not started", extra={"address": address,
                                                         "error": str(exc)})
        return None
    log.info("metrics listener", extra={"address": f"{where[0]}:{where[1]}"})
    return server
