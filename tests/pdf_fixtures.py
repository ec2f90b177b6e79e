"""PDF fixtures for the PDF reader tests.

Two kinds:
* Hand-written PDFs built in Python at test time (no tools needed): an image-only
  "scan", an encrypted file that needs a password, a corrupt file.
* Chromium-printed PDFs from the HTML sources in ``tests/data/pdf/generated/*.html``.
  They are committed next to their sources so tests never need Chromium; rebuild them with
  ``.venv/bin/python tests/pdf_fixtures.py build`` (needs /usr/bin/chromium).
"""

from __future__ import annotations

import base64
import subprocess
import sys
import tempfile
import zlib
from pathlib import Path

from render_pool.engine.model import Paragraph, Table, Text
from render_pool.engine.pdf.reader import read_pdf

DATA = Path(__file__).resolve().parent / "data" / "pdf"
GENERATED = DATA / "generated"
CHROMIUM = "/usr/bin/chromium"


def _pdf(objects: list[bytes], trailer_extra: bytes = b"") -> bytes:
    """Assemble numbered objects (1..n, the first is the catalog) with a correct xref."""
    out = bytearray(b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n")
    offsets = []
    for num, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % num + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    for off in offsets:
        out += b"%010d 00000 n \n" % off
    out += (b"trailer\n<< /Size %d /Root 1 0 R " % (len(objects) + 1)) + trailer_extra
    out += b">>\nstartxref\n%d\n%%%%EOF\n" % xref
    return bytes(out)


def _stream(dictionary: bytes, data: bytes) -> bytes:
    return b"<< " + dictionary + b" /Length %d >>\nstream\n" % len(data) + data + \
        b"\nendstream"


def text_pdf(pages: list[bytes], fonts: tuple[str, ...] = ("Helvetica", "Courier"),
             size: tuple[int, int] = (612, 792), encoding: bytes = b"") -> bytes:
    """A PDF of one page per content stream in ``pages`` (US Letter unless ``size``), the
    standard Type 1 ``fonts`` named /F1, /F2, ... in order (``encoding``, such as
    ``b"/WinAnsiEncoding"``, given to each)."""
    named = b" ".join(
        b"/F%d << /Type /Font /Subtype /Type1 /BaseFont /%s%s >>"
        % (i, font.encode(), b" /Encoding " + encoding if encoding else b"")
        for i, font in enumerate(fonts, start=1))
    objects: list[bytes] = [b"<< /Type /Catalog /Pages 2 0 R >>", b""]
    kids = []
    for content in pages:
        num = len(objects) + 1
        kids.append(b"%d 0 R" % num)
        objects.append(b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 %d %d] /Resources "
                       b"<< /Font << %s >> >> /Contents %d 0 R >>" % (*size, named, num + 1))
        objects.append(_stream(b"", content))
    objects[1] = b"<< /Type /Pages /Kids [%s] /Count %d >>" % (b" ".join(kids), len(pages))
    return _pdf(objects)


def scanned_pdf(pages: int = 2) -> bytes:
    """A PDF whose pages only hold a full-page raster image (like a scan): no text layer."""
    width, height = 120, 160
    rows = []
    for y in range(height):
        rows.append(bytes(v for x in range(width) for v in (x * 2 % 256, y % 256, (x + y) % 256)))
    pixels = zlib.compress(b"".join(rows))
    objects: list[bytes] = [b"<< /Type /Catalog /Pages 2 0 R >>", b""]
    kids = []
    for _ in range(pages):
        page_num = len(objects) + 1
        kids.append(b"%d 0 R" % page_num)
        objects.append(b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] "
                       b"/Resources << /XObject << /Im1 %d 0 R >> >> /Contents %d 0 R >>"
                       % (page_num + 1, page_num + 2))
        objects.append(_stream(
            b"/Type /XObject /Subtype /Image /Width %d /Height %d /ColorSpace /DeviceRGB "
            b"/BitsPerComponent 8 /Filter /FlateDecode" % (width, height), pixels))
        objects.append(_stream(b"", b"q 500 0 0 740 47 50 cm /Im1 Do Q"))
    objects[1] = b"<< /Type /Pages /Kids [%s] /Count %d >>" % (b" ".join(kids), pages)
    return _pdf(objects)


