"""``POST /proxy/download``: one object of the caller's company's storage, streamed."""

from __future__ import annotations

import re
import urllib.parse

from store.stored_content import attachment, stored_form
from tornado_app.documents.plain import PlainHandler
from tornado_app.documents.storage.storage_service import open_object, storage_of

_STORED_NAME = re.compile(r"filename\*=UTF-8''([^;\s]+)")


def download_name(key: str, stored_disposition: str) -> str:
    """The file name a download is saved as: the key's last part, or the name the stored
    ``Content-Disposition`` gives when the key is that name with ``.bin`` appended (an
    opaque object, ``store.stored_content.StoredForm.key``)."""
    base = key.rsplit("/", 1)[-1]
    found = _STORED_NAME.search(stored_disposition)
    name = urllib.parse.unquote(found.group(1)) if found else ""
    return name if name and base == f"{name}.bin" else base


class ProxyDownloadHandler(PlainHandler):
    """Streams one object of the caller's company in the configured storage, as an attachment
    with ``nosniff`` (never rendered inline), with the type the one storage decision
    (:func:`store.stored_content.stored_form`) gives its name, stored type and first bytes:
    an object stored before that decision as SVG or HTML goes out as
    ``application/octet-stream``. Any other host, bucket or company answers like a missing
    one."""

    async def post(self) -> None:
        fields, _ = await self.form()
        key, stream = await open_object(self.services, self.company_id,
                                        (fields.get("key") or "").strip(),
                                        (fields.get("url") or "").strip())
        io = storage_of(self.services).io
        try:
            iterator = stream.chunks()
            chunk = await io(next, iterator, None)
            name = download_name(key, stream.disposition)
            form = stored_form(name, stream.content_type, chunk or b"")
            self.set_header("Content-Type", form.content_type)
            if stream.length is not None:
                self.set_header("Content-Length", str(stream.length))
            self.set_header("Content-Disposition", attachment(name))
            self.set_header("X-Content-Type-Options", "nosniff")
            while True:
                if chunk is None:
                    break
                self.write(chunk)
                await self.flush()
                chunk = await io(next, iterator, None)
        finally:
            stream.close()
        self.finish()
