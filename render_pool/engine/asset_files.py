"""Assets the service hands to the pool by path: remote images, cover and logo of
``/md/convert`` are fetched into temporary files by the service and read here, in the
worker, so the service process never holds a whole image (nor pickles one to the worker).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from render_pool.engine.model import Resource


@dataclass
class AssetFile:
    """An asset in a file the service wrote (and removes after the job)."""

    path: str
    mime: str
    size: int = 0

    def load(self) -> Resource:
        """The asset's bytes as the document model's resource."""
        return Resource(Path(self.path).read_bytes(), self.mime)


def loaded(value: Any) -> Any:
    """``value`` with an :class:`AssetFile` read into a :class:`Resource` (else as is)."""
    return value.load() if isinstance(value, AssetFile) else value


def render_markdown_files(text: str, request: Any, fetched: dict[str, AssetFile],
                          refused: dict[str, str]) -> Any:
    """:func:`render_pool.engine.jobs.render_markdown` with its images, cover and logo given as
    files: read here, in the worker."""
    from render_pool.engine import jobs

    cover = request.cover
    if cover is not None:
        cover = dataclasses.replace(cover, cover_image=loaded(cover.cover_image),
                                    logo=loaded(cover.logo))
        request = dataclasses.replace(request, cover=cover)
    images = {src: loaded(asset) for src, asset in fetched.items()}
    return jobs.render_markdown(text, request, images, refused)