def encrypted_pdf() -> bytes:
    """A PDF protected by the standard security handler with a non-empty user password.

    The /O and /U entries are not derived from any password, so no password (the empty
    one included) opens it: exactly what a reader sees for a password-protected file.
    """
    o_hex = b"".join(b"%02x" % ((i * 37 + 11) % 256) for i in range(32))
    u_hex = b"".join(b"%02x" % ((i * 53 + 7) % 256) for i in range(32))
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] /Contents 4 0 R >>",
        _stream(b"", b"\x8a\x13\x07\x99\x01\x22garbled-ciphertext"),
        b"<< /Filter /Standard /V 1 /R 2 /Length 40 /P -44 /O <" + o_hex + b"> /U <"
        + u_hex + b"> >>",
    ]
    return _pdf(objects, b"/Encrypt 5 0 R /ID [<0123456789abcdef0123456789abcdef>"
                         b"<0123456789abcdef0123456789abcdef>] ")


def corrupt_pdf() -> bytes:
    """Starts like a PDF, then breaks off: no objects, no xref, no trailer."""
    return b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n1 0 obj\n<< /Type /Catalog /Pages 2 0 R\n" + \
        bytes(range(256)) * 4


def tagged_pdf(kind: str = "plain") -> bytes:
    """A one-page tagged PDF with two marked-content runs (MCID 0 and 1) and a structure
    tree shaped by ``kind``:

    * ``plain``: H1 -> MCID 0, P -> MCID 1 (an honest tree);
    * ``lying``: two P elements both claim MCID 0; MCID 1 belongs to no element;
    * ``dangling``: the only P points at MCID 7, which the page does not have;
    * ``cycle``: a Div whose kids include itself, and the H1 and P;
    * ``deep``: the H1 and P sit under a chain of 10,000 nested Div elements.
    """
    content = (b"/H1 <</MCID 0>> BDC BT /F1 18 Tf 72 720 Td (Annual Summary) Tj ET EMC\n"
               b"/P <</MCID 1>> BDC BT /F1 11 Tf 72 690 Td (Orphan text stays readable.) Tj "
               b"ET EMC\n")
    # 1 catalog, 2 pages, 3 page, 4 content, 5 font, 6 struct root, 7.. elements
    objects: list[bytes] = [
        b"<< /Type /Catalog /Pages 2 0 R /MarkInfo << /Marked true >> /StructTreeRoot 6 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] /StructParents 0 "
        b"/Resources << /Font << /F1 5 0 R >> >> /Contents 4 0 R >>",
        _stream(b"", content),
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
        b"",
    ]

    def elem(tag: bytes, parent: int, kids: bytes) -> int:
        objects.append(b"<< /Type /StructElem /S /%s /P %d 0 R /Pg 3 0 R /K %s >>"
                       % (tag, parent, kids))
        return len(objects)

    if kind == "plain":
        h1, p = elem(b"H1", 6, b"0"), elem(b"P", 6, b"1")
        roots, nums = [h1, p], b"[%d 0 R %d 0 R]" % (h1, p)
    elif kind == "lying":
        a, b = elem(b"P", 6, b"0"), elem(b"P", 6, b"0")
        roots, nums = [a, b], b"[%d 0 R null]" % a
    elif kind == "dangling":
        a = elem(b"P", 6, b"7")
        roots, nums = [a], b"[%d 0 R]" % a
    elif kind == "cycle":
        div = len(objects) + 1
        h1, p = div + 1, div + 2
        elem(b"Div", 6, b"[%d 0 R %d 0 R %d 0 R]" % (div, h1, p))
        elem(b"H1", div, b"0")
        elem(b"P", div, b"1")
        roots, nums = [div], b"[%d 0 R %d 0 R]" % (h1, p)
    elif kind == "deep":
        first = len(objects) + 1
        depth = 10_000
        for i in range(depth):
            parent = 6 if i == 0 else first + i - 1
            objects.append(b"<< /Type /StructElem /S /Div /P %d 0 R /K %d 0 R >>"
                           % (parent, first + i + 1))
        last = first + depth - 1
        objects[-1] = b"<< /Type /StructElem /S /Div /P %d 0 R /K [%d 0 R %d 0 R] >>" % (
            last - 1 if depth > 1 else 6, last + 1, last + 2)
        h1, p = elem(b"H1", last, b"0"), elem(b"P", last, b"1")
        roots, nums = [first], b"[%d 0 R %d 0 R]" % (h1, p)
    else:
        raise ValueError(kind)
    objects[5] = (b"<< /Type /StructTreeRoot /K [%s] /ParentTree << /Nums [0 %s] >> >>"
                  % (b" ".join(b"%d 0 R" % r for r in roots), nums))
    return _pdf(objects)


