"""A BERT WordPiece tokenizer's ids for a batch of texts, with each distinct word tokenized once.

A static model's document vectors are means of token vectors, so embedding a tree is mostly
tokenizing it: on the Django sdist the `tokenizers` call took 4.3 s of the 6 s the static tier spends
on 40k chunks, re-tokenizing the same few thousand identifiers and punctuation marks in every chunk.
For the BERT pipeline (`BertNormalizer` lowercasing, `BertPreTokenizer`, `WordPiece`: the packaged
model's and any uncased BERT vocabulary's) a text is lowercased, split into runs of letters and
digits and single punctuation marks, and each word is mapped on its own: the same ids, from a dict.

`WordPieceIds.ids(texts)` gives exactly `[e.ids for e in tokenizer.encode_batch_fast(texts,
add_special_tokens=False)]`: a word met for the first time is tokenized by the tokenizer itself (an
ASCII word by its WordPiece model alone, which is what the pipeline does with it). Words are numbered
as they are met and their ids kept in one flat table, so a batch's texts become arrays of word numbers
that numpy spells out into ids: `id_arrays(texts, limit)` gives every text's first `limit` ids one
after another and each text's count, what the static tier's mean vectors are made from, without a list
or an int object a token (`bench/tokenize_bench.py` on the Django sdist: 2.45 -> 1.75 s). A text
with non-ASCII or control characters (a long path's `…` in every embedded text of a deep tree) is split
only where the tokenizer's whitespace and ASCII punctuation split it, each run tokenized on its own
(only ASCII letters are lowercased here, the rest by the tokenizer); a text holding an added token's
text (`[UNK]`) goes to the tokenizer whole. Unit tests check the two agree on real code and odd text;
`bench/tokenize_bench.py` times both on a tree.
"""

from __future__ import annotations

import json
import re
from array import array
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import numpy as np

__all__ = ["MAX_WORDS", "WordPieceIds", "as_lists", "word_piece_ids"]

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


class _Pieces:
    """Every word met so far, numbered, with its ids in one flat table: word k's ids are
    `flat[ptr[k]:ptr[k + 1]]`. A word is looked up by its text (`by_text`) or, ASCII, by its bytes
    (`by_bytes`); one met for the first time is tokenized by the tokenizer itself."""

    def __init__(self, tokenizer: Any) -> None:
        self._tokenizer = tokenizer
        self._model = tokenizer.model
        self.ptr = array("q", [0])
        self.flat = array("q")
        self.by_text = _Index(self._text_word)
        self.by_bytes = _Index(self._byte_word)

    def __len__(self) -> int:
        return len(self.ptr) - 1

    def add(self, ids: Iterable[int]) -> int:
        """Number a new entry with these ids (a word, or a whole text the tokenizer read)."""
        self.flat.extend(ids)
        self.ptr.append(len(self.flat))
        return len(self.ptr) - 2

    def _text_word(self, word: str) -> int:
        return self.add(self._tokenizer.encode(word, add_special_tokens=False).ids)

    def _byte_word(self, word: bytes) -> int:
        """A run of lowercase ASCII letters and digits or one ASCII punctuation mark: what the
        normalizer and the pre-tokenizer leave as it is, so the WordPiece model alone reads it (half
        the time of the whole pipeline, for each of the ~30,000 words of the Django sdist)."""
        text = word.decode("ascii")
        number = self.by_text.get(text)
        if number is None:
            number = self.by_text[text] = self.add(token.id for token in self._model.tokenize(text))
        return number


class _Index(dict[Any, int]):
    """A word -> its number in `_Pieces`, made by `make` on a miss."""

    def __init__(self, make: Any) -> None:
        super().__init__()
        self._make = make

    def __missing__(self, word: Any) -> int:
        number = self[word] = self._make(word)
        return number


