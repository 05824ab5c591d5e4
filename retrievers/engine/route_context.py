"""The state one search carries through a route: the request, its profile, the snapshot, the retrievers.

`RouteContext` times each retriever call and turns a failing retriever into an empty answer with a
reason (`errors`), so neither route (`engine.direct_route`, `engine.fused_route`) repeats
that. `graph_located` turns a graph hit into a result (a call site's line, a subclass, an affected
definition); both routes use it.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from indexing.records import Chunk
from retrievers.base import GraphDetail, Hit, Query, QueryError, Retriever, RetrieverError
from retrievers.engine.request import CheckedRequest
from retrievers.engine.results import Located
from retrievers.ranking.intent import Intent
from retrievers.ranking.priors import label_factor, wanted_labels
from retrievers.ranking.profile import RankingProfile
from retrievers.scope import Scope
from retrievers.semantic.tiered import TieredSemantic
from retrievers.snapshot import Snapshot
from retrievers.sources.graph_retriever import GraphRetriever
from retrievers.sources.structural import StructuralRetriever
from retrievers.sources.text import TextRetriever

log = logging.getLogger("retrievers.routing")  # one logger name for both routes
# Structural match tiers that name the definition itself (not loose word matches).
NAME_TIERS = frozenset({"exact", "exact_folded", "qualified", "last_part", "prefix"})
# Tiers that find a definition of the name itself (any case, or the last part of a dotted name): a lookup
# whose structural hits have none of them found no definition so named (only names containing its words).
DEFINING_MATCHES = frozenset({"exact", "exact_folded", "qualified", "last_part"})
# Every route ranks at least this deep, then cuts to the limit: the first k results are the same for
# every limit from k to RANK_DEPTH (editors ask for 30, the CLI for 10).
RANK_DEPTH = 30


@dataclass(frozen=True)
class Retrievers:
    """The engine's four retrievers over one snapshot; `graph` is None when the call graph could not be
    built, `semantic` when embeddings are off or absent."""

    text: TextRetriever
    structural: StructuralRetriever
    graph: GraphRetriever | None
    semantic: TieredSemantic | None

    def get(self, modality: str) -> Retriever | None:
        """The retriever of a modality (None when absent); QueryError for an unknown name."""
        named: dict[str, Retriever | None] = {  # typed: mypy checks each against the protocol
            "text": self.text, "structural": self.structural, "graph": self.graph, "semantic": self.semantic}
        if modality not in named:
            raise QueryError(f"unknown modality {modality!r}")
        return named[modality]


@dataclass
class RouteContext:
    """Everything one search needs; the scope is the request's (`checked.scope`), built once."""

    checked: CheckedRequest
    intent: Intent
    query: Query
    snap: Snapshot
    retrievers: Retrievers
    profile: RankingProfile
    identifier_query: bool = False  # the query is nothing but the identifier it names
    root_parts: tuple[str, ...] = ()  # the workspace root's folder names: `mini.comment` may name its files
    timings: dict[str, float] = field(default_factory=dict)
    errors: dict[str, str] = field(default_factory=dict)  # modality -> why it gave no answer
    notes: list[str] = field(default_factory=list)  # e.g. semantic left out while the model loads
    total: int = 0  # the results the route ranked before the cut to the limit
    matched: bool | None = None  # a lookup (exact string, named definition, callers) found its subject;
    # None: the query is no lookup, or no retriever that could tell ran
    _wanted: frozenset[str] | None = field(default=None, repr=False)

    @property
    def scope(self) -> Scope:
        return self.checked.scope

    @property
    def depth(self) -> int:
        """How deep the routes rank before the cut: the limit, at least `RANK_DEPTH`."""
        return max(self.checked.limit, RANK_DEPTH)

    @property
    def fetch(self) -> int:
        """How many hits each retriever of the fused route fetches: the profile's pool for a limit up to
        `RANK_DEPTH` (`min_fetch`: what a limit of 10 always fetched, so the CLI's rankings stay as they
        were), `limit x fetch_factor` beyond it."""
        limit = self.checked.limit
        return self.profile.fetch_limit(0 if limit <= RANK_DEPTH else limit)

    def timed(self, name: str, run: Callable[[], list[Hit]]) -> list[Hit]:
        """Run one retriever, timing it; a failing retriever answers nothing (and says why)."""
        started = time.perf_counter()
        try:
            return run()
        except QueryError:
            raise
        except RetrieverError as exc:
            self.errors[name] = str(exc)
            return []
        except Exception as exc:  # a retriever bug must not take the whole search down
            log.exception("retriever %s failed", name)
            self.errors[name] = f"{type(exc).__name__}: {exc}"
            return []
        finally:
            self.timings[name] = self.timings.get(name, 0.0) + (time.perf_counter() - started) * 1000

    def search(self, modality: str, query: Query, limit: int) -> list[Hit]:
        """One retriever's hits within the request's scope, timed (none when it is absent)."""
        retriever = self.retrievers.get(modality)
        if retriever is None:
            return []
        return self.timed(modality, lambda: retriever.search(query, limit, self.scope))

    def wanted(self) -> frozenset[str]:
        """The labels the query or its scope asks for (`priors.wanted_labels`), worked out once."""
        if self._wanted is None:
            self._wanted = wanted_labels(self.checked.text, self.checked.scope)
        return self._wanted

    def label_rank(self, chunk: Chunk) -> float:
        return label_factor(chunk.labels, self.wanted(), self.profile.priors)[0]


def identifier_query(text: str, intent: Intent) -> bool:
    """True when the query is nothing but the identifier it names (`raise_for_status`, `def X`)."""
    if not intent.symbol or intent.name != "find_definition":
        return False
    bare = text.strip().strip("`?").removesuffix("()")
    words = bare.split()
    return len(words) == 1 or (len(words) == 2 and words[0].lower() in
                               ("def", "class", "func", "fn", "function", "struct", "interface"))


def graph_located(ctx: RouteContext, chunk: Chunk, hit: Hit, explain: dict[str, Any]) -> Located:
    """A graph hit as a result: a call site's line, an inheriting class, or an affected definition."""
    detail = hit.detail
    located = Located(chunk, hit.score, explain)
    if not isinstance(detail, GraphDetail):
        return located
    if detail.relation == "call":
        located.start_line = located.end_line = detail.line
        located.symbol = detail.caller if detail.caller is not None else chunk.symbol
        caller_id = detail.caller_def_id
        d = ctx.snap.definitions.get(caller_id) if caller_id is not None else None
        if d is not None:  # the caller's own kind, not that of the chunk around the call (a class, a block)
            located.kind = d.kind
        return located
    def_id = detail.def_id if detail.def_id is not None else detail.caller_def_id
    d = ctx.snap.definitions.get(def_id) if def_id is not None else None
    if d is not None:
        located.start_line, located.end_line = d.start_line, d.end_line
        located.symbol, located.kind = d.qualified_name, d.kind
    if detail.relation == "impact" and detail.depth is not None:
        located.depth = detail.depth
    return located
