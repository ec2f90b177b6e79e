"""Which server folders a caller may convert (``/md/convert-folder``, and its async job).

``FOLDER_ROOTS=ACME:/srv/acme;BETA:/srv/beta`` gives each company (by its code) its own
roots; a list of bare paths (the old global form) is the operator's, for the operator token
and ``DOCS_AUTH=none`` only (``Settings.folder_roots``). Only an ADMIN may convert a folder
(the handler's ``admin_methods``). A path outside the caller's roots gets exactly the answer
of a missing folder, so a company learns nothing of other companies' folders or of the
machine's file system.
"""

from __future__ import annotations

from pathlib import Path

from store import companies
from tornado_app.callers import LOCAL_COMPANY, OPERATOR_COMPANY
from tornado_app.services import Services

NOT_A_FOLDER = "folder_path is not a folder under your folder roots"


async def roots_for(svc: Services, company_id: str) -> tuple[Path, ...]:
    """The folder roots of the company ``company_id`` (a tenant id, or the operator's or the
    local user's pseudo-company)."""
    settings = svc.settings
    if company_id in (OPERATOR_COMPANY, LOCAL_COMPANY):
        return settings.folder_roots
    if not settings.company_folder_roots or not company_id.isdigit():
        return ()
    company = await companies.get_by_id(svc.db, int(company_id))
    return settings.company_folder_roots.get(company.code, ()) if company else ()


def folder_allowed(folder: Path, roots: tuple[Path, ...]) -> bool:
    """True when ``folder`` (resolved) is one of ``roots`` or under one."""
    real = folder.resolve()
    return any(real == r.resolve() or real.is_relative_to(r.resolve()) for r in roots)


async def allowed_folder(svc: Services, company_id: str, folder: Path) -> Path | None:
    """``folder`` resolved, when it is a folder under the company's roots; None otherwise
    (outside, missing or not a folder: one answer for all)."""
    real = folder.resolve()
    if not folder_allowed(real, await roots_for(svc, company_id)) or not real.is_dir():
        return None
    return real
