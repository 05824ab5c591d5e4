"""A search request and its validation: what a caller may ask and the clear errors for what it may not.

Decisions (documented in README.md, "Search"):
- The query must be a non-empty string once control characters are removed (newlines and tabs are
  kept: a pasted traceback is a valid query). Control characters are replaced by spaces.
- Queries longer than `MAX_QUERY_CHARS` are truncated, not refused, and the result's `query` field
  shows the text actually searched: prose keeps its beginning (cut at a word boundary); a multi-line
  paste (log, traceback) keeps its end, where the error line is.
- Regex metacharacters have no special meaning anywhere: every string is matched literally.
- `limit` is an integer in 1..200; `preset` names a ranking profile
  (`retrievers.ranking.profile.PRESETS`: quick, default, thorough); `intent` is one of
  `intent.INTENTS` or None (classify); globs are checked by `retrievers.scope`.

`validate` is the one check of a request: a front end that must refuse a bad request before it
searches (the LSP server's params, the CLI before it indexes) calls it and hands the engine the
`CheckedRequest`, which the engine does not check again; the front end only translates `QueryError`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from retrievers.base import QueryError
from retrievers.ranking.intent import INTENTS
from retrievers.ranking.profile import DEFAULT_PRESET, MODALITIES, PRESETS
from retrievers.scope import Scope

MAX_QUERY_CHARS = 1000
MIN_LIMIT, MAX_LIMIT = 1, 200
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f\u200b-\u200f\u2028\u2029\ufeff]")


@dataclass(frozen=True)
class SearchRequest:
    """One search: the query and how to run it. Validated by `validate` (the engine calls it)."""

    query: str
    limit: int = 10
    preset: str = DEFAULT_PRESET  # a name of retrievers.ranking.profile.PRESETS
    intent: str | None = None  # None: classify the query; else one of intent.INTENTS
    include: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()
    # Restrict the fused route to these retrievers (keeping the intent's weights; equal weights if none
    # of them has one) and skip the direct route; empty = chosen by intent and preset.
    modalities: tuple[str, ...] = field(default=())


@dataclass(frozen=True)
class CheckedRequest:
    """A validated request: cleaned query text, compiled scope, whether the text was shortened, and
    the request as it was asked."""

    text: str
    limit: int
    preset: str
    intent: str | None
    scope: Scope
    modalities: tuple[str, ...]
    truncated: bool
    asked: SearchRequest


def clean_query(query: object) -> tuple[str, bool]:
    """The searchable query text and whether it was truncated; QueryError if nothing is left."""
    if not isinstance(query, str):
        raise QueryError(f"query must be a string, got {type(query).__name__}")
    text = _CONTROL.sub(" ", query.replace("\r\n", "\n").replace("\r", "\n"))
    text = "\n".join(line.rstrip() for line in text.strip().split("\n"))
    if not text.strip():
        raise QueryError("query is empty")
    if len(text) <= MAX_QUERY_CHARS:
        return text, False
    if "\n" in text:
        tail = text[-MAX_QUERY_CHARS:]
        cut = tail.find("\n")
        tail = tail[cut + 1:] if 0 <= cut < len(tail) - 1 else tail
        return tail.strip() or text[-MAX_QUERY_CHARS:].strip(), True
    head = text[:MAX_QUERY_CHARS]
    cut = head.rfind(" ")
    head = head[:cut] if cut > MAX_QUERY_CHARS // 2 else head
    return head.strip(), True


def validate(request: SearchRequest | CheckedRequest) -> CheckedRequest:
    """Check every field of `request`; QueryError with a message saying what is wrong. A
    `CheckedRequest` was checked when it was made: it is returned as it is."""
    if isinstance(request, CheckedRequest):
        return request
    if not isinstance(request, SearchRequest):
        raise QueryError(f"expected a SearchRequest, got {type(request).__name__}")
    text, truncated = clean_query(request.query)
    limit = request.limit
    if isinstance(limit, bool) or not isinstance(limit, int):
        raise QueryError(f"limit must be an integer, got {limit!r}")
    if not MIN_LIMIT <= limit <= MAX_LIMIT:
        raise QueryError(f"limit must be between {MIN_LIMIT} and {MAX_LIMIT}, got {limit}")
    if request.preset not in PRESETS:
        raise QueryError(f"unknown preset {request.preset!r}; expected one of: {', '.join(PRESETS)}")
    intent = request.intent
    if intent is not None:
        intent = intent.strip() if isinstance(intent, str) else intent
        if intent not in INTENTS:
            raise QueryError(f"unknown intent {request.intent!r}; expected one of: {', '.join(INTENTS)}")
    for name in request.modalities:
        if name not in MODALITIES:
            raise QueryError(f"unknown modality {name!r}; expected one of: {', '.join(MODALITIES)}")
    scope = Scope.build(request.include, request.exclude)
    return CheckedRequest(text, limit, request.preset, intent, scope, tuple(request.modalities), truncated,
                          request)
