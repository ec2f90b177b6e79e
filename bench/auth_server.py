"""Server process for the auth benchmark: the real app (auth routes) run as ``serve`` runs
it (event loop and collector from :mod:`tornado_app.runtime`, chosen by ``EVENT_LOOP`` and
``GC_GEN0_THRESHOLD``), plus one baseline handler that does exactly one Redis GET."""

from __future__ import annotations

import asyncio
import logging
import sys

import tornado.web

from tornado_app.app import make_app
from tornado_app.runtime import run, settle_heap
from tornado_app.seed import ensure_company, ensure_user
from tornado_app.services import open_services
from tornado_app.settings import Settings


class OneRedisGet(tornado.web.RequestHandler):
    """The floor for an authenticated request: one Redis round trip, a small JSON answer."""

    async def get(self) -> None:
        svc = self.application.settings["services"]
        value = await svc.redis.get("ds:bench:probe")
        self.write({"code": "SUCCESS", "data": value})


async def main(settings: Settings, port: int, mongo_url: str, redis_url: str) -> None:
    logging.getLogger().setLevel(logging.WARNING)  # no access log lines: the same for all
    svc = await open_services(settings, mongo_url=mongo_url, redis_url=redis_url)
    company = await ensure_company(svc, "BENCH", "Bench")
    for i in range(20):
        await ensure_user(svc, company, {"username": f"user{i}", "password": "bench password",
                                         "role": "ADMIN"})
    app = make_app(svc, ("auth",))
    app.add_handlers(r".*", [(r"/bench/redis-get", OneRedisGet)])
    app.listen(port, address="127.0.0.1", xheaders=False)
    settle_heap(settings.gc_gen0_threshold)
    print("ready", flush=True)
    await asyncio.Event().wait()


if __name__ == "__main__":
    config = Settings.from_env()
    run(main(config, int(sys.argv[1]), sys.argv[2], sys.argv[3]), config.event_loop)
