"""Store functions on every MongoDB we can reach: SecantusDB (real wire protocol),
mongomock-motor (in memory) and, when TEST_MONGO_URL is set, a real MongoDB."""

from __future__ import annotations

import asyncio
import os
import uuid

import pytest

from store import companies, indexes, mongo, users

BACKENDS = ["secantus", "mongomock", "mongodb"]


@pytest.fixture(params=BACKENDS)
def db(request, io_loop, mongo_server):
    if request.param == "mongodb":
        url = os.environ.get("TEST_MONGO_URL")
        if not url:
            pytest.skip("TEST_MONGO_URL not set: no real MongoDB to test against")
    elif request.param == "mongomock":
        url = "mongomock://"
    else:
        url = mongo_server.url
    client, database = mongo.connect(url, f"store_{uuid.uuid4().hex[:10]}")
    io_loop.run_sync(lambda: indexes.ensure_indexes(database))
    yield database
    if request.param != "mongomock":
        io_loop.run_sync(lambda: client.drop_database(database.name))
    client.close()


async def _company(db, code="ACME"):
    return await companies.create_company(db, code, f"{code} Ltd")


async def test_company_codes_unique_and_ids_increase(db):
    a = await _company(db, "A")
    b = await _company(db, "B")
    assert b.id > a.id
    with pytest.raises(companies.CompanyExists):
        await _company(db, "A")
    assert (await companies.get_by_code(db, "A")) == a
    assert (await companies.get_by_code(db, "a")) == a  # compared case-insensitively
    with pytest.raises(companies.CompanyExists):  # and unique under case folding
        await _company(db, "a")
    assert (await companies.get_by_code(db, "A")).code == "A"  # stored as entered
    assert (await companies.get_by_id(db, b.id)) == b


async def test_company_codes_stored_before_the_key_keep_working(db):
    """Old data without ``codeKey`` (even two codes differing only in case) survives the
    index migration: each signs in with its exact code, any case finds the first."""
    await db.companies.drop_index("codeKey_1")
    await db.companies.insert_many([{"_id": 901, "code": "Old", "name": "Old Ltd"},
                                    {"_id": 902, "code": "OLD", "name": "Older Ltd"}])
    await indexes.ensure_indexes(db)
    await indexes.ensure_indexes(db)  # idempotent
    assert (await companies.get_by_code(db, "old")).id == 901
    assert (await companies.get_by_code(db, "Old")).id == 901
    assert (await companies.get_by_code(db, "OLD")).id == 902
    with pytest.raises(companies.CompanyExists):
        await _company(db, "oLD")


async def test_usernames_unique_per_company_only(db):
    a, b = await _company(db, "A"), await _company(db, "B")
    u1 = await users.create_user(db, company_id=a.id, username="sam", password_hash="h",
                                 real_name="", role="ADMIN")
    with pytest.raises(users.UsernameExists):
        await users.create_user(db, company_id=a.id, username="sam", password_hash="h",
                                real_name="", role="ADMIN")
    u2 = await users.create_user(db, company_id=b.id, username="sam", password_hash="h",
                                 real_name="", role="ADMIN")
    assert u1.id != u2.id
    assert (await users.get_user(db, a.id, u2.id)) is None  # other tenant looks missing
    assert (await users.find_by_username(db, b.id, "sam")).id == u2.id


async def test_list_filters_paging_and_count(db):
    c = await _company(db)
    other = await _company(db, "OTHER")
    for i in range(7):
        await users.create_user(db, company_id=c.id, username=f"u{i}", password_hash="h",
                                real_name="", role="REVIEWER" if i < 3 else "ANNOTATOR")
    await users.create_user(db, company_id=other.id, username="x", password_hash="h",
                            real_name="", role="REVIEWER")
    items, total = await users.list_users(db, c.id, role="REVIEWER", status=None, page=1,
                                          page_size=2)
    assert total == 3 and [u.username for u in items] == ["u0", "u1"]
    items, total = await users.list_users(db, c.id, role=None, status="ACTIVE", page=4,
                                          page_size=2)
    assert total == 7 and [u.username for u in items] == ["u6"]


async def test_operator_values_never_reach_a_query(db):
    """A query operator or a wrong type where a value belongs is refused (the ignores below
    are the test: these calls are ill-typed on purpose)."""
    c = await _company(db)
    with pytest.raises(TypeError):
        await users.find_by_username(db, c.id, {"$ne": None})  # type: ignore[arg-type]  # on purpose
    with pytest.raises(TypeError):
        await users.list_users(db, c.id, role={"$gt": ""},  # type: ignore[arg-type]  # on purpose
                               status=None, page=1, page_size=1)
    with pytest.raises(TypeError):
        await users.get_user(db, str(c.id), 1)  # type: ignore[arg-type]  # on purpose


