"""Route table of the document conversion service."""

from __future__ import annotations

from typing import Any

from tornado_app.documents.batches.archive_handlers import (
    ProcessArchiveHandler,
    StageArchiveHandler,
    UploadArchiveHandler,
)
from tornado_app.documents.batches.folder_handlers import ConvertFolderHandler
from tornado_app.documents.convert import ConvertHandler
from tornado_app.documents.jobs import (
    JobCancelHandler,
    JobEventsHandler,
    JobHandler,
    JobsListHandler,
)
from tornado_app.documents.markdown import MarkdownConvertHandler, ThemesHandler
from tornado_app.documents.object_links import ROUTE as OBJECT_LINK_ROUTE
from tornado_app.documents.preview import MarkdownPreviewHandler
from tornado_app.documents.storage.config_handlers import (
    ConfigSnapshotHandler,
    StorageConfigHandler,
    StorageTestHandler,
    TimeCheckHandler,
)
from tornado_app.documents.storage.linkmap_handlers import LinkMapHandler
from tornado_app.documents.storage.profile_handlers import (
    LoadProfileHandler,
    ProfilesHandler,
    SaveProfileHandler,
)
from tornado_app.documents.storage.proxy_handlers import ObjectLinkHandler, ProxyDownloadHandler
from tornado_app.documents.webhook_secret import WebhookSecretHandler


def docs_routes() -> list[Any]:
    """Handlers of the conversion service."""
    return [
        (r"/api/convert", ConvertHandler),
        (r"/md/convert", MarkdownConvertHandler),
        (r"/md/themes", ThemesHandler),
        (r"/md/preview", MarkdownPreviewHandler),
        (r"/md/convert-folder", ConvertFolderHandler),
        (r"/api/upload-archive", UploadArchiveHandler),
        (r"/api/archive/stage", StageArchiveHandler),
        (r"/api/archive/process", ProcessArchiveHandler),
        (r"/api/jobs", JobsListHandler),
        (r"/api/jobs/([0-9a-f]+)", JobHandler),
        (r"/api/jobs/([0-9a-f]+)/cancel", JobCancelHandler),
        (r"/api/jobs/([0-9a-f]+)/events", JobEventsHandler),
        (r"/api/webhook-secret", WebhookSecretHandler),
        (r"/config", ConfigSnapshotHandler),
        (r"/config/storage", StorageConfigHandler),
        (r"/config/storage/test", StorageTestHandler),
        (r"/config/profiles", ProfilesHandler),
        (r"/config/save_profile", SaveProfileHandler),
        (r"/config/load_profile", LoadProfileHandler),
        (r"/config/linkmap", LinkMapHandler),
        (r"/system/time/check", TimeCheckHandler),
        (r"/proxy/download", ProxyDownloadHandler),
        (OBJECT_LINK_ROUTE, ObjectLinkHandler),
    ]
