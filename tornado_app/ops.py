"""Operations endpoints: ``/metrics`` (Prometheus) and ``/ready`` (dependency checks).
``/health`` stays the spec's liveness answer (see ``tornado_app.app``)."""

from __future__ import annotations

import asyncio
import os
import shutil
from typing import Any

from store.storage_settings import SERVICE
from tornado_app.http import BaseHandler
from tornado_app.metrics import CONTENT_TYPE

CHECK_TIMEOUT = 3.0


class MetricsHandler(BaseHandler):
    def get(self) -> None:
        self.set_header("Content-Type", CONTENT_TYPE)
        self.finish(self.services.metrics.render(self.services.pool))


async def _check(name: str, probe: Any) -> tuple[str, dict[str, Any]]:
    try:
        detail = await asyncio.wait_for(probe(), CHECK_TIMEOUT)
        return name, {"ok": True, "detail": detail or "ok"}
    except Exception as exc:  # every failure is a "not ready" answer, never a 500
        return name, {"ok": False, "detail": f"{type(exc).__name__}: {exc}"[:300]}


class ReadyHandler(BaseHandler):
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
        if svc.storage is not None:
            async def storage() -> str:
                config = await svc.storage.configs.active_config(SERVICE)
                if config is None:
                    raise RuntimeError("no service-wide storage configured")
                store = svc.storage.store_for(config)
                exists = await svc.storage.io(store.bucket_exists)
                if not exists:
                    raise RuntimeError(f"bucket {store.config.bucket} does not exist")
                return f"bucket {store.config.bucket} reachable"

            probes.append(_check("storage", storage))
        if svc.pool is not None:
            async def chromium() -> str:
                path = svc.settings.chromium_path or shutil.which("chromium")
                if not path or not os.access(path, os.X_OK):
                    raise RuntimeError("chromium not found (apt-get install chromium)")
                return path

            probes.append(_check("chromium", chromium))
        checks = dict(await asyncio.gather(*probes))
        ready = all(c["ok"] for c in checks.values())
        self.write_json(200 if ready else 503,
                        {"status": "ok" if ready else "degraded", "checks": checks})


ROUTES = [(r"/metrics", MetricsHandler), (r"/ready", ReadyHandler)]
