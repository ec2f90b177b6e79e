"""The generated corpus's sources: documents of varied subjects built from a seeded random
generator, so that every run (and every machine) makes the same documents.

Each source has a title, sections at two and three levels, paragraphs with bold, italic,
inline code, links and footnotes, bullet and numbered lists (nested), one or two tables
(wrapped long cells, multi-line header texts, some with merged header cells), often a code
block and a block quote, and table captions. Its table style and column count (what the
writers vary) rotate over the set.
"""

from __future__ import annotations

import random
import zlib

from bench.generated.model import (
    Block,
    Cell,
    Code,
    Heading,
    Inlines,
    Item,
    ListBlock,
    Para,
    Quote,
    Source,
    Table,
)
from bench.generated.subjects import SUBJECTS, Subject

PER_SUBJECT = 2  # 16 subjects x 2 = 32 sources
TABLE_STYLES = ("none", "header-rule", "zebra", "grid")
_GLUE = ("the", "a", "each", "every", "this", "our", "its")
_LINKS = ("of", "for", "with", "near", "after", "under", "across")
_STATUS = ("open", "closed", "pending", "on hold", "done", "in review")
_MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")


class _Writer:
    """Sentences and blocks for one source, from its subject's words and one seeded RNG."""

    def __init__(self, subject: Subject, rng: random.Random) -> None:
        self.s, self.rng, self.notes = subject, rng, 0

    def word(self, kind: str) -> str:
        words: tuple[str, ...] = getattr(self.s, kind)
        return self.rng.choice(words)

    def phrase(self, low: int, high: int) -> str:
        words = [self.word(self.rng.choice(("nouns", "adjectives", "nouns")))
                 for _ in range(self.rng.randint(low, high))]
        return " ".join(words)

    def sentence(self) -> str:
        r = self.rng
        parts = [r.choice(_GLUE).capitalize(), self.word("adjectives"), self.word("nouns"),
                 self.word("verbs"), r.choice(_GLUE), self.word("nouns"), r.choice(_LINKS),
                 r.choice(_GLUE), self.word("adjectives"), self.word("nouns")]
        if r.random() < 0.4:
            parts += ["and", self.word("verbs"), r.choice(_GLUE), self.word("nouns")]
        return " ".join(parts) + "."

    def fill(self, template: str) -> str:
        out = template.replace("{year}", str(self.rng.randint(1990, 2030)))
        while "{n}" in out:
            out = out.replace("{n}", str(self.rng.randint(2, 99)), 1)
        while "{noun}" in out:
            out = out.replace("{noun}", self.word("nouns"), 1)
        while "{adj}" in out:
            out = out.replace("{adj}", self.word("adjectives"), 1)
        return out

    def inlines(self, sentences: int, marks: bool = True) -> Inlines:
        """A paragraph's spans; with ``marks``, one to three of bold, italic, code, link,
        footnote placed between sentences."""
        spans: Inlines = []
        kinds = ["bold", "italic", "code", "link", "note"]
        self.rng.shuffle(kinds)
        extras = kinds[:self.rng.randint(1, 3)] if marks else []
        for i in range(sentences):
            spans.append(("text", self.sentence() + " "))
            if i < len(extras):
                spans.extend(self.mark(extras[i]))
        return spans

    def mark(self, kind: str) -> Inlines:
        r = self.rng
        if kind == "bold":
            return [("text", "Note "), ("bold", self.phrase(1, 3)), ("text", " matters. ")]
        if kind == "italic":
            return [("text", "See "), ("italic", self.phrase(1, 3)), ("text", " below. ")]
        if kind == "code":
            return [("text", "Set "), ("code", f"{self.word('nouns')}_{r.randint(1, 9)}"),
                    ("text", " first. ")]
        if kind == "link":
            slug = f"{self.word('nouns')}-{r.randint(10, 99)}"
            return [("text", "Read "), ("link", f"the {self.word('nouns')} page",
                                        f"https://{self.s.host}/{slug}"), ("text", " too. ")]
        self.notes += 1
        return [("text", "This was checked"), ("note", self.sentence()), ("text", ". ")]

    def bullet_list(self, ordered: bool, nested: bool) -> ListBlock:
        items = []
        for _ in range(self.rng.randint(3, 5)):
            children = None
            if nested and self.rng.random() < 0.5:
                children = ListBlock(self.rng.random() < 0.3, [
                    Item([("text", self.phrase(2, 5))]) for _ in range(self.rng.randint(2, 3))])
            text: Inlines = [("text", self.phrase(2, 6))]
            if self.rng.random() < 0.25:
                text = [("bold", self.word("nouns")), ("text", ": " + self.phrase(2, 5))]
            items.append(Item(text, children))
        return ListBlock(ordered, items)

    def cell_value(self, kind: str) -> str:
        r = self.rng
        if kind == "label":
            return " ".join(self.word(r.choice(("adjectives", "nouns"))) for _ in
                            range(r.randint(1, 3))).capitalize()
        if kind == "long":
            return (self.phrase(7, 14) + ".").capitalize()
        if kind == "int":
            return f"{r.randint(1, 40000):,}".replace(",", " ")
        if kind == "money":
            return f"{r.randint(10, 900000) / 100:,.2f}"
        if kind == "pct":
            return f"{r.choice(('+', '-'))}{r.randint(0, 300) / 10:.1f} %"
        if kind == "date":
            return f"{r.randint(1, 28)} {r.choice(_MONTHS)} {r.randint(2019, 2027)}"
        if kind == "status":
            return r.choice(_STATUS)
        return f"{self.word('nouns')[:4].upper()}-{r.randint(1, 999)}"

    def table(self, number: int) -> Table:
        r = self.rng
        first, rest = self.s.columns[0], list(self.s.columns[1:])
        keep = sorted(r.sample(range(len(rest)), k=r.randint(min(2, len(rest)), len(rest))))
        columns = [first, *(rest[i] for i in keep)]
        body = [[self.cell_value(kind) for _, kind in columns]
                for _ in range(r.randint(3, 7))]
        caption = f"Table {number}: {self.phrase(2, 4)} by {self.word('nouns')}".capitalize()
        names = [name for name, _ in columns]
        if len(columns) >= 3 and r.random() < 0.4:  # a group header over two columns
            g = r.randint(1, len(columns) - 2)
            top = [Cell(n, rowspan=2) for n in names[:g]]
            top.append(Cell(f"{self.word('adjectives').capitalize()} figures", colspan=2))
            top += [Cell(n, rowspan=2) for n in names[g + 2:]]
            return Table([top, [Cell(names[g]), Cell(names[g + 1])]], body, caption)
        return Table([[Cell(n) for n in names]], body, caption)

    def code(self) -> Code:
        lines = [self.fill(self.rng.choice(self.s.code_lines))
                 for _ in range(self.rng.randint(3, 6))]
        language = self.s.code_language if self.s.code_language != "text" else ""
        return Code(language, "\n".join(lines))


