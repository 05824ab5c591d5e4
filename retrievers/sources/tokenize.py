"""Identifier splitting shared by the text index, the structural retriever and query analysis.

`split_identifier("getHTTPResponse_v2") -> ["get", "http", "response", "v", "2"]`: parts split on
non-alphanumerics (`_`, `$`, `.`, `-`...), lower->upper case changes, acronym ends (`HTTPResponse`
-> `HTTP`, `Response`) and letter/digit changes, all lowercased. Unicode letters are handled with
`str.isupper`/`str.isalpha`, so `größeWert` splits like `bigValue`.

`identifier_terms(text)` finds identifiers in free text or code and yields, for each occurrence, the
whole identifier lowercased followed by its parts when it has more than one (so a term frequency is
kept per occurrence; callers that need a set dedupe).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from functools import lru_cache
from typing import TypeVar

# An identifier: a letter, `_` or `$` followed by word characters or `$`. Digits alone are not
# identifiers (numbers in code are noise for search).
_IDENT_RE = re.compile(r"[^\W\d][\w$]*|\$[\w$]*")
# Whole identifiers longer than this are skipped (minified code, base64 blobs).
MAX_IDENT_LEN = 64

_LOWER, _UPPER, _DIGIT, _OTHER = 0, 1, 2, 3
MEMO_SIZE = 65536  # entries a `_Memo` keeps before it starts over
K = TypeVar("K", str, bytes)


def _kind(ch: str) -> int:
    if ch.isdigit():
        return _DIGIT
    if ch.isalpha():
        return _UPPER if ch.isupper() else _LOWER
    return _OTHER


# The same parts for an ASCII identifier in one regex pass (`_split_chars` is the definition; a unit
# test compares the two): an acronym before a capitalized word, an optionally capitalized lowercase
# word, an all-caps run, a digit run. Indexing meets tens of thousands of distinct identifiers.
_ASCII_PARTS = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+")


@lru_cache(maxsize=65536)
def _split_cached(identifier: str) -> tuple[str, ...]:
    if identifier.isascii():
        return tuple(p.lower() for p in _ASCII_PARTS.findall(identifier))
    return _split_chars(identifier)


def _split_chars(identifier: str) -> tuple[str, ...]:
    """The splitting rules, character by character (any Unicode: `str.isupper`, `str.isdigit`...)."""
    parts: list[str] = []
    current: list[str] = []
    prev = _OTHER
    n = len(identifier)
    for i, ch in enumerate(identifier):
        kind = _kind(ch)
        if kind == _OTHER:
            if current:
                parts.append("".join(current))
                current = []
            prev = _OTHER
            continue
        boundary = False
        if current:
            if kind == _DIGIT and prev != _DIGIT:
                boundary = True
            elif kind != _DIGIT and prev == _DIGIT:
                boundary = True
            elif kind == _UPPER and prev == _LOWER:
                boundary = True
            elif kind == _UPPER and prev == _UPPER and i + 1 < n and _kind(identifier[i + 1]) == _LOWER:
                # "HTTPResponse": the R starts a new word after the acronym.
                boundary = True
        if boundary:
            parts.append("".join(current))
            current = []
        current.append(ch)
        prev = kind
    if current:
        parts.append("".join(current))
    return tuple(p.lower() for p in parts)


def split_identifier(identifier: str) -> list[str]:
    """Lowercased parts of an identifier, split on `_`/punctuation, camelCase, acronyms and digits."""
    return list(_split_cached(identifier))


def identifiers(text: str) -> Iterator[str]:
    """Identifiers as written in `text` (not lowercased), in order, skipping over-long ones."""
    for match in _IDENT_RE.finditer(text):
        ident = match.group()
        if len(ident) <= MAX_IDENT_LEN:
            yield ident


def terms_for_identifier(identifier: str) -> list[str]:
    """The whole identifier lowercased, then its parts when it splits into more than one."""
    whole = identifier.lower()
    parts = _split_cached(identifier)
    if len(parts) == 1 and parts[0] == whole:
        return [whole]
    out = [whole] if whole.strip("_$") else []
    out.extend(parts)
    return out


def identifier_terms(text: str) -> Iterator[str]:
    """For each identifier in `text`: the whole identifier, then its parts, lowercased."""
    for ident in identifiers(text):
        yield from terms_for_identifier(ident)


class _Memo(dict[K, str]):
    """`make(key)` for each key, made on a miss and kept: a hit is one dict lookup in C, where
    `functools.lru_cache` also moves the entry to the front of its recency list (identifier text over
    the Django sdist's Python: ~1.2M runs, ~51k distinct; 0.36 -> 0.23 s). Emptied when it holds
    `MEMO_SIZE` entries (the sdist's and transformers' distinct runs fit)."""

    def __init__(self, make: Callable[[K], str]) -> None:
        super().__init__()
        self._make: Callable[[K], str] = make

    def __missing__(self, key: K) -> str:
        if len(self) >= MEMO_SIZE:
            self.clear()
        value = self[key] = self._make(key)
        return value


def _identifier_joined(identifier: str) -> str:
    """An identifier's terms joined by spaces ("" for an over-long one)."""
    return " ".join(terms_for_identifier(identifier)) if len(identifier) <= MAX_IDENT_LEN else ""


_joined_terms = _Memo(_identifier_joined).__getitem__


# ASCII bytes that are not `[A-Za-z0-9_$]` (what `_IDENT_RE` matches in ASCII text) as spaces.
_NOT_IDENTIFIER = bytes(c if chr(c).isascii() and (chr(c).isalnum() or chr(c) in "_$") else 32
                        for c in range(256))
_DIGITS = "0123456789"


def _run_joined(run: bytes) -> str:
    """`_joined_terms` of the identifier an ASCII run of `[A-Za-z0-9_$]` holds: the run less its
    leading digits (where `_IDENT_RE` starts matching in it), "" for digits alone."""
    word = run.decode("ascii")
    if word[0] in _DIGITS:
        word = word.lstrip(_DIGITS)
    return _joined_terms(word) if word else ""


_joined_run_terms = _Memo(_run_joined).__getitem__


def identifier_text(text: str) -> str:
    """`" ".join(identifier_terms(text))`, computed once per distinct identifier (indexing a large
    tree meets the same names hundreds of thousands of times; map and filter keep the loop in C).
    ASCII text is cut into runs by one `bytes.translate` and `split` rather than the regex (the
    same identifiers: a unit test compares the two; 25% less time on the Django sdist's chunks)."""
    if text.isascii():
        runs = text.encode("ascii").translate(_NOT_IDENTIFIER).split()
        return " ".join(filter(None, map(_joined_run_terms, runs)))
    return " ".join(filter(None, map(_joined_terms, _IDENT_RE.findall(text))))
