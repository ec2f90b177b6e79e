"""Open the conversion service's own resources (process pool, storage) at start-up."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from datetime import timedelta
from typing import Any

from render_pool.engine.worker_setup import worker_setup
from render_pool.runtime.pool import RenderPool
from store.storage_config import StorageConfig
from store.storage_io import StorageIO
from store.storage_settings import EMBEDDED_PROFILE, SERVICE
from tornado_app.embedded.servers import Embedded, ensure_dir
from tornado_app.services import Services
from tornado_app.settings import Settings, child_environment

log = logging.getLogger("tornado_app.documents.setup")


def open_pool(svc: Services) -> RenderPool:
    """The bounded process pool sized from the settings (CPU count by default)."""
    svc.pool = pool_from_settings(svc.settings)
    return svc.pool


def pool_from_settings(st: Settings, queue_limit: int | None = None) -> RenderPool:
    """A render pool with every limit the settings give (the service's, and the command
    line's: ``queue_limit`` lets it queue a whole folder)."""
    return RenderPool(st.pool_workers, queue_limit=queue_limit or st.pool_queue_limit,
                      tenant_queue_limit=st.pool_queue_limit_per_company,
                      tenant_max_running=st.pool_tenant_max_running,
                      job_timeout=st.job_timeout_seconds,
                      memory_limit_mb=st.worker_memory_mb,
                      browser_limits={
                          "max_jobs": st.chromium_max_jobs,
                          "max_rss_mb": st.chromium_max_rss_mb,
                          "timeout_s": st.pdf_render_timeout,
                          "page_reuse_jobs": st.chromium_page_reuse_jobs,
                          "executable": st.chromium_path},
                      worker_setup=worker_setup(
                          reader_limits={
                              "table_max_rows": st.table_max_rows,
                              "office_max_text_cells": st.office_max_text_cells,
                              "office_max_sheet_cells": st.office_max_sheet_cells,
                              "embedded_images_max_bytes": st.embedded_images_max_mb * 1024**2},
                          engine_config=engine_config_from_settings(st)))


def engine_config_from_settings(st: Settings) -> dict[str, Any]:
    """The keyword arguments of :func:`render_pool.engine.config.configure` the settings
    give: the programs LibreOffice and OCR run, and the environment they may inherit."""
    return {"soffice_path": st.soffice_path, "office_sandbox": st.office_sandbox,
            "office_memory_mb": st.office_memory_mb,
            "ocr_engine": st.ocr_engine, "tessdata_dir": st.tessdata_prefix,
            "environment": child_environment()}


def storage_from_settings(st: Settings) -> StorageConfig | None:
    """The storage the ``S3_*`` settings name, or None when ``S3_ENDPOINT`` is not set."""
    if not st.s3_endpoint:
        return None
    return StorageConfig.from_form({
        "endpoint": st.s3_endpoint, "public": st.s3_public, "access": st.s3_access_key,
        "secret": st.s3_secret_key, "bucket": st.s3_bucket, "secure": st.s3_secure,
        "prefix": st.s3_prefix, "public_read": st.s3_public_read, "region": st.s3_region})


async def open_storage(svc: Services, embedded: Embedded | None) -> StorageIO:
    """Attach the storage manager. ``S3_*`` settings become the active configuration; with
    none, an embedded SeaweedFS starts (when ``embedded`` is given), is saved as the
    ``embedded`` profile and is active unless another storage was configured since."""
    manager = StorageIO(svc.db, presign_expiry=timedelta(
        seconds=svc.settings.presign_expiry_seconds))
    svc.storage = manager
    svc.extras.setdefault("closers", []).append(_closer(manager))
    env_config = storage_from_settings(svc.settings)
    if env_config is not None:
        await manager.configs.set_active(SERVICE, env_config)
        manager.trusted_endpoints.add(env_config.endpoint)
        if env_config.public_read:  # the operator asked for it: the one place it is applied
            try:
                await manager.io(manager.store_for(env_config).apply_bucket_policy)
            except Exception as exc:  # an unreachable storage must not stop the service
                log.warning("public-read policy not applied",
                            extra={"error": f"{type(exc).__name__}: {exc}"[:300]})
        log.info("storage from environment", extra={"endpoint": env_config.endpoint})
    elif embedded is not None:
        from tornado_app.embedded.seaweed import start_seaweed

        handle = await manager.io(start_seaweed, ensure_dir(svc.settings.data_dir / "s3"),
                                  buckets=[svc.settings.s3_bucket], persist_ports=True,
                                  weed=svc.settings.weed_bin or None)
        embedded.add(handle, "seaweedfs")
        config = StorageConfig.from_form({
            "endpoint": handle.endpoint, "access": handle.access, "secret": handle.secret,
            "bucket": svc.settings.s3_bucket, "secure": "false"})
        await manager.configs.save_profile(SERVICE, EMBEDDED_PROFILE, config)
        manager.trusted_endpoints.add(config.endpoint)
        configs = manager.configs
        if (await configs.active_config(SERVICE) is None
                or await configs.active_is_embedded(SERVICE)):
            await configs.set_active(SERVICE, config, embedded=True)
    return manager


def _closer(manager: StorageIO) -> Callable[[], Awaitable[None]]:
    """A closer for ``svc.extras["closers"]``: stops the storage threads."""
    async def close() -> None:
        manager.close()

    return close


async def open_docs_services(svc: Services, embedded: Embedded | None) -> None:
    """Attach the render pool and storage to ``svc``."""
    open_pool(svc)
    await open_storage(svc, embedded)
