"""``python -m tornado_app convert``: documents converted from the command line, no servers.

The same readers and writers as ``POST /api/convert``, with the same options (one function
builds them: :func:`tornado_app.documents.convert.conversion_options`) and the same process
pool (:func:`tornado_app.documents.setup.pool_from_settings`: its time limit, memory bound
and reader limits per document, a scan's pages spread over the workers),
so a file converts here exactly as it does through the service. One file without ``-o``
prints its output; with ``-o DIR`` each input is written to ``DIR/<name>.<extension>``.
Failures are summed up with the service's error codes; the exit status is 1 when any file
failed, 2 for a wrong command line.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import TextIO

from render_pool.engine import jobs
from tornado_app.documents.base import DocsError, docs_error_for
from tornado_app.documents.conversion import read_and_write
from tornado_app.documents.convert import (
    OCR_MODES,
    check_convert_form,
    conversion_options,
    safe_basename,
)
from tornado_app.documents.setup import pool_from_settings
from tornado_app.settings import Settings

# what a folder walk picks up (a file named on the command line is always tried: its kind
# comes from its bytes, as in the service)
FOLDER_SUFFIXES = frozenset({
    ".pdf", ".docx", ".pptx", ".xlsx", ".odt", ".ods", ".odp", ".doc", ".xls", ".ppt",
    ".rtf", ".epub", ".html", ".htm", ".csv", ".png", ".jpg", ".jpeg", ".tif", ".tiff",
    ".webp"})
TENANT = "cli"  # the pool's fairness key: one caller here


@dataclass
class Failure:
    """An input that did not convert, with the service's code for it."""

    path: Path
    code: int
    message: str


@dataclass
class Outcome:
    """What a run converted and what failed."""

    written: list[Path] = field(default_factory=list)
    failures: list[Failure] = field(default_factory=list)
    warnings: dict[Path, list[str]] = field(default_factory=dict)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The ``convert`` command's arguments (the form fields of ``/api/convert``)."""
    parser.add_argument("inputs", nargs="+", type=Path, metavar="FILE",
                        help="documents, or folders to walk for documents")
    parser.add_argument("-o", "--output", type=Path, default=None, metavar="DIR",
                        help="write each output to DIR (needed for more than one input)")
    parser.add_argument("--export", default="markdown", choices=list(jobs.EXPORTS))
    parser.add_argument("--engine", default="word2markdown", choices=list(jobs.ENGINES))
    parser.add_argument("--ocr", default="auto", choices=list(OCR_MODES))
    parser.add_argument("--images", default="", choices=["", "embed", "placeholder", "omit"],
                        help="images as data URIs, placeholders or left out "
                        "(default: the export's own)")
    parser.add_argument("--track-changes", default="accept", choices=["accept", "all"])
    parser.add_argument("--include-furniture", action="store_true",
                        help="keep page headers and footers")
    parser.add_argument("--no-notes", action="store_true", help="leave slide notes out")
    parser.add_argument("--pages", default="", metavar="RANGES",
                        help="PDF and scans: read only these pages (1-3,7)")
    parser.add_argument("--page-markers", action="store_true",
                        help="Markdown and HTML: <!-- page N --> where each PDF page starts")
    parser.add_argument("--chunk-tokens", default="", metavar="N",
                        help="--export chunks: the budget of a chunk (default 512)")
    parser.add_argument("--chunk-overlap", default="", metavar="N",
                        help="--export chunks: tokens repeated from the chunk before (default 0)")
    parser.add_argument("--no-chunk-merge", action="store_true",
                        help="--export chunks: every heading starts a chunk")
    parser.add_argument("--chunk-tokenizer", default="", choices=["", "words", "chars"],
                        help="--export chunks: how tokens are counted (default words)")
    parser.add_argument("--progress", choices=["auto", "always", "never"], default="auto",
                        help="a progress bar on standard error (auto: when it is a terminal)")


def form_fields(args: argparse.Namespace) -> dict[str, str]:
    """The command line as the fields of an ``/api/convert`` form."""
    fields = {"export": args.export, "engine": args.engine, "ocr": args.ocr,
              "track_changes": args.track_changes,
              "include_furniture": "true" if args.include_furniture else "false",
              "notes": "false" if args.no_notes else "true"}
    if args.images:
        fields["images"] = args.images
    optional = {"pages": args.pages, "page_markers": "true" if args.page_markers else "",
                "chunk_tokens": args.chunk_tokens, "chunk_overlap": args.chunk_overlap,
                "chunk_merge": "false" if args.no_chunk_merge else "",
                "chunk_tokenizer": args.chunk_tokenizer}
    fields.update({name: value for name, value in optional.items() if value})
    return fields


def collect_inputs(paths: list[Path]) -> list[Path]:
    """Named files as given, folders walked (sorted, hidden entries skipped) for the
    suffixes of :data:`FOLDER_SUFFIXES`; a missing path is an error."""
    found: list[Path] = []
    for path in paths:
        if path.is_dir():
            found += sorted(p for p in path.rglob("*")
                            if p.is_file() and p.suffix.lower() in FOLDER_SUFFIXES
                            and not any(part.startswith(".")
                                        for part in p.relative_to(path).parts))
        elif path.is_file():
            found.append(path)
        else:
            raise FileNotFoundError(f"no such file or folder: {path}")
    return found


