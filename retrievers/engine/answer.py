"""A search's answer as typed records: `SearchAnswer` (what `SearchEngine.search` returns) holding
its `ResultEntry`s. `to_json()` writes the result schema (`retrievers.engine.results`, docs/design.md
"Result schema"): `TOP_KEYS` then, per result, `RESULT_KEYS` (and `depth`, `also` when present), in
that order. The front ends read the records and call `to_json()` where they answer in JSON.

`intent` and `index` stay JSON objects (`index` grows per front end: `roots`, `errors`, `notes`);
an entry's `explain` is written out when the entry is made (floats rounded, detail records as dicts).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

TOP_KEYS = ("query", "match", "no_match", "total", "preset", "intent", "strategy", "modalities", "results",
            "index", "timings_ms")
RESULT_KEYS = ("path", "uri", "start_line", "end_line", "line", "column", "symbol", "kind", "language",
               "labels", "score", "snippet", "explain", "full_start_line", "full_end_line", "lines_total")


@dataclass(frozen=True, slots=True)
class ResultEntry:
    """One result: where it is (1-based inclusive lines shown; `line`/`column` where the cursor goes),
    what it is, its score and snippet, why it ranks (`explain`), the whole span it stands for
    (`full_start_line`..`full_end_line`, `lines_total` lines), and when present its impact `depth`
    and the file's other hits folded under it (`also`)."""

    path: str
    uri: str
    start_line: int
    end_line: int
    line: int
    column: int
    symbol: str | None
    kind: str
    language: str | None
    labels: tuple[str, ...]
    score: float
    snippet: str
    explain: dict[str, Any]
    full_start_line: int
    full_end_line: int
    lines_total: int
    depth: int | None = None
    also: list[dict[str, Any]] | None = None

    def to_json(self) -> dict[str, Any]:
        """The result as the schema writes it."""
        out: dict[str, Any] = {
            "path": self.path,
            "uri": self.uri,
            "start_line": self.start_line,
            "end_line": self.end_line,
            "line": self.line,
            "column": self.column,
            "symbol": self.symbol,
            "kind": self.kind,
            "language": self.language,
            "labels": list(self.labels),
            "score": self.score,
            "snippet": self.snippet,
            "explain": self.explain,
            "full_start_line": self.full_start_line,
            "full_end_line": self.full_end_line,
            "lines_total": self.lines_total,
        }
        if self.depth is not None:
            out["depth"] = self.depth
        if self.also:
            out["also"] = self.also
        return out


@dataclass(frozen=True, slots=True)
class SearchAnswer:
    """A search's answer: the query searched, whether a lookup found its subject (`match`, and
    `no_match` in words), how many results were ranked before the cut (`total`), the preset, the
    intent, the route (`strategy`, `modalities`), the results best first, the index's state, timings."""

    query: str
    match: str
    no_match: str | None
    total: int
    preset: str
    intent: dict[str, Any] | None
    strategy: str
    modalities: tuple[str, ...]
    results: tuple[ResultEntry, ...]
    index: dict[str, Any]
    timings_ms: dict[str, float]

    def to_json(self) -> dict[str, Any]:
        """The answer as the result schema writes it (a new document: its caller may add to it)."""
        return {
            "query": self.query,
            "match": self.match,
            "no_match": self.no_match,
            "total": self.total,
            "preset": self.preset,
            "intent": dict(self.intent) if self.intent is not None else None,
            "strategy": self.strategy,
            "modalities": list(self.modalities),
            "results": [entry.to_json() for entry in self.results],
            "index": dict(self.index),
            "timings_ms": dict(self.timings_ms),
        }
