"""Users, always addressed within one company: no function here can reach another tenant.

Every query carries ``companyId``; a user of another company is indistinguishable from a
missing one. Values reaching queries are plain ``str``/``int`` (the HTTP layer type-checks),
and the functions assert that again so an operator object can never become a filter.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

from motor.motor_asyncio import AsyncIOMotorDatabase
from pymongo import ASCENDING, ReturnDocument
from pymongo.errors import DuplicateKeyError

from store.mongo import next_id
from store.usernames import username_key

log = logging.getLogger("store.users")

ROLES = ("ADMIN", "REVIEWER", "ANNOTATOR")
STATUSES = ("ACTIVE", "DISABLED")


@dataclass(frozen=True)
class User:
    id: int
    company_id: int
    username: str
    real_name: str
    role: str
    status: str
    password_hash: str

    def public(self) -> dict[str, Any]:
        """The user as the API shows it (never the hash)."""
        return {
            "id": self.id, "username": self.username, "realName": self.real_name,
            "role": self.role, "status": self.status, "companyId": self.company_id,
        }


class UsernameExists(Exception):
    """The username is taken within this company."""


def _user(doc: dict[str, Any] | None) -> User | None:
    return None if doc is None else _user_of(doc)


def _user_of(doc: dict[str, Any]) -> User:
    return User(
        id=doc["_id"], company_id=doc["companyId"], username=doc["username"],
        real_name=doc.get("realName", ""), role=doc["role"], status=doc["status"],
        password_hash=doc["passwordHash"],
    )


def _check(company_id: int, *strings: str | None) -> None:
    if type(company_id) is not int:
        raise TypeError("company_id must be an int")
    for s in strings:
        if s is not None and type(s) is not str:
            raise TypeError("query values must be plain strings")


async def create_user(
    db: AsyncIOMotorDatabase, *, company_id: int, username: str, password_hash: str,
    real_name: str, role: str, status: str = "ACTIVE",
) -> User:
    """Insert a user; :class:`UsernameExists` when the name, or one that looks like it
    (same :func:`store.usernames.username_key`), is taken in this company."""
    _check(company_id, username, real_name, role, status)
    user_id = await next_id(db, "users")
    doc = {
        "_id": user_id, "companyId": company_id, "username": username,
        "usernameKey": username_key(username),
        "realName": real_name, "role": role, "status": status, "passwordHash": password_hash,
    }
    try:
        await db.users.insert_one(doc)
    except DuplicateKeyError as exc:
        raise UsernameExists(username) from exc
    return _user_of(doc)


async def get_user(db: AsyncIOMotorDatabase, company_id: int, user_id: int) -> User | None:
    """The user ``user_id`` of company ``company_id``, or None (also for other tenants)."""
    _check(company_id)
    if type(user_id) is not int:
        raise TypeError("user_id must be an int")
    return _user(await db.users.find_one({"_id": user_id, "companyId": company_id}))


async def find_by_username(
    db: AsyncIOMotorDatabase, company_id: int, username: str
) -> User | None:
    """The user whose name is ``username`` or looks like it (``Admin``, fullwidth letters)."""
    _check(company_id, username)
    return _user(await db.users.find_one(
        {"companyId": company_id, "usernameKey": username_key(username)}))


async def ensure_indexes(db: AsyncIOMotorDatabase) -> None:
    """The unique canonical-key index; users stored before it existed get their key first.
    Two old users whose names fold together keep working: the later one's key gets its id
    appended (and a warning is logged), so the index can still be built."""
    seen: set[tuple[int, str]] = set()
    async for doc in db.users.find({"usernameKey": {"$exists": False}}).sort("_id", ASCENDING):
        key = username_key(doc["username"])
        if (doc["companyId"], key) in seen or await db.users.find_one(
                {"companyId": doc["companyId"], "usernameKey": key}):
            log.warning("username folds onto another one; kept apart by id",
                        extra={"user_id": doc["_id"]})
            key = f"{key}\x00{doc['_id']}"
        seen.add((doc["companyId"], key))
        await db.users.update_one({"_id": doc["_id"]}, {"$set": {"usernameKey": key}})
    await db.users.create_index([("companyId", ASCENDING), ("usernameKey", ASCENDING)],
                                unique=True)


async def set_password_hash(
    db: AsyncIOMotorDatabase, company_id: int, user_id: int, password_hash: str
) -> User | None:
    """Store a new password hash; None when no such user in this company."""
    return await update_fields(db, company_id, user_id, {"passwordHash": password_hash})


async def list_users(
    db: AsyncIOMotorDatabase, company_id: int, *, role: str | None, status: str | None,
    page: int, page_size: int,
) -> tuple[list[User], int]:
    """One page of the company's users ordered by id, and the total matching the filters."""
    _check(company_id, role, status)
    query: dict[str, Any] = {"companyId": company_id}
    if role is not None:
        query["role"] = role
    if status is not None:
        query["status"] = status
    total = await db.users.count_documents(query)
    cursor = (
        db.users.find(query).sort("_id", ASCENDING).skip((page - 1) * page_size).limit(page_size)
    )
    return [_user_of(d) for d in await cursor.to_list(length=page_size)], total


async def update_fields(
    db: AsyncIOMotorDatabase, company_id: int, user_id: int, changes: dict[str, str]
) -> User | None:
    """Set ``changes`` on the user; None when no such user in this company."""
    _check(company_id, *changes.values())
    doc = await db.users.find_one_and_update(
        {"_id": user_id, "companyId": company_id}, {"$set": changes},
        return_document=ReturnDocument.AFTER,
    )
    return _user(doc)


async def count_active_admins(db: AsyncIOMotorDatabase, company_id: int) -> int:
    _check(company_id)
    return await db.users.count_documents(
        {"companyId": company_id, "role": "ADMIN", "status": "ACTIVE"}
    )
