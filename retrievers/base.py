"""The one small interface every retriever implements, and the records they exchange.

A retriever indexes chunks (by store id), keeps itself current with `update`/`remove`, and answers
`search` with `(chunk id, score)` hits, best first. Fusion (`retrievers.fusion`) works on these lists.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from indexing.records import Chunk


class RetrieverError(Exception):
    """A retriever could not answer (a broken index, a model that failed to load, ...)."""


class QueryError(ValueError):
    """The query or its options are invalid; the message says what is wrong."""


@dataclass(frozen=True)
class Query:
    """A parsed search request as retrievers see it."""

    text: str  # the query as typed (stripped)
    intent: str = "understand_code"
    symbol: str | None = None  # the identifier the query names, if any ("select_proxy")
    exact: str | None = None  # the exact string to match, if any (quotes removed)
    include: tuple[str, ...] = ()  # globs over workspace-relative paths
    exclude: tuple[str, ...] = ()


@dataclass
class Hit:
    """One retriever result: a chunk id and a score (higher is better) plus optional detail."""

    chunk_id: int
    score: float
    # Retriever-specific detail carried into `explain` (e.g. matched lines, call-site line, depth).
    detail: dict[str, Any] = field(default_factory=dict)


@runtime_checkable
class Retriever(Protocol):
    """index / update / remove / search over chunks identified by store id."""

    name: str

    def index(self, chunks: Sequence[Chunk]) -> None:
        """(Re)build from all chunks of the workspace."""

    def update(self, added: Sequence[Chunk], removed_ids: Sequence[int]) -> None:
        """Add new or changed chunks and drop removed ones."""

    def remove(self, ids: Sequence[int]) -> None:
        """Drop chunks by id."""

    def search(self, query: Query, limit: int) -> list[Hit]:
        """Best `limit` hits for `query`, best first."""
