"""A BERT WordPiece tokenizer's ids for a batch of texts, with each distinct word tokenized once.

A static model's document vectors are means of token vectors, so embedding a tree is mostly
tokenizing it: on the Django sdist the `tokenizers` call took 4.3 s of the 6 s the static tier spends
on 40k chunks, re-tokenizing the same few thousand identifiers and punctuation marks in every chunk.
For the BERT pipeline (`BertNormalizer` lowercasing, `BertPreTokenizer`, `WordPiece`: the packaged
model's and any uncased BERT vocabulary's) a text is lowercased, split into runs of letters and
digits and single punctuation marks, and each word is mapped on its own: the same ids, from a dict.

`WordPieceIds.ids(texts)` gives exactly `[e.ids for e in tokenizer.encode_batch_fast(texts,
add_special_tokens=False)]`: a word met for the first time is tokenized by the tokenizer itself. A text
with non-ASCII or control characters (a long path's `…` in every embedded text of a deep tree) is split
only where the tokenizer's whitespace and ASCII punctuation split it, each run tokenized on its own
(only ASCII letters are lowercased here, the rest by the tokenizer); a text holding an added token's
text (`[UNK]`) goes to the tokenizer whole. Unit tests check the two agree on real code and odd text;
`bench/tokenize_bench.py` times both on a tree.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from itertools import chain
from pathlib import Path
from typing import Any

__all__ = ["MAX_WORDS", "WordPieceIds", "word_piece_ids"]

MAX_WORDS = 200_000  # distinct words remembered (a few MiB per 10k); past it the cache starts over
# An ASCII text, lowercased: a run of letters and digits, or one punctuation mark (BERT counts every
# printable ASCII character that is neither a letter, a digit nor a space as punctuation).
# (matched in the text's bytes: ~20% faster than in the str, each distinct word decoded once)
_WORD_BYTES = re.compile(rb"[a-z0-9]+|[!-/:-@\[-`{-~]")
# ASCII characters the normalizer deletes (control characters other than tab, newline and return).
_DELETED = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
# Any other text: a run of characters that are neither what the normalizer makes a space (Rust's
# `char::is_whitespace`, controls excepted: they are deleted) nor ASCII punctuation, or one ASCII
# punctuation mark. The tokenizer splits such a run no further than it would in its text (accents,
# Chinese characters, Unicode punctuation and deleted characters are all handled inside the run).
_ANY_WORD = re.compile(r"[^ \t\n\r\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000!-/:-@\[-`{-~]+"
                       r"|[!-/:-@\[-`{-~]")


# A-Z to a-z, every other byte kept: lowercases the ASCII letters of UTF-8 text only (Python's
# `str.lower` and the tokenizer's per-character lowercasing differ on a few letters, final sigma).
_ASCII_LOWER = bytes.maketrans(b"ABCDEFGHIJKLMNOPQRSTUVWXYZ", b"abcdefghijklmnopqrstuvwxyz")


class _Words(dict[str, tuple[int, ...]]):
    """word -> its ids, filled by the tokenizer on a miss."""

    def __init__(self, tokenizer: Any) -> None:
        super().__init__()
        self._tokenizer = tokenizer

    def __missing__(self, word: str) -> tuple[int, ...]:
        ids = tuple(self._tokenizer.encode(word, add_special_tokens=False).ids)
        self[word] = ids
        return ids


class _ByteWords(dict[bytes, tuple[int, ...]]):
    """An ASCII word's bytes -> its ids, taken from `_Words` on a miss."""

    def __init__(self, words: _Words) -> None:
        super().__init__()
        self._words = words

    def __missing__(self, word: bytes) -> tuple[int, ...]:
        ids = self[word] = self._words[word.decode("ascii")]
        return ids


class WordPieceIds:
    """Token ids of texts for one BERT WordPiece tokenizer; see the module docstring."""

    def __init__(self, tokenizer: Any, added: Iterable[str] = ()) -> None:
        self._tokenizer = tokenizer
        self._words = _Words(tokenizer)
        self._byte_words = _ByteWords(self._words)
        self._added = tuple(a.lower() for a in added if a)

    def ids(self, texts: list[str]) -> list[list[int]]:
        """Each text's token ids, no special tokens added, as the tokenizer gives them."""
        if len(self._words) > MAX_WORDS:
            self._words.clear()
            self._byte_words.clear()
        out: list[list[int]] = []
        others: list[int] = []
        lookup, added = self._words.__getitem__, self._added
        lookup_bytes = self._byte_words.__getitem__
        for n, text in enumerate(texts):
            plain = text.isascii()
            # (ASCII letters lowercased here; the tokenizer lowercases the rest of a non-ASCII run)
            lowered = text.lower() if plain else text.encode("utf-8", "surrogatepass").translate(
                _ASCII_LOWER).decode("utf-8", "surrogatepass")
            if added and any(a in lowered for a in added):
                out.append([])  # (an added token is matched in the raw text: the tokenizer's own pass)
                others.append(n)
            elif plain and not _DELETED.search(text):
                words = _WORD_BYTES.findall(lowered.encode("ascii"))
                out.append(list(chain.from_iterable(map(lookup_bytes, words))))
            else:
                out.append(list(chain.from_iterable(map(lookup, _ANY_WORD.findall(lowered)))))
        if others:
            whole = [texts[n] for n in others]
            encodings = self._tokenizer.encode_batch_fast(whole, add_special_tokens=False)
            for n, encoding in zip(others, encodings, strict=True):
                out[n] = list(encoding.ids)
        return out


def word_piece_ids(tokenizer: Any, tokenizer_file: Path) -> WordPieceIds | None:
    """A `WordPieceIds` for the tokenizer saved in `tokenizer_file`, or None when its pipeline is not
    the uncased BERT one the shortcut reproduces (then the tokenizer tokenizes every text)."""
    try:
        config = json.loads(tokenizer_file.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    normalizer = config.get("normalizer") or {}
    model = config.get("model") or {}
    bert = (normalizer.get("type") == "BertNormalizer" and normalizer.get("lowercase") is True
            and normalizer.get("clean_text") is True
            and (config.get("pre_tokenizer") or {}).get("type") == "BertPreTokenizer"
            and model.get("type") == "WordPiece")
    if not bert:
        return None
    added = [str(t.get("content", "")) for t in config.get("added_tokens") or []]
    return WordPieceIds(tokenizer, added)
