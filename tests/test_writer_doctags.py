"""DocTags writer: our output and Docling's ground truth obey the same (small) grammar."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from render_pool.engine.doctags.writer import CODE_LANGUAGES, write_doctags
from render_pool.engine.model import (
    Code,
    CodeBlock,
    Document,
    Heading,
    Image,
    ListBlock,
    ListItem,
    Math,
    NoteRef,
    Paragraph,
    Table,
    TableCell,
    TableRow,
    Text,
)
from tests.model_samples import NASTY, P, full_document, rich_table, simple_table

CORPUS = Path(__file__).resolve().parents[2] / "shared" / "corpus"

# ----------------------------------------------------------------- the grammar checker
CELL_TOKENS = {"fcel", "ecel", "ched", "rhed", "srow", "lcel", "ucel", "xcel"}
VOID = CELL_TOKENS | {"nl", "page_break"}
CLASSIFICATIONS = {
    "other", "picture_group", "pie_chart", "bar_chart", "stacked_bar_chart", "line_chart",
    "flow_chart", "scatter_chart", "heatmap", "remote_sensing", "natural_image",
    "chemistry_molecular_structure", "chemistry_markush_structure", "icon", "logo", "signature",
    "stamp", "qr_code", "bar_code", "screenshot", "map", "stratigraphic_chart", "cad_drawing",
    "electrical_diagram",
}
LANG_TOKENS = {f"_{name}_" for name in CODE_LANGUAGES}
TEXT_LIKE = {"text", "title", "page_header", "page_footer", "footnote", "caption", "paragraph",
             "reference", "document_index", "checkbox_selected", "checkbox_unselected"}
LISTS = {"unordered_list", "ordered_list"}
BLOCKS = TEXT_LIKE | LISTS | {"otsl", "picture", "chart", "code", "formula", "inline",
                              "key_value_region", "form"}


def is_section_header(name: str) -> bool:
    return re.fullmatch(r"section_header_level_[0-9]", name) is not None


@dataclass
class El:
    name: str
    children: list = field(default_factory=list)  # El or str
    void: bool = False


def strip_locations(text: str) -> str:
    """Drop ``<loc_N>`` tokens (our writer has no page geometry)."""
    return re.sub(r"<loc_[0-9]+>", "", text)


def parse(text: str) -> El:
    """Tokenise and build a tree; raise ValueError on unbalanced or stray markup."""
    root = El("#root")
    stack = [root]
    # a tag is <name> or </name>; any other "<" or ">" is text (Docling does not escape it)
    for m in re.finditer(r"<(/?)([A-Za-z_][^<>\s]*)>|[^<]+|<", text):
        tok = m.group(0)
        if m.group(2) is None:
            stack[-1].children.append(tok)
            continue
        closing, name = m.group(1) == "/", m.group(2)
        is_void = (name in VOID or name in CLASSIFICATIONS or name in LANG_TOKENS
                   or re.fullmatch(r"link_[0-9]+", name) is not None)
        if closing:
            if is_void or stack[-1].name != name:
                raise ValueError(f"unexpected </{name}> in <{stack[-1].name}>")
            stack.pop()
        elif is_void:
            stack[-1].children.append(El(name, void=True))
        else:
            el = El(name)
            stack[-1].children.append(el)
            stack.append(el)
    if len(stack) != 1:
        raise ValueError(f"unclosed <{stack[-1].name}>")
    return root


def _elements(el: El, errors: list[str], where: str) -> list[El]:
    """Children that must all be elements (whitespace between them is fine)."""
    out = []
    for c in el.children:
        if isinstance(c, str):
            if c.strip():
                errors.append(f"{where}: bare text {c[:30]!r}")
        else:
            out.append(c)
    return out


def check_block(el: El, errors: list[str]) -> None:
    name = el.name
    where = f"<{name}>"
    if el.void:
        if name != "page_break":
            errors.append(f"void <{name}> outside its context")
        return
    if name in TEXT_LIKE or is_section_header(name):
        kids = [c for c in el.children if not isinstance(c, str)]
        if kids:
            if len(kids) != 1 or kids[0].name != "inline":
                errors.append(f"{where}: only text or one <inline> allowed, got "
                              f"{[k.name for k in kids]}")
            if any(isinstance(c, str) and c.strip() for c in el.children):
                errors.append(f"{where}: text mixed with elements")
            for k in kids:
                check_block(k, errors)
        return
    if name == "formula":
        if any(not isinstance(c, str) for c in el.children):
            errors.append(f"{where}: elements inside a formula")
        return
    if name == "inline":
        kids = _elements(el, errors, where)
        if not kids:
            errors.append("<inline>: empty group")
        for k in kids:
            if k.name not in {"text", "code", "formula"}:
                errors.append(f"<inline>: <{k.name}> not allowed")
            check_block(k, errors)
        return
    if name == "code":
        kids = el.children
        if not kids or isinstance(kids[0], str) or kids[0].name not in LANG_TOKENS:
            errors.append("<code>: must start with a language token")
        for k in kids[1:]:
            if isinstance(k, El) and k.name != "caption":
                errors.append(f"<code>: <{k.name}> not allowed")
        if kids and isinstance(kids[-1], El) and kids[-1].name == "caption":
            check_block(kids[-1], errors)
        return
    if name in LISTS:
        items = _elements(el, errors, where)
        if not items:
            errors.append(f"{where}: empty list")
        for item in items:
            if item.name != "list_item":
                errors.append(f"{where}: <{item.name}> is not a list item")
                continue
            kids = [c for c in item.children if isinstance(c, El)]
            if kids:
                _elements(item, errors, "<list_item>")
            for k in kids:
                if k.name not in BLOCKS and not is_section_header(k.name):
                    errors.append(f"<list_item>: <{k.name}> not allowed")
                check_block(k, errors)
        return
    if name == "otsl":
        check_otsl(el, errors)
        return
    if name in {"picture", "chart"}:
        order = ["class", "smiles", "otsl", "caption"]
        pos = -1
        for k in _elements(el, errors, where):
            kind = "class" if k.name in CLASSIFICATIONS else k.name
            if kind not in order or order.index(kind) <= pos:
                errors.append(f"{where}: <{k.name}> out of place")
                continue
            pos = order.index(kind)
            if kind in ("otsl", "caption"):
                check_block(k, errors)
        return
    if name == "key_value_region":
        for k in _elements(el, errors, where):
            if not re.fullmatch(r"(key|value)_[0-9]+", k.name):
                errors.append(f"{where}: <{k.name}> not allowed")
        return
    if name == "form":
        return
    errors.append(f"unknown element <{name}>")


def check_otsl(el: El, errors: list[str]) -> None:
    """Cells and ``<nl>`` rows, a rectangular grid, spans that look back to a real cell."""
    rows: list[list[str]] = []
    row: list[str] = []
    seen_caption = False
    for c in el.children:
        if isinstance(c, str):
            if c.strip() and not row:
                errors.append(f"<otsl>: text outside a cell {c[:30]!r}")
            continue
        if seen_caption:
            errors.append("<otsl>: content after the caption")
        if c.name in CELL_TOKENS:
            row.append(c.name)
        elif c.name == "nl":
            rows.append(row)
            row = []
        elif c.name == "caption":
            if row:
                errors.append("<otsl>: caption inside a row")
            seen_caption = True
            check_block(c, errors)
        elif row and (c.name in BLOCKS or is_section_header(c.name)):
            check_block(c, errors)  # rich cell content
        else:
            errors.append(f"<otsl>: <{c.name}> out of place")
    if row:
        errors.append("<otsl>: last row not closed with <nl>")
    if rows and len({len(r) for r in rows}) != 1:
        errors.append(f"<otsl>: ragged rows {[len(r) for r in rows]}")
    for i, r in enumerate(rows):
        for j, tok in enumerate(r):
            if tok in ("ucel", "xcel") and i == 0:
                errors.append("<otsl>: up-looking cell in the first row")
            if tok in ("lcel", "xcel") and j == 0:
                errors.append("<otsl>: left-looking cell in the first column")


def check_doctags(text: str) -> list[str]:
    """All grammar errors of a DocTags document (empty list when it conforms)."""
    errors: list[str] = []
    try:
        root = parse(strip_locations(text))
    except ValueError as exc:
        return [str(exc)]
    tops = _elements(root, errors, "document")
    if len(tops) != 1 or tops[0].name != "doctag":
        return [*errors, "the document must be one <doctag> element"]
    for el in _elements(tops[0], errors, "<doctag>"):
        if el.name not in BLOCKS and not is_section_header(el.name) and el.name != "page_break":
            errors.append(f"<doctag>: <{el.name}> is not a block")
        check_block(el, errors)
    return errors


def tree(text: str) -> El:
    return parse(text).children[0]


def find(el: El, name: str) -> list[El]:
    out = []
    for c in el.children:
        if isinstance(c, El):
            if c.name == name:
                out.append(c)
            out.extend(find(c, name))
    return out


def text_of(el: El) -> str:
    return "".join(c if isinstance(c, str) else text_of(c) for c in el.children)


# ----------------------------------------------------------------- ground truth
def _ground_truth() -> list[Path]:
    files = sorted((CORPUS / "docling" / "pdf" / "groundtruth").glob("*.doctags.txt"))
    files += sorted((CORPUS / "docling-core").glob("*.dt"))
    return files


def test_ground_truth_obeys_the_grammar():
    if not CORPUS.is_dir():
        pytest.skip("../shared/corpus not present (a user's clone has none)")
    files = _ground_truth()
    assert len(files) >= 10
    for path in files:
        errors = check_doctags(path.read_text(encoding="utf-8"))
        assert errors == [], f"{path.name}: {errors[:5]}"


def test_checker_rejects_broken_doctags():
    assert check_doctags("<doctag><text>a</doctag>")  # unbalanced
    assert check_doctags("<doctag><otsl><fcel>a<fcel>b<nl><fcel>c<nl></otsl>\n</doctag>")
    assert check_doctags("<doctag><otsl><ucel>a<nl></otsl>\n</doctag>")
    assert check_doctags("<doctag><unordered_list><text>x</text></unordered_list></doctag>")
    assert check_doctags("<doctag><code>no language</code></doctag>")
    assert check_doctags("<doctag>bare text</doctag>")
    assert check_doctags("<doctag><text>a <b> c</text></doctag>")
    assert check_doctags("<doctag><bold>x</bold></doctag>")
    assert check_doctags("<doctag><text>ok</text>\n</doctag>") == []


# ----------------------------------------------------------------- our output
SAMPLES = {
    "full": full_document(),
    "nasty": Document([P(t) for t in NASTY] + [P("a <b> & c")]),
    "tables": Document([simple_table(), rich_table()]),
    "empty": Document(),
}


@pytest.mark.parametrize("name", sorted(SAMPLES))
def test_output_obeys_the_same_grammar(name):
    out = write_doctags(SAMPLES[name])
    assert check_doctags(out) == [], out
    assert "<loc_" not in out
    assert out.startswith("<doctag>") and out.rstrip().endswith("</doctag>")


def test_title_and_section_levels():
    root = tree(write_doctags(full_document()))
    titles = find(root, "title")
    assert [text_of(t) for t in titles] == ["Main Title"]
    # "## Lists" is level 1 once "# Main Title" became the title (Docling's convention)
    assert [text_of(e) for e in find(root, "section_header_level_1")] == ["Lists", "Tables"]
    assert [text_of(e) for e in find(root, "section_header_level_2")] == ["Code"]


def test_several_h1_stay_section_headers():
    doc = Document([Heading(1, [Text("A")]), P("x"), Heading(1, [Text("B")]),
                    Heading(2, [Text("C")])])
    root = tree(write_doctags(doc))
    assert find(root, "title") == []
    assert [text_of(e) for e in find(root, "section_header_level_1")] == ["A", "B"]
    assert [text_of(e) for e in find(root, "section_header_level_2")] == ["C"]


def test_lists_nest_like_docling():
    root = tree(write_doctags(full_document()))
    top = next(c for c in root.children if isinstance(c, El) and c.name == "unordered_list")
    items = [c for c in top.children if isinstance(c, El)]
    # "second" and its nested ordered list are separate list items, as Docling writes them
    assert text_of(items[0]) == "first" and text_of(items[1]) == "second"
    nested = [c for c in items[2].children if isinstance(c, El)]
    assert nested[0].name == "ordered_list"
    assert [text_of(i) for i in nested[0].children if isinstance(i, El)] == ["sub one", "sub two"]
    assert find(items[3], "checkbox_selected") and find(items[4], "checkbox_unselected")


def test_table_spans_and_headers():
    out = write_doctags(Document([simple_table()]))
    otsl = tree(out).children[0]
    tokens = [c.name for c in otsl.children if isinstance(c, El) and c.name in CELL_TOKENS | {"nl"}]
    assert tokens == ["ched", "ched", "lcel", "nl",
                      "fcel", "fcel", "fcel", "nl",
                      "ucel", "fcel", "fcel", "nl"]
    assert text_of(find(otsl, "caption")[0]) == "Table 1: sample"


def test_two_dimensional_span_uses_xcel_and_row_headers_rhed():
    t = Table(rows=[
        TableRow([TableCell([P("big")], rowspan=2, colspan=2), TableCell([P("c")])]),
        TableRow([TableCell([P("d")])]),
        TableRow([TableCell([P("row head")], header=True), TableCell([]), TableCell([P("e")])]),
    ])
    out = write_doctags(Document([t]))
    assert check_doctags(out) == []
    assert "<fcel>big<lcel><fcel>c<nl><ucel><xcel><fcel>d<nl><rhed>row head<ecel><fcel>e<nl>" in out


def test_code_formula_picture_footnote():
    doc = Document([
        CodeBlock("if a < b:\n    pass\n", "py"),
        CodeBlock("x", "brainfuck"),
        P("see ", Code("x<y>"), " and ", Math("a+b"), NoteRef("n")),
        P(Image("img", alt="alt", title="Figure 1")),
    ], notes={"n": [P("the note")]})
    out = write_doctags(doc)
    assert check_doctags(out) == [], out
    assert "<code><_Python_>if a < b:\n    pass</code>" in out
    assert "<code><_unknown_>x</code>" in out
    root = tree(out)
    inline = find(root, "inline")[0]
    assert [c.name for c in inline.children if isinstance(c, El)] == [
        "text", "code", "text", "formula", "text"]
    assert "<code><_unknown_>x&lt;y></code>" in out
    assert text_of(find(root, "picture")[0]) == "Figure 1"
    assert text_of(find(root, "footnote")[0]) == "[1] the note"


def test_notes_and_page_headers_keep_text_that_looks_like_markup():
    """Footnotes and page headers hold text only; it comes from the model, not from the
    writer's own elements with the tags cut out (which also cut ``< 5 >`` from the text)."""
    doc = Document([P("see", NoteRef("n"))],
                   notes={"n": [P("if c < 5 > 2 then ", Code("f(<x>)"))]},
                   furniture=[P("draft: a < b > c")])
    out = write_doctags(doc)
    assert check_doctags(out) == [], out
    assert "<footnote>[1] if c < 5 > 2 then f(&lt;x>)</footnote>" in out
    assert "<page_header>draft: a < b > c</page_header>" in out


def test_text_is_kept_verbatim_except_tag_like_brackets():
    out = write_doctags(Document([P("a <b> & c < 5 > 2 </x>")]))
    assert "<text>a &lt;b> & c < 5 > 2 &lt;/x></text>" in out


def test_list_item_with_inline_group():
    doc = Document([ListBlock(True, [ListItem([P("run ", Code("ls"))]),
                                     ListItem([Paragraph([])])])])
    out = write_doctags(doc)
    assert check_doctags(out) == [], out
    assert "<list_item><inline><text>run</text>\n<code><_unknown_>ls</code>\n</inline></list_item>" in out
