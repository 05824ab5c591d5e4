"""The state one search carries through a route: the engine's retrievers, the request, the snapshot.

`RouteContext` times each retriever call and turns a failing retriever into an empty answer with a
reason (`errors`), so neither route (`retrievers.direct_route`, `retrievers.routing`) repeats that.
`graph_located` turns a graph hit into a result (a call site's line, a subclass, an affected
definition); both routes use it.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from indexing.records import Chunk
from retrievers.base import Hit, Query, QueryError, RetrieverError
from retrievers.graph_retriever import GraphRetriever
from retrievers.intent import Intent
from retrievers.priors import RankingConfig, label_factor, wanted_labels
from retrievers.request import CheckedRequest
from retrievers.results import Located
from retrievers.snapshot import Snapshot
from retrievers.structural import StructuralRetriever
from retrievers.text import TextRetriever
from retrievers.tiered import TieredSemantic

log = logging.getLogger("retrievers.routing")
# Structural match tiers that name the definition itself (not loose word matches).
NAME_TIERS = frozenset({"exact", "exact_folded", "qualified", "last_part", "prefix"})


@dataclass
class Retrievers:
    """The engine's four retrievers; `semantic` is None when embeddings are off or absent."""

    text: TextRetriever
    structural: StructuralRetriever
    graph: GraphRetriever | None  # None when the call graph could not be built
    semantic: TieredSemantic | None


@dataclass
class RouteContext:
    """Everything one search needs."""

    checked: CheckedRequest
    intent: Intent
    query: Query
    snap: Snapshot
    retrievers: Retrievers
    config: RankingConfig
    identifier_query: bool
    file_decay: float = 0.85  # score factor per result already listed from the same file (0: one per file)
    # Chunks of one split definition: "before" fusion each list keeps the definition once (its best
    # part's rank); "after": fused separately, the best part kept; "off": separate results.
    definition_grouping: str = "before"
    rrf_k: int | None = None  # one k for every preset; None: preset_k, then fusion.PRESETS' k
    weights: dict[str, dict[str, float]] | None = None  # per-intent overrides of fusion.WEIGHTS
    timings: dict[str, float] = field(default_factory=dict)
    errors: dict[str, str] = field(default_factory=dict)  # modality -> why it gave no answer
    notes: list[str] = field(default_factory=list)  # e.g. semantic left out while the model loads
    preset_k: dict[str, int] = field(default_factory=dict)  # per-preset overrides of fusion.PRESETS' k

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

    def admits(self, chunk_id: int) -> bool:
        chunk = self.snap.chunks.get(chunk_id)
        return chunk is not None and self.checked.scope.admits(chunk.path)

    def wanted(self) -> frozenset[str]:
        return wanted_labels(self.checked.text, self.checked.scope)

    def label_rank(self, chunk: Chunk) -> float:
        return label_factor(chunk.labels, self.wanted(), self.config)[0]


def structural_hits(ctx: RouteContext, query: Query, limit: int) -> list[Hit]:
    return ctx.retrievers.structural.search(query, limit)


def graph_search(ctx: RouteContext, query: Query, limit: int) -> list[Hit]:
    graph = ctx.retrievers.graph
    return graph.search(query, limit) if graph is not None else []


def graph_located(ctx: RouteContext, chunk: Chunk, hit: Hit, explain: dict[str, Any]) -> Located:
    """A graph hit as a result: a call site's line, an inheriting class, or an affected definition."""
    detail = hit.detail
    located = Located(chunk, hit.score, explain)
    relation = detail.get("relation")
    if relation == "call" and isinstance(detail.get("line"), int):
        located.start_line = located.end_line = int(detail["line"])
        caller = detail.get("caller")
        located.symbol = caller if isinstance(caller, str) else chunk.symbol
        return located
    def_id = detail.get("def_id", detail.get("caller_def_id"))
    d = ctx.snap.definitions.get(def_id) if isinstance(def_id, int) else None
    if d is not None:
        located.start_line, located.end_line = d.start_line, d.end_line
        located.symbol, located.kind = d.qualified_name, d.kind
    if relation == "impact" and isinstance(detail.get("depth"), int):
        located.depth = int(detail["depth"])
    return located
