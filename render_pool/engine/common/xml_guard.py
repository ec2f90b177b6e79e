"""The XML guard: an XML part of an uploaded package (DOCX, PPTX, XLSX, ODF, EPUB) may not
do what a DTD does. Refused with 40003, naming the part: entity declarations (expansion
bombs), internal DTD subsets, external DTDs (``SYSTEM``, and ``PUBLIC`` ids other than the
few standard ones EPUB books and OpenOffice.org's own parts name, which no parser here
loads), and references to entities no part declares (a parser that does not expand them
drops the text after them without a word). A bare ``<!DOCTYPE name>`` does nothing and is
allowed.

Why one module, and why the encoding first: the check must see the characters the parser
will see. A part in UTF-16 without a byte-order mark has a zero byte after every ASCII
character, so a byte scan for ``<!ENTITY`` misses it while the parser (expat, behind
openpyxl) reads it and expands the entity. The encoding is therefore detected the way the
XML spec's appendix F and the parsers do it (a BOM; UTF-32 and UTF-16 from where the zero
bytes fall; else the encoding declaration) and the check runs on the decoded text. An
encoding in which DTD markup might be written other than as ASCII bytes (UTF-7, EBCDIC, or a
name no parser knows) is refused: no office or EPUB producer writes one.
"""

from __future__ import annotations

import codecs
import re

from render_pool.errors import CorruptDocument

# encodings in which every ASCII character is its own single byte and no byte of a
# multi-byte character is one of ``<!>[&;"'``: the raw bytes show the markup as it is read
_ASCII_COMPATIBLE = frozenset({
    "utf-8", "ascii", "latin-1", "iso8859-2", "iso8859-3", "iso8859-4", "iso8859-5",
    "iso8859-6", "iso8859-7", "iso8859-8", "iso8859-9", "iso8859-10", "iso8859-11",
    "iso8859-13", "iso8859-14", "iso8859-15", "iso8859-16", "cp1250", "cp1251", "cp1252",
    "cp1253", "cp1254", "cp1255", "cp1256", "cp1257", "cp1258", "koi8-r", "koi8-u",
    "shift_jis", "cp932", "euc_jp", "gb2312", "gbk", "gb18030", "big5", "euc_kr", "cp949",
})
# public identifiers of the DTDs EPUB 2 books (XHTML, NCX, SVG, OPF, OEB 1.2) name; no
# parser here loads an external DTD, but only these are allowed, and only outside ``strict``
_STANDARD_PUBLIC = (b"-//W3C//DTD ", b"-//NISO//DTD ", b"-//IDPF//DTD ",
                    b"+//ISBN 0-9673008-1-9//DTD OEB ", b"-//OpenOffice.org//DTD ")
# the one kind ``strict`` allows: what OpenOffice.org and LibreOffice themselves write in a
# manifest, a Basic module or a formula ("Manifest.dtd", "module.dtd": a file name inside the
# package, which holds none, and any DTD file in it is checked like an XML part)
_OFFICE_PUBLIC = b"-//OpenOffice.org//DTD "
_PLAIN_FILE = re.compile(rb"[A-Za-z0-9_-][A-Za-z0-9._-]*\.dtd")
_PREDEFINED = frozenset({b"amp", b"lt", b"gt", b"quot", b"apos"})
_DECLARATION = re.compile(rb"<!(DOCTYPE|ENTITY)", re.I)
_NAME = re.compile(rb"\s+[^\s\[>\"']+\s*")
_KEYWORD = re.compile(rb"(SYSTEM|PUBLIC)(?=[\s\"'])", re.I)
_LITERAL = re.compile(rb"\s*(?:\"([^\"]*)\"|'([^']*)')\s*")
_SCHEME = re.compile(rb"\s*([A-Za-z][\w+.-]*):")
_REFERENCE = re.compile(rb"&([^\s&;<>\"'#][^\s&;<>\"']*);")
_ENCODING_DECL = re.compile(rb"<\?xml[^>]{0,200}?\sencoding\s*=\s*[\"']([^\"']{1,40})[\"']")
_BOMS = ((b"\x00\x00\xfe\xff", "utf-32-be"), (b"\xff\xfe\x00\x00", "utf-32-le"),
         (b"\xef\xbb\xbf", "utf-8"), (b"\xfe\xff", "utf-16-be"), (b"\xff\xfe", "utf-16-le"))
