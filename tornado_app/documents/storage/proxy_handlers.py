"""``POST /proxy/download``: one object of the caller's company's storage, streamed."""

from __future__ import annotations

from tornado_app.documents.markdown import content_disposition
from tornado_app.documents.plain import PlainHandler
from tornado_app.documents.storage.storage_service import open_object, storage_of


class ProxyDownloadHandler(PlainHandler):
    """Streams one object of the caller's company in the configured storage, as an attachment
    (never rendered inline); any other host, bucket or company answers like a missing one."""

    async def post(self) -> None:
        fields, _ = self.form()
        key, stream = await open_object(self.services, self.company_id,
                                        (fields.get("key") or "").strip(),
                                        (fields.get("url") or "").strip())
        io = storage_of(self.services).io
        try:
            self.set_header("Content-Type", stream.content_type or "application/octet-stream")
            if stream.length is not None:
                self.set_header("Content-Length", str(stream.length))
            self.set_header("Content-Disposition", content_disposition(key.rsplit("/", 1)[-1]))
            iterator = stream.chunks()
            while True:
                chunk = await io(next, iterator, None)
                if chunk is None:
                    break
                self.write(chunk)
                await self.flush()
        finally:
            stream.close()
        self.finish()
