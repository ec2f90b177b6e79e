"""Companies (tenants): code used at login, integer id exposed as ``companyId``.

Codes are kept as entered and compared case-insensitively: ``codeKey`` (the case-folded
code) carries a unique index, so ``acme`` cannot be created beside ``ACME`` and either
spelling signs in to the one company."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

from motor.motor_asyncio import AsyncIOMotorDatabase
from pymongo import ASCENDING
from pymongo.errors import DuplicateKeyError

from store.mongo import next_id

log = logging.getLogger("store.companies")


@dataclass(frozen=True)
class Company:
    id: int
    code: str
    name: str


class CompanyExists(Exception):
    """A company with this code already exists."""


def code_key(code: str) -> str:
    """The form codes are compared in (codes are ASCII; case folding is enough)."""
    return code.casefold()


def _company(doc: dict[str, Any] | None) -> Company | None:
    return None if doc is None else Company(id=doc["_id"], code=doc["code"], name=doc["name"])


async def create_company(db: AsyncIOMotorDatabase, code: str, name: str) -> Company:
    """Insert a company; raises :class:`CompanyExists` when the code is taken, in any case."""
    company_id = await next_id(db, "companies")
    try:
        await db.companies.insert_one({"_id": company_id, "code": code,
                                       "codeKey": code_key(code), "name": name})
    except DuplicateKeyError as exc:
        raise CompanyExists(code) from exc
    return Company(company_id, code, name)


async def get_by_code(db: AsyncIOMotorDatabase, code: str) -> Company | None:
    """The company with login code ``code`` in any case, or None. An exact match wins (two
    old companies whose codes differ only in case each keep their own exact code)."""
    doc = await db.companies.find_one({"code": code})
    if doc is None:
        doc = await db.companies.find_one({"codeKey": code_key(code)})
    return _company(doc)


async def get_by_id(db: AsyncIOMotorDatabase, company_id: int) -> Company | None:
    return _company(await db.companies.find_one({"_id": company_id}))


async def rename(db: AsyncIOMotorDatabase, company_id: int, name: str) -> Company | None:
    """Set the display name; None when there is no such company. Callers evict the cached
    profiles afterwards (``SessionStore.evict_company``)."""
    if type(company_id) is not int or type(name) is not str:
        raise TypeError("company_id must be an int and name a str")
    doc = await db.companies.find_one_and_update(
        {"_id": company_id}, {"$set": {"name": name}}, return_document=True)
    return _company(doc)


async def count(db: AsyncIOMotorDatabase) -> int:
    """How many companies exist (0 on a first run)."""
    return await db.companies.count_documents({})


async def ensure_indexes(db: AsyncIOMotorDatabase) -> None:
    """The unique case-folded code index; companies stored before it get their key first.
    Two old companies whose codes fold together keep working: the later one's key gets its
    id appended (and a warning is logged), and each still signs in with its exact code."""
    seen: set[str] = set()
    async for doc in db.companies.find({"codeKey": {"$exists": False}}).sort("_id", ASCENDING):
        key = code_key(doc["code"])
        if key in seen or await db.companies.find_one({"codeKey": key}):
            log.warning("company code folds onto another one; kept apart by id",
                        extra={"company_id": doc["_id"]})
            key = f"{key}\x00{doc['_id']}"
        seen.add(key)
        await db.companies.update_one({"_id": doc["_id"]}, {"$set": {"codeKey": key}})
    await db.companies.create_index([("codeKey", ASCENDING)], unique=True)