def dense_pdf(chars: int = 200_000, per_line: int = 200) -> bytes:
    """One tall page holding ``chars`` characters of text in lines of ``per_line``."""
    lines = chars // per_line
    word = b"lorem ipsum dolor sit amet consectetur "
    text = (word * (per_line // len(word) + 1))[:per_line]
    body = b"BT /F1 4 Tf 5 TL 10 %d Td\n" % (lines * 5 + 10) + b"".join(
        b"(%s) '\n" % text for _ in range(lines)) + b"ET\n"
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 600 %d] "
        b"/Resources << /Font << /F1 5 0 R >> >> /Contents 4 0 R >>" % (lines * 5 + 40),
        _stream(b"", body),
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Courier >>",
    ]
    return _pdf(objects)


def tagged_table_pdf(rows: int = 100, cols: int = 100) -> bytes:
    """A tagged page whose structure tree holds one Table of ``rows`` x ``cols`` cells, each
    cell's number drawn in its own marked-content run."""
    content = bytearray(b"BT /F1 3 Tf\n")
    for r in range(rows):
        for c in range(cols):
            mcid = r * cols + c
            content += (b"/TD <</MCID %d>> BDC 1 0 0 1 %d %d Tm (%d) Tj EMC\n"
                        % (mcid, 10 + c * 14, 1450 - r * 14, mcid))
    content += b"ET\n"
    return tagged_cells_pdf(bytes(content), [cols] * rows, media=(1420, 1460))


def tagged_cells_pdf(content: bytes, row_lengths: list[int], container: bytes = b"Table",
                     media: tuple[int, int] = (612, 792)) -> bytes:
    """A one-page tagged PDF: ``content`` draws marked-content runs MCID 0, 1, ... (font
    /F1, Helvetica) and the structure tree holds them, in that order, as the TD cells of TR
    rows of ``row_lengths`` cells under one ``container`` element (``Table``; ``Sect`` for
    rows a producer tagged without a Table)."""
    # 1 catalog, 2 pages, 3 page, 4 content, 5 font, 6 root, 7 container, 8 parent tree,
    # then the TRs and TDs
    objects: list[bytes] = [
        b"<< /Type /Catalog /Pages 2 0 R /MarkInfo << /Marked true >> /StructTreeRoot 6 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 %d %d] /StructParents 0 "
        b"/Resources << /Font << /F1 5 0 R >> >> /Contents 4 0 R >>" % media,
        _stream(b"", content),
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
        b"<< /Type /StructTreeRoot /K [7 0 R] /ParentTree 8 0 R >>",
        b"",  # the container
        b"",  # parent tree
    ]
    tr_nums = []
    td_nums: list[int] = []
    mcid = 0
    for length in row_lengths:
        tr = len(objects) + 1
        objects.append(b"")
        tr_nums.append(tr)
        kids = []
        for _ in range(length):
            objects.append(b"<< /Type /StructElem /S /TD /P %d 0 R /Pg 3 0 R /K %d >>"
                           % (tr, mcid))
            mcid += 1
            kids.append(len(objects))
            td_nums.append(len(objects))
        objects[tr - 1] = (b"<< /Type /StructElem /S /TR /P 7 0 R /K [%s] >>"
                           % b" ".join(b"%d 0 R" % k for k in kids))
    objects[6] = (b"<< /Type /StructElem /S /%s /P 6 0 R /K [%s] >>"
                  % (container, b" ".join(b"%d 0 R" % t for t in tr_nums)))
    objects[7] = b"<< /Nums [0 [%s]] >>" % b" ".join(b"%d 0 R" % t for t in td_nums)
    return _pdf(objects)