def _source(subject: Subject, index: int, number: int) -> Source:
    name = f"{subject.name.replace(' ', '-')}-{index + 1}"
    rng = random.Random(zlib.crc32(name.encode()))
    w = _Writer(subject, rng)
    title = " ".join(word[:1].upper() + word[1:]
                     for word in w.fill(rng.choice(subject.titles)).split())
    blocks: list[Block] = [Heading(1, title),
                           Para(w.inlines(rng.randint(2, 3)))]
    sections = rng.sample(subject.sections, k=min(len(subject.sections), rng.randint(3, 4)))
    # the blocks every source carries, spread over its sections; the rest by chance
    wanted: list[str] = ["table", "bullets", "numbered"]
    if subject.code_language != "text" or rng.random() < 0.5:
        wanted.append("code")
    if rng.random() < 0.6:
        wanted.append("quote")
    if rng.random() < 0.5:
        wanted.append("table")
    rng.shuffle(wanted)
    tables = 0
    for s_index, section in enumerate(sections):
        blocks += [Heading(2, section), Para(w.inlines(rng.randint(2, 4)))]
        parts = wanted[s_index::len(sections)]
        if rng.random() < 0.6:
            blocks.append(Heading(3, f"{w.word('adjectives').capitalize()} "
                                     f"{w.word('nouns')}s"))
            blocks.append(Para(w.inlines(rng.randint(1, 3))))
        for part in parts:
            if part == "table":
                tables += 1
                blocks.append(w.table(tables))
            elif part in ("bullets", "numbered"):
                blocks.append(w.bullet_list(part == "numbered", nested=True))
            elif part == "code":
                blocks.append(w.code())
            else:
                blocks.append(Quote([w.inlines(rng.randint(1, 2), marks=False)
                                     for _ in range(rng.randint(1, 2))]))
            if rng.random() < 0.5:
                blocks.append(Para(w.inlines(rng.randint(1, 2))))
    if w.notes == 0:  # every source has at least one footnote
        blocks.append(Para([("text", w.sentence()), ("note", w.sentence())]))
    return Source(name, subject.name, TABLE_STYLES[number % len(TABLE_STYLES)],
                  1 + number % 3, blocks)


def sources() -> list[Source]:
    """Every source of the generated corpus, in a fixed order."""
    out: list[Source] = []
    for index in range(PER_SUBJECT):
        for subject in SUBJECTS:
            out.append(_source(subject, index, len(out)))
    return out