_XML_START = re.compile("[ \t\r\n]*<[A-Za-z_:?!\u0080-\uffff]")
_HTML_NAME = re.compile(r"\.(xhtml|html?)$", re.I)


def encoding_of(data: bytes) -> tuple[str, int, bool]:
    """The XML encoding of ``data`` as a Python codec name, the length of its byte-order
    mark, and whether the name comes from the encoding declaration. The same order as the
    parsers: a BOM; without one, UTF-32 or UTF-16 from the zero bytes around the first
    character (expat reads ``<`` alone this way, libxml2 ``<?``); EBCDIC's ``<?xm``; else
    the encoding declaration, else UTF-8. A declared name that is no known codec comes back
    as it was written."""
    for bom, name in _BOMS:
        if data.startswith(bom):
            return name, len(bom), False
    head = data[:4]
    if len(head) == 4 and head[:3] == b"\x00\x00\x00" and head[3]:
        return "utf-32-be", 0, False
    if len(head) == 4 and head[0] and head[1:] == b"\x00\x00\x00":
        return "utf-32-le", 0, False
    if head[:1] == b"\x00":
        return "utf-16-be", 0, False
    if len(head) >= 2 and head[1] == 0:
        return "utf-16-le", 0, False
    if head == b"\x4c\x6f\xa7\x94":
        return "cp037", 0, False  # EBCDIC, which libxml2 reads
    declared = _ENCODING_DECL.match(data, 0, 256)
    if declared is None:
        return "utf-8", 0, False
    label = declared.group(1).decode("ascii", "replace").strip()
    try:
        return codecs.lookup(label).name, 0, True
    except LookupError:
        return label, 0, True


def _markup(data: bytes, where: str) -> bytes:
    """``data`` as bytes in which the markup shows as ASCII (the bytes themselves, or the
    decoded text in UTF-8); CorruptDocument for an encoding that cannot be checked."""
    codec, bom, declared = encoding_of(data)
    if codec in _ASCII_COMPATIBLE:
        return data
    if codec.startswith(("utf-16", "utf-32")):
        if declared:  # an 8-bit start declaring a 16-bit encoding: both parsers fail, and
            # libxml2 switches to it after the declaration, so the rest is unreadable here
            raise CorruptDocument(f"{where} declares {codec} but is not written in it; "
                                  "refused.")
        return data[bom:].decode(codec, "replace").encode("utf-8", "replace")
    raise CorruptDocument(f"{where} is encoded in {codec}, which is not read here (XML parts "
                          "must be UTF-8 or UTF-16); refused.")


def looks_like_xml(data: bytes) -> bool:
    """Whether ``data`` could be read as XML by any parser, whatever its name: it declares an
    encoding, or starts (after a BOM and white space, in its detected encoding) with ``<``
    and a name, ``?`` or ``!``. Nothing else is well-formed XML, so nothing else needs the
    check (an encrypted ODF part named ``content.xml`` is not XML)."""
    codec, bom, declared = encoding_of(data)
    if declared:
        return True
    head = data[bom:bom + 64]
    text = head.decode("latin-1") if codec in _ASCII_COMPATIBLE else \
        codecs.decode(head, codec, "replace")
    return _XML_START.match(text) is not None


