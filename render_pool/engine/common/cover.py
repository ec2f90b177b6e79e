"""Cover page options shared by the DOCX and PDF writers of ``/md/convert``.

The service fills it from the form fields (``cover_url``/``cover_file``, ``logo_url``/``logo_file``,
``product_name`` ...); a writer prints a cover page only when :meth:`CoverPage.is_empty` is false.
"""

from __future__ import annotations

from dataclasses import dataclass

from render_pool.engine.model import Resource


@dataclass
class CoverPage:
    """What goes on the cover: two optional images and five optional texts."""

    cover_image: Resource | None = None
    logo: Resource | None = None
    product_name: str = ""
    product_version: str = ""
    document_name: str = ""
    document_version: str = ""
    copyright_text: str = ""

    def is_empty(self) -> bool:
        """True when there is nothing to print, so writers skip the cover page entirely."""
        texts = (
            self.product_name, self.product_version, self.document_name,
            self.document_version, self.copyright_text,
        )
        return self.cover_image is None and self.logo is None and not any(
            t.strip() for t in texts
        )
