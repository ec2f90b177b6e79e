"""``just soak`` (``python -m bench.soak``): a bounded mixed load against one service; the
run itself is in ``__main__``, its parts in the modules beside it."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DOCX_DIR = ROOT / "tests" / "data" / "docx" / "docling"
DOCX_FILES = ["lorem_ipsum.docx", "word_tables.docx", "unit_test_headers.docx",
              "docx_lists.docx", "tablecell.docx", "unit_test_formatting.docx"]
PDF_FILES = [ROOT / "tests" / "data" / "pdf" / "generated" / "report.pdf",
             ROOT / "tests" / "data" / "pdf" / "generated" / "lists_tables.pdf",
             ROOT / "tests" / "data" / "pdf" / "code_and_formula.pdf"]
COMPANY, ADMIN, ADMIN_PASSWORD = "SOAK", "admin", "soak admin password"
USER_PASSWORD = "soak user password"
GROWTH_LIMIT = 10.0  # percent, after warm-up
REQUEST_TIMEOUT = 180.0  # longer than the service's job limit: a timeout here is a hang
GRACE = 5.0  # seconds after a fault's recovery during which error answers are expected