async def test_update_and_admin_count(db):
    c = await _company(db)
    u = await users.create_user(db, company_id=c.id, username="adm", password_hash="h",
                                real_name="", role="ADMIN")
    assert await users.count_active_admins(db, c.id) == 1
    updated = await users.update_fields(db, c.id, u.id, {"status": "DISABLED"})
    assert updated.status == "DISABLED"
    assert await users.count_active_admins(db, c.id) == 0
    assert await users.update_fields(db, c.id + 1000, u.id, {"status": "ACTIVE"}) is None


async def test_counter_is_atomic_under_concurrency(db):
    ids = await asyncio.gather(*(mongo.next_id(db, "users") for _ in range(50)))
    assert sorted(ids) == list(range(1, 51))


async def test_api_keys_are_hashed_scoped_to_their_company_and_die_on_revoke(db):
    import datetime as dt

    from store import api_keys

    a, b = await _company(db, "KA"), await _company(db, "KB")
    key, secret = await api_keys.create_key(db, company_id=a.id, name="ci", role="REVIEWER",
                                            created_by=None, expires_at=None)
    assert secret.startswith("dsk_") and key.prefix == secret[:12]
    found = await api_keys.find_by_secret(db, secret)
    assert found is not None and (found.company_id, found.role) == (a.id, "REVIEWER")
    assert (await api_keys.list_keys(db, a.id))[0].last_used_at is not None
    for wrong in (secret + "x", secret[:-1] + ("A" if secret[-1] != "A" else "B"), "dsk_",
                  "", secret.replace("dsk_", "DSK_"), "dsk_" + "\x00" * 43):
        assert await api_keys.find_by_secret(db, wrong) is None
    assert await api_keys.list_keys(db, b.id) == []
    assert not await api_keys.revoke_key(db, b.id, key.id)  # not another company's to revoke
    assert await api_keys.find_by_secret(db, secret) is not None
    assert await api_keys.revoke_key(db, a.id, key.id)
    assert await api_keys.find_by_secret(db, secret) is None
    _, old = await api_keys.create_key(
        db, company_id=a.id, name="old", role="ADMIN", created_by=None,
        expires_at=dt.datetime.now(dt.UTC) - dt.timedelta(minutes=1))
    assert await api_keys.find_by_secret(db, old) is None
    docs = await db.api_keys.find({}).to_list(None)
    assert docs and all(secret not in str(d) and old not in str(d) for d in docs)


async def test_look_alike_usernames_collide_on_the_canonical_key(db):
    c = await _company(db)
    await users.create_user(db, company_id=c.id, username="Admin", password_hash="h",
                            real_name="", role="ADMIN")
    for name in ("admin", "ADMIN", "\uff41\uff44\uff4d\uff49\uff4e", "\u0430dmin"):
        with pytest.raises(users.UsernameExists):
            await users.create_user(db, company_id=c.id, username=name, password_hash="h",
                                    real_name="", role="ADMIN")
    found = await users.find_by_username(db, c.id, "aDmIn")
    assert found is not None and found.username == "Admin"  # the display form as typed


async def test_users_stored_before_the_key_get_one(db):
    c = await _company(db)
    await db.users.drop_index("companyId_1_usernameKey_1")
    for i, name in enumerate(("old", "Old", "other")):  # two fold together
        await db.users.insert_one({"_id": 100 + i, "companyId": c.id, "username": name,
                                   "realName": "", "role": "ADMIN", "status": "ACTIVE",
                                   "passwordHash": "h"})
    await users.ensure_indexes(db)
    keys = {d["username"]: d["usernameKey"] async for d in db.users.find({})}
    assert keys["old"] == "old" and keys["other"] == "other"
    assert keys["Old"].startswith("old\x00")  # kept apart, the index could be built
    assert (await users.find_by_username(db, c.id, "OLD")).username == "old"


async def test_audit_query_filters_pages_and_tenants(db):
    from datetime import UTC, datetime, timedelta

    from store import audit

    await audit.ensure_indexes(db)
    now = datetime.now(UTC)
    docs = []
    for i in range(7):
        docs.append({"time": now - timedelta(minutes=i), "companyId": 1,
                     "action": "login" if i % 2 else "user.role", "outcome": "success",
                     "actor": {"id": 1, "username": "Boss", "key": "boss"},
                     "target": {"id": i, "username": f"u{i}", "key": f"u{i}"},
                     "address": "127.0.0.1", "detail": {}})
    docs.append({**docs[0], "companyId": 2})
    await db.audit.insert_many(docs)
    items, total = await audit.query(db, 1, page=1, page_size=3)
    assert total == 7 and [d["target"]["id"] for d in items] == [0, 1, 2]  # newest first
    items, total = await audit.query(db, 1, page=3, page_size=3)
    assert [d["target"]["id"] for d in items] == [6]
    _, total = await audit.query(db, 1, page=1, page_size=10, action="login")
    assert total == 3
    items, total = await audit.query(db, 1, page=1, page_size=10, actor="BOSS", target="U4")
    assert total == 1 and items[0]["target"]["id"] == 4
    _, total = await audit.query(db, 1, page=1, page_size=10,
                                 since=now - timedelta(minutes=2, seconds=30))
    assert total == 3
    _, total = await audit.query(db, 2, page=1, page_size=10)
    assert total == 1