def _known_dtd(kind: bytes, literals: list[bytes], strict: bool) -> bool:
    """Whether an external DTD named by ``kind`` (PUBLIC or SYSTEM) and its literals is one
    of the standard ones allowed (see ``_STANDARD_PUBLIC`` and ``_OFFICE_PUBLIC``)."""
    if kind == b"SYSTEM":
        return not strict and literals == [b"about:legacy-compat"]  # XHTML5 from XML tools
    if not literals:
        return False
    system = literals[1] if len(literals) == 2 else b""
    if strict:
        return literals[0].startswith(_OFFICE_PUBLIC) and _PLAIN_FILE.fullmatch(system) is not None
    scheme = _SCHEME.match(system)
    return literals[0].startswith(_STANDARD_PUBLIC) and (
        scheme is None or scheme.group(1).lower() in (b"http", b"https"))


def _doctype(text: bytes, pos: int, where: str, strict: bool) -> int:
    """Read the DOCTYPE whose ``<!DOCTYPE`` ends at ``pos``: the position after its ``>``, or
    CorruptDocument when it names an external DTD other than a standard one
    (:func:`_known_dtd`), has an internal subset or cannot be read. Each byte is looked at
    once."""
    name = _NAME.match(text, pos)
    if name is None:
        raise CorruptDocument(f"{where} has a DOCTYPE that cannot be read; refused.")
    pos = name.end()
    keyword = _KEYWORD.match(text, pos)
    if keyword is not None:
        kind = keyword.group(1).upper()
        literals: list[bytes] = []
        pos = keyword.end()
        for _ in range(2 if kind == b"PUBLIC" else 1):
            literal = _LITERAL.match(text, pos)
            if literal is None:
                break
            literals.append(literal.group(1) if literal.group(1) is not None
                            else literal.group(2))
            pos = literal.end()
        if not _known_dtd(kind, literals, strict):
            raise CorruptDocument(f"{where} names an external DTD "
                                  f"({kind.decode()}); refused.")
    if text[pos:pos + 1] == b"[":
        raise CorruptDocument(f"{where} has an internal DTD subset; refused.")
    if text[pos:pos + 1] != b">":
        raise CorruptDocument(f"{where} has a DOCTYPE that cannot be read; refused.")
    return pos + 1


def check_xml(data: bytes, where: str, *, strict: bool = False, html: bool = False) -> None:
    """Refuse (CorruptDocument, 40003) an XML part that does what a DTD does (see the module
    doc); ``where`` names it in the message ("A part of the DOCX package (word/x.xml)").

    ``strict``: for parts another program parses, whose parser we do not control
    (LibreOffice): of the external DTDs, only the ones OpenOffice.org writes itself, named by
    a plain file name (``"Manifest.dtd"``). ``html``: the part is read
    by the HTML parser (an EPUB chapter), which knows the HTML entities (``&nbsp;``), so
    entity references are not checked."""
    text = _markup(data, where)
    pos = 0
    # each scan starts with a byte search (memchr: a fraction of a regular expression's
    # scan): a part without ``!`` holds no ``<!``, one without ``&`` no reference
    has_declarations = b"!" in text  # once: a byte search to the first "!" each turn adds up
    while has_declarations and (found := _DECLARATION.search(text, pos)) is not None:
        if found.group(1).upper() == b"ENTITY":
            raise CorruptDocument(f"{where} declares an entity (a DTD's <!ENTITY); refused.")
        pos = _doctype(text, found.end(), where, strict)
    if html:
        return
    _check_references(text, where)


def _check_references(text: bytes, where: str) -> None:
    """Refuse a reference to an entity other than the predefined ones. Each ``&`` is found
    by a byte search and the reference read from there: a reference holds no other ``&``,
    so these are the references a scan of the whole text finds, in the same order."""
    at = text.find(b"&")
    while at >= 0:
        ref = _REFERENCE.match(text, at)
        if ref is not None and ref.group(1) not in _PREDEFINED:
            name = ref.group(1)[:40].decode("utf-8", "replace")
            raise CorruptDocument(f"{where} refers to an undeclared entity (&{name};); "
                                  "refused.")
        at = text.find(b"&", at + 1)


def is_html_name(name: str) -> bool:
    """Whether a part's name says the HTML parser reads it (``.xhtml``, ``.html``)."""
    return _HTML_NAME.search(name) is not None
