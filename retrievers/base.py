"""The one small interface every retriever implements, and the records they exchange.

Every retriever (text, semantic, structural, graph) answers `search(query, limit, scope)` with
`(chunk id, score)` hits, best first, within the request's scope; those that keep an index of their
own (text, semantic) also take `update`/`remove`. Fusion (`retrievers.ranking.rrf`) works on these lists.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from indexing.records import Chunk

if TYPE_CHECKING:
    from retrievers.scope import Scope


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
    # Chunks no hit may name (the fused route's boilerplate); the limit counts the hits returned.
    exclude: frozenset[int] = frozenset()


@dataclass(slots=True)
class Hit:
    """One retriever result: a chunk id and a score (higher is better) plus optional detail."""

    chunk_id: int
    score: float
    # Retriever-specific detail carried into `explain` (e.g. matched lines, call-site line, depth).
    detail: dict[str, Any] = field(default_factory=dict)


@runtime_checkable
class Retriever(Protocol):
    """What the routes and fusion call: the best `limit` hits for `query` among the chunks `scope`
    admits, best first. The scope is built once per request (`request.validate`) and applied here,
    before the list is cut to `limit`; nothing downstream filters by scope again."""

    name: str

    def search(self, query: Query, limit: int, scope: Scope) -> list[Hit]:
        """Best `limit` hits for `query` within `scope`, best first."""
        ...


@runtime_checkable
class IndexedRetriever(Retriever, Protocol):
    """A retriever that keeps its own index of the chunks, kept in step with the store."""

    def update(self, added: Sequence[Chunk], removed_ids: Sequence[int]) -> None:
        """Add new or changed chunks and drop removed ones."""
        ...

    def remove(self, ids: Sequence[int]) -> None:
        """Drop chunks by id."""
        ...
