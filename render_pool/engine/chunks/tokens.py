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
"""

from __future__ import annotations

import re
from collections.abc import Callable

__all__ = ["DEFAULT_TOKENIZER", "TOKENIZERS", "Counter", "count_chars", "count_words"]

_CJK = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af"
_TOKEN = re.compile(rf"[{_CJK}]|(?:(?![{_CJK}])[^\W_])+|([^\w\s]|_)\1*")
Counter = Callable[[str], int]
WORD_CHARS = 10  # characters of a letter-and-digit run counted as one token


def count_words(text: str) -> int:
    """Tokens of ``text`` by the ``words`` rule (see the module doc)."""
    total = 0
    for m in _TOKEN.finditer(text):
        n = m.end() - m.start()
        total += 1 if n <= WORD_CHARS else (n + WORD_CHARS - 1) // WORD_CHARS
    return total


def count_chars(text: str) -> int:
    """Tokens of ``text`` by the ``chars`` rule: a token per 4 characters, rounded up."""
    return (len(text) + 3) // 4


TOKENIZERS: dict[str, Counter] = {"words": count_words, "chars": count_chars}
DEFAULT_TOKENIZER = "words"
