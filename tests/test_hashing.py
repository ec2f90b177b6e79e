"""Password hashing stays off the event loop and a flood is refused, not queued forever."""

from __future__ import annotations

import asyncio
import threading

from tests.conftest import PASSWORD, add_user, login


async def test_password_hashing_runs_off_the_event_loop(api, services):
    await add_user(services, "ACME", "pete")
    threads: list[str] = []
    real = services.passwords.hasher

    class Spy:
        def verify(self, stored, password):
            threads.append(threading.current_thread().name)
            return real.verify(stored, password)

        def check_needs_rehash(self, stored):
            return real.check_needs_rehash(stored)

    services.passwords.hasher = Spy()
    assert await login(api, "ACME", "pete")
    assert threads and all(name.startswith("argon2") for name in threads)
    assert threading.main_thread().name not in threads


async def test_login_flood_beyond_queue_is_refused_not_stalled(api, services):
    await add_user(services, "ACME", "quinn")
    services.passwords.queue_limit = 0  # only the running hashes, nothing may wait
    replies = await asyncio.gather(*(
        api.call("POST", "/api/auth/login",
                 {"companyCode": "ACME", "username": f"flood{i}", "password": PASSWORD})
        for i in range(12)))
    statuses = sorted(r.status for r in replies)
    assert 429 in statuses and set(statuses) <= {401, 429}
    busy = next(r for r in replies if r.status == 429)
    assert busy.headers["Retry-After"] == "1"