def internal_links_pdf() -> bytes:
    """Three untagged pages whose link annotations point inside the document.

    Page 1 holds a "Contents" heading and one link per line: to the "Results" heading of
    page 2 (an explicit /XYZ destination), to the "Summary" heading further down page 2 (a
    named destination), to page 2 as a whole (/Fit: its first heading), to page 3 (a GoTo
    action; that page has no heading), into the body text of page 2 (a GoTo action at a
    position with no heading) and to an external address. Pages 2 and 3 hold body text.
    """
    ordinal = ("first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth")

    def body(topic: str) -> list[bytes]:
        return [f"The {o} line about {topic} fills the page with ordinary words.".encode()
                for o in ordinal]

    def text(lines: list[tuple[int, int, bytes]]) -> bytes:
        out = bytearray()
        for size, y, words in lines:
            font = b"/F2" if size > 11 else b"/F1"
            out += b"BT %s %d Tf 72 %d Td (%s) Tj ET\n" % (font, size, y, words)
        return bytes(out)

    links = [(b"Read the results section.", 700), (b"Read the summary.", 680),
             (b"Open page two.", 660), (b"Open the appendix.", 640),
             (b"Jump into the middle of the text.", 620), (b"Visit the example site.", 600)]
    page1 = text([(20, 750, b"Contents")] + [(11, y, w) for w, y in links]
                 + [(11, 560 - 16 * n, b) for n, b in enumerate(body("contents"))])
    page2 = text([(20, 750, b"Results")]
                 + [(11, 720 - 16 * n, b) for n, b in enumerate(body("results"))]
                 + [(20, 500, b"Summary")]
                 + [(11, 470 - 16 * n, b) for n, b in enumerate(body("the summary"))])
    page3 = text([(11, 750 - 16 * n, b) for n, b in enumerate(body("the appendix"))])
    # 1 catalog, 2 pages, 3-5 pages, 6-8 contents, 9-10 fonts, 11.. annotations
    dests = {b"results": b"[4 0 R /XYZ 72 772 0]", b"summary": b"[4 0 R /XYZ 72 522 0]"}
    targets = [b"/Dest " + dests[b"results"], b"/Dest (summary)", b"/Dest [4 0 R /Fit]",
               b"/A << /S /GoTo /D [5 0 R /Fit] >>",
               b"/A << /S /GoTo /D [4 0 R /XYZ 72 650 0] >>",
               b"/A << /S /URI /URI (https://example.com/site) >>"]
    annots = [b"<< /Type /Annot /Subtype /Link /Rect [70 %d 320 %d] /Border [0 0 0] %s >>"
              % (y - 4, y + 11, t) for (_, y), t in zip(links, targets, strict=True)]
    first = 11
    refs = b" ".join(b"%d 0 R" % (first + i) for i in range(len(annots)))

    def page(contents: int, extra: bytes = b"") -> bytes:
        return (b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font "
                b"<< /F1 9 0 R /F2 10 0 R >> >> /Contents %d 0 R %s >>" % (contents, extra))

    objects = [
        b"<< /Type /Catalog /Pages 2 0 R /Names << /Dests << /Names [(summary) %s] >> >> >>"
        % dests[b"summary"],
        b"<< /Type /Pages /Kids [3 0 R 4 0 R 5 0 R] /Count 3 >>",
        page(6, b"/Annots [%s]" % refs), page(7), page(8),
        _stream(b"", page1), _stream(b"", page2), _stream(b"", page3),
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica-Bold >>",
        *annots,
    ]
    return _pdf(objects)


