"""The records the engine, its refresh phases and the index keeper share: how an engine is set up
(`EngineOptions`), what one refresh did (`RefreshResult`), and the progress callback a refresh
reports through (`Progress`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from indexing.workspace import UpdateResult
from retrievers.engine.lifecycle import EMPTY, IndexState
from retrievers.engine.spans import MAX_SPAN_LINES
from retrievers.semantic.tiered import TierBlend

if TYPE_CHECKING:
    from retrievers.semantic.models import TextEmbedder

__all__ = ["EngineOptions", "Progress", "RefreshResult"]

Progress = Callable[[str, int, int], None]  # (phase, done, total): ("indexing", 12, 84), ("embedding", ...)


@dataclass
class EngineOptions:
    """How the engine searches. `embedder` shares one loaded model between engines (tests, batch)."""

    model: str | None = None  # None: the static tier; a transformer by name (retrievers.semantic.models)
    # The transformer tier that fills in behind a static main tier (None or "": none). Its vectors
    # are made by `embed_transformer` (the server in the background, `codeseek index --transformer`)
    # and used wherever they exist; a transformer main model has no second tier.
    transformer: str | None = "minilm"
    transformer_embedder: TextEmbedder | None = None
    tier_blend: TierBlend = field(default_factory=TierBlend)
    # Load/save the call graph, PageRank, structural tables and vectors beside the index (a warm
    # process skips the builds). `persist_once`: only the first refresh of this engine does (the
    # language server: a warm start, while its later graphs change with every edit).
    persist_graph: bool = True
    persist_once: bool = False
    # Keep what each call-graph build read and resolved, so the next one reads only the changed files'
    # records and resolves only the call sites they could affect (`graph.incremental`): for servers,
    # which build again after every edit (on the Django sdist ~4 s whole, ~1.5 s so).
    incremental_graph: bool = False
    # Write those saved structures when the engine closes (`flush_writes`), not before the refresh
    # returns: a one-shot command (`codeseek search`) answers ~1 s sooner on a large tree, then saves.
    write_behind: bool = False
    # Freeze what a refresh made (`gc.freeze`) before the collector resumes: else the first allocation
    # after it runs a young collection over every object the refresh made (~0.4 s holding the GIL on
    # the Django sdist, a stall for every request meanwhile). For servers, whose memory release
    # (`lsp_server.process_tuning.release_memory`) thaws and collects everything now and then.
    freeze_after_refresh: bool = False
    embeddings: bool = True  # False: no semantic retriever, the model is never loaded
    # A refresh that embeds starts embedding once the chunks are known, beside the call graph and
    # the text index (retrievers.engine.embedding_phase); False: after them, as the language server does.
    embed_alongside: bool = True
    # Overrides of the shipped ranking profiles (retrievers.ranking.profile), applied to every preset: a
    # RankingProfile field or one of its priors' ("file_decay": 0, "k": 20...). For A/B runs.
    ranking: dict[str, Any] = field(default_factory=dict)
    embedder: TextEmbedder | None = None
    # A result longer than this many lines shows its best-matching part (retrievers.engine.spans); 0: whole.
    max_span_lines: int = MAX_SPAN_LINES


@dataclass
class RefreshResult:
    """What one refresh did."""

    update: UpdateResult | None  # None when `paths=[]` (no workspace update asked)
    chunks: int = 0
    definitions: int = 0
    embedded: int = 0  # chunks embedded by this refresh
    pending: int = 0  # chunks still without a vector
    reconciled: bool = False  # the first refresh in this process checked the indexes against the store
    state: IndexState = EMPTY
    notes: list[str] = field(default_factory=list)  # e.g. the embedding model changed
    seconds: dict[str, float] = field(default_factory=dict)  # update, sync, graph, embed

    # Counters of the workspace update, for callers that summarize a refresh like an update.
    @property
    def parsed(self) -> int:
        return self.update.parsed if self.update else 0

    @property
    def unchanged(self) -> int:
        return self.update.unchanged if self.update else 0

    @property
    def scanned(self) -> int:
        return self.update.scanned if self.update else 0

    @property
    def changed(self) -> bool:
        """Whether the indexes now hold something they did not before (reconciled, updated, embedded)."""
        return self.reconciled or bool(self.update is not None and self.update.changed) or self.embedded > 0
