"""The download proxy: ``POST /proxy/download`` (one object of the caller's company's
storage) and ``GET /proxy/object/{company}/{token}/{key}`` (the service's own durable link
of one stored object, :mod:`.object_links`), both streamed the same way."""

from __future__ import annotations

import re
import urllib.parse

from store.objects import ObjectStream
from store.storage_io import StorageIO
from store.stored_content import attachment, stored_form
from tornado_app.api_errors import ApiError
from tornado_app.documents.base import DocsHandler
from tornado_app.documents.object_links import linked_key
from tornado_app.documents.plain import PlainError, PlainHandler
from tornado_app.documents.storage.storage_service import NO_SUCH_OBJECT, open_object, storage_of

_STORED_NAME = re.compile(r"filename\*=UTF-8''([^;\s]+)")


def download_name(key: str, stored_disposition: str) -> str:
    """The file name a download is saved as: the key's last part, or the name the stored
    ``Content-Disposition`` gives when the key is that name with ``.bin`` appended (an
    opaque object, ``store.stored_content.StoredForm.key``)."""
    base = key.rsplit("/", 1)[-1]
    found = _STORED_NAME.search(stored_disposition)
    name = urllib.parse.unquote(found.group(1)) if found else ""
    return name if name and base == f"{name}.bin" else base


async def send_object(handler: DocsHandler, io: StorageIO, key: str, stream: ObjectStream
                      ) -> None:
    """Stream an opened object to ``handler``'s client (and close it): an attachment with
    ``nosniff`` (never rendered inline), with the type the one storage decision
    (:func:`store.stored_content.stored_form`) gives its name, stored type and first bytes:
    an object stored before that decision as SVG or HTML goes out as
    ``application/octet-stream``."""
    try:
        iterator = stream.chunks()
        chunk = await io.io(next, iterator, None)
        name = download_name(key, stream.disposition)
        form = stored_form(name, stream.content_type, chunk or b"")
        handler.set_header("Content-Type", form.content_type)
        if stream.length is not None:
            handler.set_header("Content-Length", str(stream.length))
        handler.set_header("Content-Disposition", attachment(name))
        handler.set_header("X-Content-Type-Options", "nosniff")
        while chunk is not None:
            handler.write(chunk)
            await handler.flush()
            chunk = await io.io(next, iterator, None)
    finally:
        stream.close()
    handler.finish()


class ProxyDownloadHandler(PlainHandler):
    """Streams one object of the caller's company in the configured storage
    (:func:`send_object`). Any other host, bucket or company answers like a missing one."""

    async def post(self) -> None:
        fields, _ = await self.form()
        key, stream = await open_object(self.services, self.company_id,
                                        (fields.get("key") or "").strip(),
                                        (fields.get("url") or "").strip())
        await send_object(self, storage_of(self.services), key, stream)


class ObjectLinkHandler(DocsHandler):
    """``GET /proxy/object/{company}/{token}/{key}``: the object a service link names, to
    anyone holding the link (it is the credential: no sign-in, as a presigned link), streamed
    by :func:`send_object`. A forged or altered token, another company's, or an object gone
    answers HTTP 404 ``{"code":40401,"msg":"no such object","data":null}``."""

    async def prepare(self) -> None:
        self.check_origin()  # no caller: the token opens this one object only

    async def get(self, company_id: str, token: str, rel: str) -> None:
        try:
            storage_of(self.services)
            key = await linked_key(self.services, company_id, token, rel)
            if key is None:
                raise PlainError(404, NO_SUCH_OBJECT)
            key, stream = await open_object(self.services, company_id, key, "")
        except PlainError as exc:
            if exc.status == 404:
                raise ApiError(404, "NOT_FOUND", exc.error) from exc
            raise ApiError(503, "SERVICE_UNAVAILABLE", "storage unavailable; retry") from exc
        await send_object(self, storage_of(self.services), key, stream)
