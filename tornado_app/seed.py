"""Idempotent loading of companies and users from a seed file (``serve --seed``)."""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

from store import companies, users
from tornado_app.auth.fields import check_password, check_role, check_status, check_username
from tornado_app.services import Services

log = logging.getLogger("tornado_app.seed")


async def ensure_company(svc: Services, code: str, name: str) -> companies.Company:
    """The company with ``code``, created when missing."""
    existing = await companies.get_by_code(svc.db, code)
    if existing:
        return existing
    try:
        return await companies.create_company(svc.db, code, name)
    except companies.CompanyExists:
        found = await companies.get_by_code(svc.db, code)
        assert found is not None
        return found


async def ensure_user(svc: Services, company: companies.Company, spec: dict[str, Any]) -> bool:
    """Create the user unless the username exists in the company; True when created."""
    username = check_username(str(spec["username"]))
    if await users.find_by_username(svc.db, company.id, username):
        return False
    try:
        await users.create_user(
            svc.db, company_id=company.id, username=username,
            password_hash=await svc.passwords.hash(check_password(str(spec["password"]))),
            real_name=str(spec.get("realName", "")),
            role=check_role(str(spec.get("role", "ANNOTATOR"))),
            status=check_status(str(spec.get("status", "ACTIVE"))),
        )
    except users.UsernameExists:
        return False
    return True


async def load_seed(svc: Services, path: Path) -> dict[str, int]:
    """Apply a seed file; running it twice changes nothing the second time."""
    data = json.loads(path.read_text(encoding="utf-8"))
    created = {"companies": 0, "users": 0}
    for c in data.get("companies", []):
        before = await companies.get_by_code(svc.db, str(c["code"]))
        company = await ensure_company(svc, str(c["code"]), str(c.get("name", c["code"])))
        created["companies"] += before is None
        for u in c.get("users", []):
            created["users"] += await ensure_user(svc, company, u)
    log.info("seed applied", extra=created)
    return created
