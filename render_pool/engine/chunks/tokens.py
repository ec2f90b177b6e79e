"""Token counters for the chunks writer (``chunk_tokenizer``): offline, no model files.

Why not a model's own tokenizer: the BPE tokenizers on PyPI (``tiktoken``, Hugging Face
``tokenizers``) load their vocabularies from the network at run time, and the service never
reaches out. These counters need nothing and run in the render pool:

- ``words`` (the default): a run of letters and digits is one token per 10 characters (so a
  long identifier or a base64 run costs several), every punctuation mark or symbol (Markdown's
  ``|``, ``#``, ``*`` too; a run of one mark, such as ``---``, once) one, every CJK ideograph,
  kana or Hangul syllable one. On English
  prose it counts about 1.1 to 1.3 times the words, near what GPT-style BPE tokenizers count.
- ``chars``: one token per 4 characters, rounded up (OpenAI's rule of thumb for English).

Another counter is one function ``str -> int`` added to :data:`TOKENIZERS` (for example a
BPE tokenizer whose vocabulary ships inside a package); its name is then accepted as
``chunk_tokenizer``.

The two built-in counters also answer, without counting a whole text, where its longest start
within a budget ends (:func:`prefix_rule`, :func:`within`) and bound the tokens of two texts
joined (:func:`join_floor`): the chunks writer cuts a long word (an embedded image's data URI,
megabytes of base64) with these, and counting every candidate piece of it made a document with
a few megabytes of images take many seconds to chunk.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import lru_cache

__all__ = ["DEFAULT_TOKENIZER", "TOKENIZERS", "Counter", "count_chars", "count_words",
           "join_floor", "prefix_rule", "within"]

_CJK = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af"
# One match per token: a letter-and-digit run (or a run of one mark) is matched 10 characters
# at a time, so a run of n characters is ceil(n / 10) matches, as the ``words`` rule counts it.
# Only whitespace matches no alternative. Text without CJK (pure ASCII) takes the same
# pattern without the CJK tests, which could never match there.
_ONE_CJK = rf"[{_CJK}]|(?:(?![{_CJK}])[^\W_]){{1,10}}|([^\w\s]|_)\1{{0,9}}"
_ONE_ASCII = r"[^\W_]{1,10}|([^\w\s]|_)\1{0,9}"
_TOKEN = re.compile(_ONE_CJK)
_TOKEN_A = re.compile(_ONE_ASCII)
Counter = Callable[[str], int]
WORD_CHARS = 10  # characters of a letter-and-digit run counted as one token


def count_words(text: str) -> int:
    """Tokens of ``text`` by the ``words`` rule (see the module doc): its matches of the
    one-token pattern, found and counted by the regular-expression engine (a loop over the
    matches in Python cost a microsecond each, seconds for an image's data URI)."""
    return len((_TOKEN_A if text.isascii() else _TOKEN).findall(text))


def count_chars(text: str) -> int:
    """Tokens of ``text`` by the ``chars`` rule: a token per 4 characters, rounded up."""
    return (len(text) + 3) // 4


TOKENIZERS: dict[str, Counter] = {"words": count_words, "chars": count_chars}
DEFAULT_TOKENIZER = "words"

PrefixRule = Callable[[int, int], int]


@lru_cache(maxsize=64)
def _prefix_pattern(limit: int, ascii_only: bool) -> re.Pattern[str]:
    """Whitespace and then exactly ``limit`` tokens, each with the whitespace after it. The
    groups are atomic and the whitespace possessive: a text of fewer tokens fails at once
    rather than retried with its runs cut into more tokens."""
    token = _ONE_ASCII if ascii_only else _ONE_CJK
    return re.compile(rf"\s*+(?:(?>{token})\s*+){{{limit}}}")


def prefix_rule(count: Counter, text: str) -> PrefixRule | None:
    """For a built-in counter, a function ``(start, limit) -> end``: the end of the longest
    piece ``text[start:end]`` of at most ``limit`` (>= 0) tokens, found without counting
    candidate pieces; None for another counter.

    Why it is exact: a start of a text has as many ``words`` tokens as the text has tokens
    that begin in it (a token cut short still counts one), so the longest start within
    ``limit`` ends where the token after the first ``limit`` begins, or at the end."""
    if count is count_chars:
        return lambda start, limit: min(len(text), start + 4 * limit)
    if count is not count_words:
        return None

    def words_end(start: int, limit: int) -> int:
        found = _prefix_pattern(limit, ascii_only).match(text, start)
        return len(text) if found is None else found.end()

    ascii_only = text.isascii()
    return words_end


def within(count: Counter, text: str, limit: int) -> bool:
    """Whether ``text`` has at most ``limit`` tokens (``count(text) <= limit``), read for a
    built-in counter only as far as its first ``limit`` tokens."""
    if limit < 0:
        return False
    rule = prefix_rule(count, text)
    return count(text) <= limit if rule is None else rule(0, limit) == len(text)


def join_floor(count: Counter) -> bool:
    """Whether ``count(a + sep + b) >= count(a) + count(b) - 1`` holds for any texts: joining
    merges at most the last token of ``a`` with the first of ``b`` (a run of letters or of
    one mark; ``ceil((x + y) / 10)`` is at least ``ceil(x / 10) + ceil(y / 10) - 1``, and so
    for 4), and ``sep`` adds tokens or keeps them apart. True of the built-in counters."""
    return count is count_words or count is count_chars