class WordPieceIds:
    """Token ids of texts for one BERT WordPiece tokenizer; see the module docstring."""

    def __init__(self, tokenizer: Any, added: Iterable[str] = ()) -> None:
        self._tokenizer = tokenizer
        self._pieces = _Pieces(tokenizer)
        self._added = tuple(a.lower() for a in added if a)

    def forget(self) -> None:
        """Start over with no word known (as a new process does)."""
        self._pieces = _Pieces(self._tokenizer)

    def ids(self, texts: list[str]) -> list[list[int]]:
        """Each text's token ids, no special tokens added, as the tokenizer gives them."""
        return as_lists(*self.id_arrays(texts))

    def id_arrays(self, texts: list[str], limit: int | None = None) -> tuple[np.ndarray, np.ndarray]:
        """The texts' token ids one after another (int64; each text's first `limit` when given) and
        how many each text has: `ids`, without a list or an int object a token. Each text becomes the
        numbers of its words (`_Pieces`), which numpy spells out into their ids."""
        pieces = self._pieces
        if len(pieces) > MAX_WORDS:
            self.forget()
            pieces = self._pieces
        numbers = array("q")
        words_per_text = array("q")
        by_bytes, by_text, added = pieces.by_bytes.__getitem__, pieces.by_text.__getitem__, self._added
        for text in texts:
            plain = text.isascii()
            # (ASCII letters lowercased here; the tokenizer lowercases the rest of a non-ASCII run)
            lowered = text.lower() if plain else text.encode("utf-8", "surrogatepass").translate(
                _ASCII_LOWER).decode("utf-8", "surrogatepass")
            if added and any(a in lowered for a in added):
                # (an added token is matched in the raw text: the tokenizer reads this one whole)
                whole = self._tokenizer.encode(text, add_special_tokens=False).ids
                numbers.append(pieces.add(whole))
                words_per_text.append(1)
                continue
            if plain and not _DELETED.search(text):
                words: list[Any] = _WORD_BYTES.findall(lowered.encode("ascii"))
                numbers.extend(map(by_bytes, words))
            else:
                words = _ANY_WORD.findall(lowered)
                numbers.extend(map(by_text, words))
            words_per_text.append(len(words))
        return _spelled(pieces, np.frombuffer(numbers, dtype=np.int64),
                        np.frombuffer(words_per_text, dtype=np.int64), limit)


def as_lists(flat: np.ndarray, counts: np.ndarray) -> list[list[int]]:
    """`id_arrays`' arrays (the ids one after another, each text's count) as one list of ids a text."""
    bounds = np.concatenate(([0], np.cumsum(counts))).tolist()
    values = flat.tolist()
    return [values[a:b] for a, b in zip(bounds[:-1], bounds[1:], strict=True)]


def _spelled(pieces: _Pieces, numbers: np.ndarray, words_per_text: np.ndarray, limit: int | None
             ) -> tuple[np.ndarray, np.ndarray]:
    """The ids of the words `numbers` (texts of `words_per_text` words each, one after another), each
    text's first `limit`, and how many each text has."""
    ptr = np.frombuffer(pieces.ptr, dtype=np.int64)
    flat = np.frombuffer(pieces.flat, dtype=np.int64)
    sizes = ptr[1:][numbers] - ptr[:-1][numbers]  # ids per word
    ends = np.cumsum(sizes)
    total = int(ends[-1]) if len(ends) else 0
    # each id's place in `flat`: its word's first place there plus its place within the word
    ids = flat[np.repeat(ptr[:-1][numbers] - (ends - sizes), sizes) + np.arange(total, dtype=np.int64)]
    text_ends = np.cumsum(words_per_text)
    bounds = np.concatenate(([0], ends))[np.concatenate(([0], text_ends))]
    counts = bounds[1:] - bounds[:-1]
    if limit is None or not len(counts) or int(counts.max()) <= limit:
        return ids, counts
    place = np.arange(total, dtype=np.int64) - np.repeat(bounds[:-1], counts)  # within its text
    return ids[place < limit], np.minimum(counts, limit)


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