def tiny_png() -> bytes:
    """A 48x32 two-colour PNG (for the data-URI image of the HTML fixture)."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    import pypdfium2.raw as pdfium_c

    from render_pool.engine.pdf.png import encode_png  # local: the project package

    w, h = 48, 32
    buf = bytearray()
    for y in range(h):
        for x in range(w):
            buf += bytes((200, 40, 40)) if (x // 8 + y // 8) % 2 else bytes((40, 40, 200))
    return encode_png(bytes(buf), w, h, w * 3, pdfium_c.FPDFBitmap_BGR)


def build(names: list[str] | None = None) -> None:
    """Print every ``generated/*.html`` (or the given names) to PDF with Chromium."""
    for html in sorted(GENERATED.glob("*.html")):
        if names and html.stem not in names:
            continue
        source = html.read_text(encoding="utf-8")
        source = source.replace("{{TINY_PNG}}", "data:image/png;base64,"
                                + base64.b64encode(tiny_png()).decode("ascii"))
        with tempfile.TemporaryDirectory() as tmp:
            page = Path(tmp) / "page.html"
            page.write_text(source, encoding="utf-8")
            out = Path(tmp) / "out.pdf"
            subprocess.run(
                [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu",
                 "--disable-background-networking", "--no-first-run",
                 "--no-pdf-header-footer", f"--print-to-pdf={out}", page.as_uri()],
                check=True, capture_output=True, timeout=120)
            (GENERATED / f"{html.stem}.pdf").write_bytes(out.read_bytes())
            print("built", html.stem + ".pdf", out.stat().st_size, "bytes")


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "build":
        build(sys.argv[2:] or None)
    else:
        print(__doc__)


def lured_bomb_pdf(mb: int = 300) -> bytes:
    """A space bomb behind a 7-byte "lure" stream: a zlib header and the start of a stored
    block claiming 65,535 bytes, so that inflating the lure eats the next object (the bomb's
    ``stream`` keyword included) as its own data."""
    lure = b"\x78\x01\x00\xff\xff\x00\x00"
    bomb = space_bomb_pdf(mb)
    body = bomb[bomb.index(b"1 0 obj"):bomb.index(b"xref")]
    objects = [part.split(b"\n", 1)[1].rsplit(b"\nendobj", 1)[0]
               for part in body.split(b"endobj\n") if part.strip()]
    return _pdf([*objects[:3], _stream(b"/Filter /FlateDecode", lure), *objects[3:]])


def space_bomb_pdf(mb: int = 2048, layers: int = 1) -> bytes:
    """One page whose content stream is ``mb`` MB of spaces, Flate-compressed ``layers``
    times (about 1000:1 a layer: 2 GB of spaces is a 2 MB file)."""
    squeeze = zlib.compressobj(9)
    chunk = b" " * (1024 * 1024)
    packed = b"".join(squeeze.compress(chunk) for _ in range(mb)) + squeeze.flush()
    for _ in range(layers - 1):
        packed = zlib.compress(packed, 9)
    filters = b" ".join([b"/FlateDecode"] * layers)
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] "
        b"/Resources << /Font << /F1 5 0 R >> >> /Contents 4 0 R >>",
        _stream(b"/Filter [%s]" % filters, packed),
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Courier >>",
    ]
    return _pdf(objects)


def huge_image_pdf(width: int = 40_000, height: int = 40_000,
                   pixels: bytes = b"/ColorSpace /DeviceRGB /BitsPerComponent 8") -> bytes:
    """One page drawing an image that declares ``width`` x ``height`` pixels of the kind
    ``pixels`` says (RGB by default; its data is a few bytes: pdfium would allocate the whole
    bitmap before finding that out)."""
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] "
        b"/Resources << /XObject << /Im1 5 0 R >> >> /Contents 4 0 R >>",
        _stream(b"", b"q 500 0 0 740 47 50 cm /Im1 Do Q"),
        _stream(b"/Type /XObject /Subtype /Image /Width %d /Height %d %s "
                b"/Filter /FlateDecode" % (width, height, pixels),
                zlib.compress(b"\x00" * 1024)),
    ]
    return _pdf(objects)


def plain_text(node: object) -> str:
    """The text of a model node and everything under it, joined without separators."""
    if isinstance(node, Text):
        return node.text
    return "".join(plain_text(k) for k in getattr(node, "children", None) or [])


def table_texts(data: bytes) -> list[list[list[str]]]:
    """Every table the PDF reader finds in ``data``: rows of cells, each cell's paragraphs
    as one line of single-spaced text."""
    return [
        [[" ".join(" ".join(plain_text(b) for b in c.blocks if isinstance(b, Paragraph)).split())
          for c in row.cells]
         for row in block.rows]
        for block in read_pdf(data).blocks if isinstance(block, Table)
    ]