def output_names(inputs: list[Path], extension: str) -> dict[Path, str]:
    """One output file name per input, made unique (``report.md``, ``report-2.md``)."""
    taken: set[str] = set()
    names: dict[Path, str] = {}
    for path in inputs:
        stem = safe_basename(path.stem, "document")
        name, n = f"{stem}.{extension}", 1
        while name.lower() in taken:
            n += 1
            name = f"{stem}-{n}.{extension}"
        taken.add(name.lower())
        names[path] = name
    return names


class Progress:
    """A one-line progress bar (files done of all, failures, the current file)."""

    WIDTH = 30

    def __init__(self, total: int, stream: TextIO, enabled: bool) -> None:
        self.total, self.stream, self.enabled = total, stream, enabled
        self.done = self.failed = 0

    def step(self, path: Path, ok: bool) -> None:
        self.done += 1
        self.failed += not ok
        if not self.enabled:
            return
        filled = self.WIDTH * self.done // max(1, self.total)
        bar = "#" * filled + "-" * (self.WIDTH - filled)
        failed = f", {self.failed} failed" if self.failed else ""
        self.stream.write(f"\r[{bar}] {self.done}/{self.total}{failed} {path.name[:40]:<40}")
        if self.done == self.total:
            self.stream.write("\n")
        self.stream.flush()


async def convert_files(inputs: list[Path], fields: dict[str, str], settings: Settings,
                        output: Path | None, progress: Progress,
                        stdout: TextIO) -> Outcome:
    """Convert every input in the pool, as many at once as it has workers."""
    export, engine = check_convert_form(fields, {"file": ("input", b"")})
    options = conversion_options(fields, settings)
    extension = jobs.FILE_EXTENSIONS[export]
    names = output_names(inputs, extension)
    pool = pool_from_settings(settings, queue_limit=max(16, len(inputs)))
    outcome = Outcome()
    window = asyncio.Semaphore(pool.workers)

    async def one(path: Path) -> None:
        async with window:
            try:
                data = await asyncio.to_thread(path.read_bytes)
                if len(data) > settings.max_upload_bytes:
                    raise DocsError(41301, f"{len(data)} bytes is over the "
                                    f"{settings.max_upload_bytes}-byte upload limit")
                result = await read_and_write(pool, TENANT, data, export, engine, options,
                                              False)
            except Exception as exc:  # every failure is reported with its code
                error = docs_error_for(exc)
                code, message = (error.code, error.msg) if error else (50001, repr(exc))
                outcome.failures.append(Failure(path, code, message))
                progress.step(path, False)
                return
            if result.warnings:
                outcome.warnings[path] = list(result.warnings)
            if output is None:
                stdout.write(result.content)
            else:
                target = output / names[path]
                await asyncio.to_thread(target.write_text, result.content, "utf-8")
                outcome.written.append(target)
            progress.step(path, True)

    try:
        await asyncio.gather(*(one(path) for path in inputs))
    finally:
        pool.close(wait=False)
    return outcome


def summary(outcome: Outcome, total: int) -> str:
    """The closing lines: how many converted, each failure with its code, then what the
    converted files were warned about (the service answers these beside the content)."""
    lines = [f"{total - len(outcome.failures)} of {total} converted"
             + (f", {len(outcome.failures)} failed:" if outcome.failures else "")]
    lines += [f"  {f.path}: {f.code} {f.message}"
              for f in sorted(outcome.failures, key=lambda f: str(f.path))]
    return "\n".join([*lines, *warning_lines(outcome)])


def warning_lines(outcome: Outcome) -> list[str]:
    """``warning: FILE: TEXT`` for each warning of each converted file, in file order."""
    return [f"warning: {path}: {text}" for path in sorted(outcome.warnings, key=str)
            for text in outcome.warnings[path]]


def run_convert(args: argparse.Namespace, settings: Settings) -> int:
    """The ``convert`` command: 0 when every file converted, 1 when any failed, 2 for a
    command line that cannot run."""
    try:
        inputs = collect_inputs(args.inputs)
    except FileNotFoundError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if not inputs:
        print("error: no documents found", file=sys.stderr)
        return 2
    if args.output is None and len(inputs) > 1:
        print("error: more than one document: give -o DIR for their outputs", file=sys.stderr)
        return 2
    if args.output is not None:
        args.output.mkdir(parents=True, exist_ok=True)
    show = args.progress == "always" or (args.progress == "auto" and sys.stderr.isatty()
                                         and len(inputs) > 1)
    progress = Progress(len(inputs), sys.stderr, show)
    try:
        outcome = asyncio.run(convert_files(inputs, form_fields(args), settings, args.output,
                                            progress, sys.stdout))
    except DocsError as exc:
        print(f"error: {exc.msg}", file=sys.stderr)
        return 2
    if len(inputs) > 1 or outcome.failures:
        print(summary(outcome, len(inputs)), file=sys.stderr)
    elif outcome.warnings:
        print("\n".join(warning_lines(outcome)), file=sys.stderr)
    return 1 if outcome.failures else 0

