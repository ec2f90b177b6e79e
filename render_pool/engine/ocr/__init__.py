"""Optical character recognition: words with boxes from a page image.

The engine (Tesseract 5 through its API, ``tesserocr``, or its command line:
:mod:`render_pool.engine.ocr.tesseract`) is kept behind this package: readers ask for
:func:`recognise` and get :class:`OcrPage` back, so the engine can be swapped without
touching the PDF layout reader.
"""

from render_pool.engine.ocr.tesseract import (
    OcrLine,
    OcrPage,
    OcrWord,
    available_languages,
    engine_name,
    recognise,
)

__all__ = ["OcrLine", "OcrPage", "OcrWord", "available_languages", "engine_name", "recognise"]
