"""The conversion benchmark's fidelity scorer on tiny Markdown pairs whose per-category
precision, recall and F1 were worked out by hand (the heavy benchmark itself is not run)."""

from __future__ import annotations

import pytest

from bench.fidelity import Score, elements, normalise, score

EXPECTED = """\
# Title

## Intro

- alpha
- beta

| A | B |
|---|---|
| 1 | two |

See [site](https://example.com/) and **bold** *it*.

<!-- image -->
"""

# Same content with other choices: shifted and one wrong heading level, an extra heading,
# one list item changed, an HTML table with one cell changed, a second image, no italic.
PRODUCED = """\
## Title

## Intro

### Extra

- alpha
- gamma

<table><tr><th>A</th><th>B</th></tr><tr><td>1</td><td>2</td></tr></table>

See [site](https://example.com) and <strong>bold</strong>.

![x](data:image/png;base64,AAAA) ![y](y.png)
"""


def test_per_category_scores_match_hand_computed_values():
    t = score(PRODUCED, EXPECTED).tallies
    # headings (levels stripped): {title, intro, extra} vs {title, intro}: P 2/3, R 1
    assert (t["headings"].tp, t["headings"].produced, t["headings"].expected) == (2, 3, 2)
    assert t["headings"].f1 == pytest.approx(0.8)
    # dense level ranks: produced (1 title)(1 intro)(2 extra) vs (1 title)(2 intro): P 1/3 R 1/2
    assert t["heading levels"].f1 == pytest.approx(0.4)
    # list items: alpha matches, gamma vs beta does not: P 1/2 R 1/2
    assert t["list items"].f1 == pytest.approx(0.5)
    # table cells (the HTML table is read like the pipe table): a, b, 1 match; 2 vs two
    assert (t["table cells"].tp, t["table cells"].produced) == (3, 4)
    assert t["table cells"].f1 == pytest.approx(0.75)
    # link targets: the trailing slash is not a difference
    assert t["links"].f1 == pytest.approx(1.0)
    # images are counted: 2 produced (a data: URI one and a file one) vs 1 placeholder
    assert (t["images"].tp, t["images"].produced, t["images"].expected) == (1, 2, 1)
    assert t["images"].f1 == pytest.approx(2 / 3)
    # emphasis: bold found (as <strong>), italic "it" missing: P 1 R 1/2
    assert t["emphasis"].precision == pytest.approx(1.0)
    assert t["emphasis"].recall == pytest.approx(0.5)
    assert t["emphasis"].f1 == pytest.approx(2 / 3)


def test_scores_are_micro_averaged_over_documents():
    s = Score()
    s.add(PRODUCED, EXPECTED)  # list items: tp 1 of 2 produced, 2 expected
    s.add("- x\n- y\n- z\n", "- x\n- y\n- z\n")  # tp 3 of 3
    lists = s.tallies["list items"]
    assert (lists.tp, lists.produced, lists.expected) == (4, 5, 5)
    assert lists.f1 == pytest.approx(0.8)  # a macro average would give 0.75
    assert s.documents == 2


def test_relative_heading_levels_absorb_a_uniform_shift():
    t = score("## T\n\n### A\n\n#### B\n", "# T\n\n## A\n\n### B\n").tallies
    assert t["headings"].f1 == pytest.approx(1.0)
    assert t["heading levels"].f1 == pytest.approx(1.0)
    swapped = score("## T\n\n# A\n", "# T\n\n## A\n").tallies
    assert swapped["headings"].f1 == pytest.approx(1.0)
    assert swapped["heading levels"].f1 == 0.0


def test_missing_output_and_absent_categories():
    t = score("", "# Only a heading\n").tallies
    assert t["headings"].f1 == 0.0 and t["headings"].recall == 0.0
    assert t["headings"].precision is None
    assert t["links"].f1 is None  # nothing expected: not scored


def test_normalisation_and_structures_a_pipe_table_cannot_hold():
    assert normalise("Hello,\\_  World!") == normalise("hello  world") == "hello world"
    found = elements("<table><tr><td><ul><li>in cell</li></ul></td></tr></table>\n\n"
                     "- outer\n  - inner\n")
    # the list inside the cell is part of the cell's text, not a list item of its own
    assert dict(found["table cells"]) == {"in cell": 1}
    assert dict(found["list items"]) == {"outer": 1, "inner": 1}  # nested text excluded
    assert dict(found["emphasis"]) == {}
    marked = elements("A **b _c_** d [l](http://x/y/) ![](data:image/png;base64,QUJD)")
    assert dict(marked["emphasis"]) == {("bold", "b c"): 1, ("italic", "c"): 1}
    assert dict(marked["links"]) == {"http://x/y": 1}
    assert sum(marked["images"].values()) == 1


def test_pdf_categories_paragraphs_tables_code_alt_text_and_footnotes():
    expected = ("Intro text here.\n\n| A | B |\n|---|---|\n| 1 | 2 |\n\n```\nx = 1\n```\n\n"
                "![Logo of the team](logo.png)\n\nSee the note.[^1]\n\n[^1]: A footnote.\n")
    produced = ("Intro text here.\n\n| A | B | C |\n|---|---|---|\n| 1 | 2 | 3 |\n\n"
                "x = 1\n\n![](logo.png)\n\nSee the note.[^1]\n\n[^1]: A footnote.\n")
    from bench.fidelity import PDF_CATEGORIES

    s = Score(categories=PDF_CATEGORIES)
    s.add(produced, expected)
    t = s.tallies
    # paragraphs: intro and "see the note 1" match; produced adds "x 1" (the unfenced code)
    assert (t["paragraphs"].tp, t["paragraphs"].produced, t["paragraphs"].expected) == (2, 3, 2)
    assert t["tables"].f1 == 0.0  # 2x3 is not 2x2
    assert (t["code blocks"].recall, t["code blocks"].precision) == (0.0, None)
    assert (t["alt text"].expected, t["alt text"].tp) == (1, 0)
    assert t["images"].f1 == 1.0 and t["footnotes"].f1 == 1.0


def test_pdf_block_quotes_are_scored_apart_from_paragraphs():
    from bench.fidelity import PDF_CATEGORIES

    expected = "Before.\n\n> Quoted one.\n>\n> Quoted two.\n\nAfter.\n"
    produced = "Before.\n\nQuoted one.\n\n> Quoted two.\n\n> After.\n"
    s = Score(categories=PDF_CATEGORIES)
    s.add(produced, expected)
    t = s.tallies
    # quotes: "quoted two" matches; "after" is a false quote, "quoted one" a missed one
    assert (t["block quotes"].tp, t["block quotes"].produced, t["block quotes"].expected) \
        == (1, 2, 2)
    # paragraphs: "before" matches; "quoted one" is extra, "after" is missing
    assert (t["paragraphs"].tp, t["paragraphs"].produced, t["paragraphs"].expected) == (1, 2, 2)
