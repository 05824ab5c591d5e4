"""The structural retriever: an in-memory index of the workspace's definitions, searched by name.

Match tiers, best first (docs/design.md "Ranking signals"): exact name (case-sensitive, then
case-insensitive) > qualified name ("Session.request", "sessions.Session") > the last part of a dotted
query alone > split-identifier match
("strip auth" meets `should_strip_auth`, scored by the share of query terms matched), where a name the
query is a prefix of ranks like a split match of 3/4 of the terms (a little above its own split match).
Within a tier classes and functions rank above variables, and source files above tests. A natural-
language query is scored by split-identifier matching over its content words, so "strip credentials"
still meets `should_strip_auth` partially. Each hit is the chunk containing the definition.

The index is rebuilt from `definitions_provider()` on `index` and lazily after `update`/`remove`
(dictionaries and sorted lists only, cheap to rebuild).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from itertools import chain
from pathlib import PurePosixPath
from typing import Any

import numpy as np

from indexing.labels import labels_for
from indexing.name_table import NameTable
from indexing.records import Chunk, Definition
from indexing.symbols import CLASS_KINDS
from retrievers.base import Hit, Query, StructuralDetail
from retrievers.scope import EVERYWHERE, Scope
from retrievers.sources.split_scoring import ranked_matches, split_scores
from retrievers.sources.tokenize import split_identifier
from retrievers.sources.words import home_file, prefix_match, query_keywords

TOP_KINDS = frozenset({"class", "interface", "struct", "trait", "enum", "type", "function", "method",
                       "constructor", "protocol", "record", "object", "impl", "module", "macro"})
VALUE_KINDS = frozenset({"variable", "constant", "field", "property", "attribute", "enum_member"})
_NOISY_LABELS = frozenset({"test", "example", "vendor", "generated", "doc"})
_PACKAGE_STEMS = frozenset({"__init__", "index", "mod", "package-info", "lib", "main"})


@dataclass(frozen=True)
class StructuralOptions:
    """Scores per match tier (a hit's score is its tier plus small within-tier adjustments)."""

    exact: float = 100.0
    exact_folded: float = 90.0
    qualified: float = 80.0
    last_part: float = 77.0  # dotted query: the name equals its last part, the qualifiers do not match
    split: float = 40.0  # + split_span * share of query terms matched + 5 * share of name parts used
    split_span: float = 30.0
    # The query is a prefix of the name ("merge_env" -> merge_environment_settings): split + span * 0.75
    # + 5 * len(query) / len(name), so above a split match of under ~3/4 of the terms, below a full one.
    prefix_share: float = 0.75
    prefix_bonus: float = 3.0  # a name that also has a split match gets this on top of it
    stem_credit: float = 0.8  # a term matching a name part by prefix ("redirects" ~ "redirect")
    min_prefix_len: int = 3  # name-prefix tier: the query needs at least this many letters
    stem_min_prefix: int = 4  # split tier: a term meets a longer/shorter part sharing >= this prefix
    max_prefix_candidates: int = 500


class _MatchArrays:
    """Each name part's definitions as an int64 array (`retrievers.sources.split_scoring`), per definition
    its count of name parts, its within-tier adjustment and its tie order."""

    def __init__(self, by_part: NameTable, name_lengths: np.ndarray, adjust: np.ndarray,
                 order: np.ndarray) -> None:
        self._by_part = by_part
        self.name_lengths = name_lengths
        self.adjust = adjust
        self.order = order

    def part(self, part: str) -> np.ndarray:
        return self._by_part.ids(part)


def module_parts(path: str) -> list[str]:
    """Folder and module names of a file, outermost first: `src/requests/sessions.py` ->
    ["src", "requests", "sessions"]; an `__init__.py`/`index.js` is known by its folder alone."""
    p = PurePosixPath(path)
    parts = [x for x in (*p.parent.parts, p.stem) if x not in ("", ".")]
    if parts and parts[-1] in _PACKAGE_STEMS:
        parts = parts[:-1]
    return parts


class StructuralRetriever:
    """Definitions index: exact, case-insensitive, qualified, split-identifier and prefix matches."""

    name = "structural"

    def __init__(
        self,
        definitions_provider: Callable[[], Sequence[Definition]],
        chunk_for_definition: Callable[[Definition], int | None],
        options: StructuralOptions | None = None,
    ) -> None:
        self._provider = definitions_provider
        self._chunk_for = chunk_for_definition
        self.options = options or StructuralOptions()
        self._dirty = True
        self._defs: Sequence[Definition] = []
        # name / case-folded name (members ascending) / name part -> indexes into _defs
        self._by_name = self._by_folded = self._by_part = NameTable.build({})
        self._name_lengths = np.empty(0, dtype=np.int64)  # per definition: its count of name parts
        self._adjust = np.empty(0, dtype=np.float64)  # per definition: its within-tier adjustment
        self._order = np.empty(0, dtype=np.int64)  # per definition: its rank in tie order
        self._chunk_cache: dict[int, int | None] = {}
        self._module_cache: dict[str, list[str]] = {}  # path -> its folder and module names
        self._match_arrays: _MatchArrays | None = None

    # -- Retriever interface ---------------------------------------------------------------------------

    def index(self, chunks: Sequence[Chunk] | Mapping[int, Chunk]) -> None:
        """Build from the definitions provider (`chunks` is not read: a definition names its chunk)."""
        self._build(self._provider())

    def update(self, added: Sequence[Chunk], removed_ids: Sequence[int]) -> None:
        self._dirty = True

    def remove(self, ids: Sequence[int]) -> None:
        self._dirty = True

    def search(self, query: Query, limit: int, scope: Scope = EVERYWHERE) -> list[Hit]:
        """Definitions in files `scope` admits that the query's symbol or words name, best first."""
        if limit <= 0:
            return []
        exclude = query.exclude
        scored = self.match(query.symbol, query.text,
                            top=limit * 3 + 20 + min(len(exclude), limit) if scope.unrestricted else None)
        hits: dict[int, Hit] = {}
        for idx, score, kind in scored:
            d = self._defs[idx]
            if not scope.admits(d.path):
                continue
            chunk_id = self._chunk_id(idx)
            if chunk_id is None or chunk_id in hits or chunk_id in exclude:
                continue  # the best-scored definition in a chunk speaks for it
            detail = StructuralDetail(d.id, kind, d.qualified_name, d.kind, d.path, d.name_line)
            hits[chunk_id] = Hit(chunk_id, score, detail)
            if len(hits) >= limit:
                break
        return list(hits.values())

    # -- Matching --------------------------------------------------------------------------------------

    def definitions(self) -> Sequence[Definition]:
        """The indexed definitions (rebuilding first if the store changed)."""
        self._ensure()
        return self._defs

    def match(
        self, symbol: str | None, text: str = "", top: int | None = None
    ) -> list[tuple[int, float, str]]:
        """(definition index, score, match kind), best first, for a symbol and/or free text; the best
        `top` only when given (ties: the definition in its home file, the smaller one, path, line)."""
        self._ensure()
        target = (symbol or "").strip()
        if not target:
            words = text.split()
            if len(words) == 1 and split_identifier(words[0]):
                target = words[0].strip("`'\"()?")
        terms = list(dict.fromkeys(query_keywords(text))) if text else []
        last = target.replace("::", ".").replace("#", ".").rstrip(".").rsplit(".", 1)[-1]
        if last != target:
            # qualifiers are matched by `_qualifies`, not as words: "models.Model" asks for Model
            qualifiers = set(split_identifier(target[: -len(last)])) - set(split_identifier(last))
            terms = [t for t in terms if t not in qualifiers]
        if target and not terms:
            terms = [t for t in dict.fromkeys(split_identifier(last)) if len(t) >= 2]
        ids, scores = self._split_tier(terms)
        kinds = ["split"] * len(ids)
        if target:
            symbol_matches = self._match_symbol(target)
            if symbol_matches:
                ids, scores, kinds = self._with_symbol_matches(ids, scores, symbol_matches)
        arrays = self._arrays()
        return ranked_matches(ids, scores, kinds, arrays.adjust, arrays.order, top)

    def _split_tier(self, terms: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
        """(definition indexes, scores) of the definitions whose name parts the terms meet."""
        if not terms:
            return np.empty(0, dtype=np.int64), np.empty(0, dtype=np.float64)
        arrays = self._arrays()
        term_parts = [[(arrays.part(part), weight) for part, weight in self._parts_for_term(term)]
                      for term in terms]
        return split_scores(term_parts, arrays.name_lengths, self.options.split, self.options.split_span)

    def _with_symbol_matches(self, ids: np.ndarray, scores: np.ndarray,
                             symbol_matches: list[tuple[int, float, str]]
                             ) -> tuple[np.ndarray, np.ndarray, list[str]]:
        """The split tier with the symbol's matches folded in: a better score replaces a definition's
        split score (a prefix match that is also a split match gets the split score + prefix bonus, if
        more)."""
        best: dict[int, tuple[float, str]] = {}
        known = dict(zip(ids.tolist(), scores.tolist(), strict=True)) if len(ids) else {}
        for idx, score, kind in symbol_matches:
            held = best.get(idx)
            if held is None and idx in known:
                held = (known[idx], "split")
            if kind == "prefix" and held is not None and held[1] == "split":
                score = max(score, held[0] + self.options.prefix_bonus)
            if held is None or score > held[0]:
                best[idx] = (score, kind)
        rest = [k for k, idx in enumerate(ids.tolist()) if idx not in best]
        extra = list(best)
        merged_ids = np.concatenate((ids[rest], np.asarray(extra, dtype=np.int64)))
        extra_scores = np.asarray([best[i][0] for i in extra], dtype=np.float64)
        merged_scores = np.concatenate((scores[rest], extra_scores))
        return merged_ids, merged_scores, ["split"] * len(rest) + [best[i][1] for i in extra]

    def _arrays(self) -> _MatchArrays:
        """The tables as numpy arrays, made on first use after a build or a load."""
        arrays = self._match_arrays
        if arrays is None:
            arrays = self._match_arrays = _MatchArrays(self._by_part, self._name_lengths, self._adjust,
                                                       self._order)
        return arrays

    def _match_symbol(self, target: str) -> list[tuple[int, float, str]]:
        o = self.options
        parts = [p for p in target.replace("::", ".").replace("#", ".").split(".") if p]
        if not parts:
            return []
        last = parts[-1]
        folded = last.lower()
        out: list[tuple[int, float, str]] = []
        if len(parts) > 1:
            key = ".".join(parts).lower()
            for i in self._by_folded.get(folded):
                if self._qualifies(i, key):
                    out.append((i, o.qualified, "qualified"))
                else:
                    score = o.last_part if self._defs[i].name == last else o.last_part - 5.0
                    out.append((i, score, "last_part"))
            return out
        if len(folded) >= o.min_prefix_len:
            for name, idx in self._by_folded.starting_with(folded, o.max_prefix_candidates):
                score = o.split + o.split_span * o.prefix_share + 5.0 * len(folded) / max(len(name), 1)
                out.append((idx, score, "prefix"))
        out += [(i, o.exact_folded, "exact_folded") for i in self._by_folded.get(folded)]
        out += [(i, o.exact, "exact") for i in self._by_name.get(last)]
        return out

    def _qualifies(self, idx: int, key: str) -> bool:
        """True when the lowercased dotted `key` names the definition: it ends the qualified name
        ("session.send" for `Session.send`), and any qualifiers left over name folders or the module of
        its file, in order ("sessions.Session", "requests.Session" re-exported, "models.Model")."""
        d = self._defs[idx]
        qualified = (d.qualified_name or d.name).lower()
        if key == qualified or qualified.endswith("." + key):
            return True
        want = key.split(".")
        have = qualified.split(".")
        if len(want) <= len(have) or want[len(want) - len(have):] != have:
            return False
        modules = self._module_cache.get(d.path)
        if modules is None:
            modules = self._module_cache[d.path] = [m.lower() for m in module_parts(d.path)]
        rest = iter(modules)
        return all(any(part == m for m in rest) for part in want[: len(want) - len(have)])

    def _parts_for_term(self, term: str) -> list[tuple[str, float]]:
        out = [(term, 1.0)] if term in self._by_part else []
        n = self.options.stem_min_prefix
        if len(term) >= n:
            for part in self._by_part.names_from(term[:n]):
                if part != term and prefix_match(term, part, n):
                    out.append((part, self.options.stem_credit))
        return out

    @staticmethod
    def _kind_adjust(d: Definition) -> float:
        """Within a tier: classes/functions +2, other kinds +1, variables 0; tests, docs... -1.5."""
        adjust = 2.0 if d.kind in TOP_KINDS else 0.0 if d.kind in VALUE_KINDS else 1.0
        if _NOISY_LABELS.intersection(labels_for(d.path)):
            adjust -= 1.5
        return adjust

    # -- Index -----------------------------------------------------------------------------------------

    def _ensure(self) -> None:
        if self._dirty:
            self._build(self._provider())

    _STATE = ("_by_name", "_by_folded", "_by_part", "_name_lengths", "_adjust", "_order")

    def export_state(self) -> dict[str, Any]:
        """The built tables (plain data), for `indexing.persist` to save beside the index: the definitions
        themselves by id only (`import_state` takes the provider's, which the snapshot and the call graph
        already hold: reading them again cost a warm Django sdist call 0.13 s and their memory twice)."""
        ids = np.fromiter((d.id for d in self._defs), dtype=np.int64, count=len(self._defs))
        return {"_def_ids": ids, **{name: getattr(self, name) for name in self._STATE}}

    def import_state(self, state: dict[str, Any]) -> bool:
        """Take tables saved by `export_state` instead of building them; False when they do not fit (the
        provider's definitions are not those they were built from)."""
        if not isinstance(state, dict) or set(state) != {"_def_ids", *self._STATE}:
            return False
        defs = self._provider()
        ids = getattr(defs, "ids", None)  # (a saved table's rows name their ids without being made)
        if ids is None:
            ids = np.fromiter((d.id for d in defs), dtype=np.int64, count=len(defs))
        if not np.array_equal(ids, np.asarray(state["_def_ids"])):
            return False
        self._defs = defs
        for name in self._STATE:
            setattr(self, name, state[name])
        self._chunk_cache, self._module_cache, self._dirty = {}, {}, False
        self._match_arrays = None
        return True

    def _chunk_id(self, idx: int) -> int | None:
        if idx not in self._chunk_cache:
            self._chunk_cache[idx] = self._chunk_for(self._defs[idx])
        return self._chunk_cache[idx]

    def _build(self, definitions: Sequence[Definition]) -> None:
        """The tables over arrays (a refresh rebuilds them: on the Django sdist's 42,673 definitions
        0.31 s as dictionaries of lists, ~0.1 s so): names, folded names and name parts are coded once
        each, and `NameTable.grouped` orders the (name, definition) pairs as the dictionaries did."""
        defs = list(definitions)
        count = len(defs)
        positions = np.arange(count, dtype=np.int64)
        first: dict[str, int] = {}  # name -> its code, in order of first occurrence
        name_codes = np.fromiter((first.setdefault(d.name, len(first)) for d in defs), dtype=np.int64,
                                 count=count)
        names = list(first)
        folded: dict[str, int] = {}
        folded_codes = np.fromiter((folded.setdefault(name.lower(), len(folded)) for name in names),
                                   dtype=np.int64, count=len(names))
        part_codes: dict[str, int] = {}
        parts_of = [[part_codes.setdefault(part, len(part_codes))
                     for part in dict.fromkeys(split_identifier(name))] for name in names]
        parts_per_name = np.fromiter(map(len, parts_of), dtype=np.int64, count=len(names))
        # (name part, definition) pairs: per name in order of first occurrence, its definitions in order,
        # each with its parts, as `by_part.setdefault(part, []).extend(ids)` over `by_name` listed them
        by_first_name = np.argsort(name_codes, kind="stable")
        repeats = parts_per_name[name_codes[by_first_name]]
        flat_parts = np.fromiter(chain.from_iterable(parts_of), dtype=np.int64,
                                 count=int(parts_per_name.sum()))
        name_starts = np.cumsum(parts_per_name) - parts_per_name
        within = (np.arange(int(repeats.sum()), dtype=np.int64)
                  - np.repeat(np.cumsum(repeats) - repeats, repeats))
        pair_parts = flat_parts[np.repeat(name_starts[name_codes[by_first_name]], repeats) + within]
        self._defs = defs
        self._by_name = NameTable.grouped(names, name_codes, positions)
        self._by_folded = NameTable.grouped(list(folded), folded_codes[name_codes], positions)
        self._by_part = NameTable.grouped(list(part_codes), pair_parts, np.repeat(by_first_name, repeats))
        self._name_lengths = parts_per_name[name_codes]
        adjust_of: dict[tuple[str, str], float] = {}  # (kind, path) -> adjustment: it reads no more
        self._adjust = np.fromiter(
            (adjust_of[key] if (key := (d.kind, d.path)) in adjust_of else
             adjust_of.setdefault(key, self._kind_adjust(d)) for d in defs), dtype=np.float64, count=count)
        # Ties go to a type declared in its home file (`Foo.cs` for the partial class `Foo` also declared
        # in `Foo.Async.cs`), then to the smaller (more specific) one, then by path, line and position.
        path_codes: dict[str, int] = {}
        path_of = np.fromiter((path_codes.setdefault(d.path, len(path_codes)) for d in defs), dtype=np.int64,
                              count=count)
        path_rank = np.empty(len(path_codes), dtype=np.int64)
        path_list = list(path_codes)
        path_rank[sorted(range(len(path_list)), key=path_list.__getitem__)] = np.arange(len(path_list))
        away = np.fromiter((d.kind not in CLASS_KINDS or not home_file(d.path, d.name) for d in defs),
                           dtype=np.bool_, count=count)
        spans = np.fromiter((d.end_line - d.start_line for d in defs), dtype=np.int64, count=count)
        starts = np.fromiter((d.start_line for d in defs), dtype=np.int64, count=count)
        self._order = np.empty(count, dtype=np.int64)
        self._order[np.lexsort((positions, starts, path_rank[path_of], spans, away))] = positions
        self._chunk_cache = {}
        self._module_cache = {}
        self._match_arrays = None
        self._dirty = False
