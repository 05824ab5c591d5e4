"""The one small interface every retriever implements, and the records they exchange.

Every retriever (text, semantic, structural, graph) answers `search(query, limit, scope)` with
`(chunk id, score)` hits, best first, within the request's scope; those that keep an index of their
own (text, semantic) also take `update`/`remove`. Fusion (`retrievers.ranking.rrf`) works on these lists.

A hit's `detail` is its retriever's record (`TextDetail`, `SemanticDetail`, `StructuralDetail`,
`FileCardDetail`, `GraphDetail`: frozen, read by attribute); `as_dict()` writes it as a result's
`explain` shows it (`retrievers.engine.results`), the keys in the order they have always had.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
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
    # Chunks other retrievers ranked first (the fused route's text list), which a question's pool
    # (`retrievers.semantic.tiered`) has the transformer read too.
    candidates: tuple[int, ...] = ()


def _listed(out: dict[str, Any], parts: tuple[int, ...]) -> dict[str, Any]:
    """`out` with `parts` (the chunk ids that matched, `ranking.grouping`) last, when there are any."""
    if parts:
        out["parts"] = list(parts)
    return out


@dataclass(frozen=True, slots=True)
class TextDetail:
    """A text hit: `match` "bm25" (ranked by BM25), or "exact" (the string verified in the chunk: the
    absolute matching `lines`, whether a case-sensitive match, `split_literals` when the string was
    found split over adjacent string literals)."""

    match: str
    lines: tuple[int, ...] | None = None
    case_sensitive: bool | None = None
    split_literals: bool = False
    parts: tuple[int, ...] = ()

    def as_dict(self) -> dict[str, Any]:
        """The detail as `explain` writes it (absent fields left out)."""
        out: dict[str, Any] = {"match": self.match}
        if self.lines is not None:
            out["lines"] = list(self.lines)
        if self.case_sensitive is not None:
            out["case_sensitive"] = self.case_sensitive
        if self.split_literals:
            out["split_literals"] = True
        return _listed(out, self.parts)


@dataclass(frozen=True, slots=True)
class SemanticDetail:
    """A semantic hit: its `cosine`; the `tier` whose vectors ranked it and `query` "transformer" when
    the transformer read the question of a static-ranked hit; each tier's rank and cosine when the
    two tiers' rankings were blended (`retrievers.semantic.tiered`)."""

    cosine: float
    tier: str | None = None
    query: str | None = None
    static_rank: int | None = None
    static_cosine: float | None = None
    transformer_rank: int | None = None
    transformer_cosine: float | None = None
    parts: tuple[int, ...] = ()

    def as_dict(self) -> dict[str, Any]:
        """The detail as `explain` writes it (absent fields left out)."""
        out: dict[str, Any] = {"cosine": self.cosine}
        if self.tier is not None:
            out["tier"] = self.tier
        if self.query is not None:
            out["query"] = self.query
        if self.static_rank is not None:
            out["static_rank"] = self.static_rank
            out["static_cosine"] = self.static_cosine
        if self.transformer_rank is not None:
            out["transformer_rank"] = self.transformer_rank
            out["transformer_cosine"] = self.transformer_cosine
        return _listed(out, self.parts)


@dataclass(frozen=True, slots=True)
class StructuralDetail:
    """A structural hit: the definition (`def_id`, qualified `name`, `kind`, `path`, name `line`) and
    how its name matched the query (`match`: a tier of `retrievers.sources.structural`)."""

    def_id: int
    match: str
    name: str
    kind: str
    path: str
    line: int
    parts: tuple[int, ...] = ()

    def as_dict(self) -> dict[str, Any]:
        """The detail as `explain` writes it."""
        return _listed({"def_id": self.def_id, "match": self.match, "name": self.name, "kind": self.kind,
                        "path": self.path, "line": self.line}, self.parts)


@dataclass(frozen=True, slots=True)
class FileCardDetail:
    """A file-card hit (`retrievers.sources.filecards`): the file whose card matched."""

    path: str
    match: str = "file_card"
    parts: tuple[int, ...] = ()

    def as_dict(self) -> dict[str, Any]:
        """The detail as `explain` writes it."""
        return _listed({"match": self.match, "path": self.path}, self.parts)


@dataclass(frozen=True, slots=True)
class GraphDetail:
    """A graph hit (`retrievers.sources.graph_retriever`), by `relation`: "call" (a call site: its
    column span, the callee as written, the calling and called definitions; `resolved` False for a
    site of a name that resolves to nothing in the workspace), "inherits" (a subclass), "impact" (an
    affected definition, its `depth` and the `target_def_id` it reaches), "definition" (a definition
    the query's symbol names) or "callee"/"caller" (a neighbour of a seed, `via` the seed's chunk)."""

    relation: str
    path: str
    line: int
    def_id: int | None = None
    column: int | None = None
    end_column: int | None = None
    callee: str | None = None
    caller: str | None = None
    caller_def_id: int | None = None
    callee_def_id: int | None = None
    depth: int | None = None
    target_def_id: int | None = None
    name: str | None = None
    via: int | None = None
    resolved: bool = True
    parts: tuple[int, ...] = ()

    def as_dict(self) -> dict[str, Any]:
        """The detail as `explain` writes it: each relation's fields, in the order it has always had."""
        relation = self.relation
        out: dict[str, Any]
        if relation == "call":
            out = {"relation": relation, "path": self.path, "line": self.line, "column": self.column,
                   "end_column": self.end_column, "callee": self.callee, "caller": self.caller,
                   "caller_def_id": self.caller_def_id, "callee_def_id": self.callee_def_id}
        elif relation == "inherits":
            out = {"relation": relation, "path": self.path, "line": self.line, "column": self.column,
                   "caller_def_id": self.caller_def_id, "callee_def_id": self.callee_def_id}
        elif relation == "impact":
            out = {"relation": relation, "depth": self.depth, "def_id": self.def_id,
                   "target_def_id": self.target_def_id, "name": self.name, "path": self.path,
                   "line": self.line}
        elif relation == "definition":
            out = {"def_id": self.def_id, "relation": relation, "path": self.path, "line": self.line}
        else:  # "callee" / "caller": a seed's neighbour
            out = {"relation": relation, "via": self.via, "def_id": self.def_id, "name": self.name,
                   "path": self.path, "line": self.line}
        if not self.resolved:
            out["resolved"] = False
        return _listed(out, self.parts)


# What a hit's `detail` may be: one record per retriever.
Detail = TextDetail | SemanticDetail | StructuralDetail | FileCardDetail | GraphDetail
DETAILS = (TextDetail, SemanticDetail, StructuralDetail, FileCardDetail, GraphDetail)


@dataclass(slots=True)
class Hit:
    """One retriever result: a chunk id and a score (higher is better) plus optional detail."""

    chunk_id: int
    score: float
    # The retriever's detail, carried into `explain` (e.g. matched lines, call-site line, depth).
    detail: Detail | None = None


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
