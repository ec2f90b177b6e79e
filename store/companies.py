"""Companies (tenants): code used at login, integer id exposed as ``companyId``."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from motor.motor_asyncio import AsyncIOMotorDatabase
from pymongo.errors import DuplicateKeyError

from store.mongo import next_id


@dataclass(frozen=True)
class Company:
    id: int
    code: str
    name: str


class CompanyExists(Exception):
    """A company with this code already exists."""


def _company(doc: dict[str, Any] | None) -> Company | None:
    return None if doc is None else Company(id=doc["_id"], code=doc["code"], name=doc["name"])


async def create_company(db: AsyncIOMotorDatabase, code: str, name: str) -> Company:
    """Insert a company; raises :class:`CompanyExists` when the code is taken."""
    company_id = await next_id(db, "companies")
    try:
        await db.companies.insert_one({"_id": company_id, "code": code, "name": name})
    except DuplicateKeyError as exc:
        raise CompanyExists(code) from exc
    return Company(company_id, code, name)


async def get_by_code(db: AsyncIOMotorDatabase, code: str) -> Company | None:
    """The company with login code ``code`` (exact, case-sensitive), or None."""
    return _company(await db.companies.find_one({"code": code}))


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
