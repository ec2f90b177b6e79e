"""``just bench``: run every benchmark section and print its table."""

from __future__ import annotations

import argparse
import importlib
import sys

SECTIONS = ["auth", "render", "archives", "convert", "jobs", "hostile", "ocr", "html_paths",
            "chunks", "request_cost", "scale", "docx_speed", "paged_ocr", "generated",
            "office_recall", "summary"]
# summary last: one table of the ratios the sections before it measured


def main() -> int:
    parser = argparse.ArgumentParser(prog="python -m bench")
    parser.add_argument("sections", nargs="*", default=SECTIONS)
    parser.add_argument("--quick", action="store_true", help="short runs (smoke test)")
    args = parser.parse_args()
    for name in args.sections:
        module = importlib.import_module(f"bench.{name.replace('-', '_')}")
        module.run(quick=args.quick)
    return 0


if __name__ == "__main__":
    sys.exit(main())
