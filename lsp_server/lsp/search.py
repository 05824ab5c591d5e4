"""`workspace/semanticSearch`: params validation, one search per root, results merged by score.

Params: `{query: str, limit?: int (1..200, default 10), preset?: "quick"|"default"|"thorough",
intent?: one of retrievers.ranking.intent.INTENTS, include?: [glob], exclude?: [glob]}`. Anything invalid
raises `JsonRpcInvalidParams` with a message saying what is wrong. This module checks only the
params' JSON shape (an object, known keys, strings and lists where the request has them); the
engine's validation (`retrievers.engine.request.validate`, run once here: the roots' engines take
the checked request as it is) decides everything else, so the CLI and the server agree.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from pygls.exceptions import JsonRpcInvalidParams

from lsp_server.lsp import convert
from lsp_server.lsp.indexer import RootIndex
from lsp_server.lsp.navigation import Lines
from retrievers.base import QueryError
from retrievers.engine.answer import ResultEntry, SearchAnswer
from retrievers.engine.lifecycle import EMPTY, READY, least_advanced
from retrievers.engine.request import CheckedRequest, SearchRequest, validate
from retrievers.engine.results import FOUND, NO_MATCH, RANKED

PARAM_KEYS = ("query", "limit", "preset", "intent", "include", "exclude")
# Protocol fields a client may add to any request.
_IGNORED_KEYS = ("workDoneToken", "partialResultToken")


def _globs(params: Mapping[str, Any], key: str) -> tuple[str, ...]:
    value = params.get(key)
    if value is None:
        return ()
    if not isinstance(value, list) or not all(isinstance(g, str) for g in value):
        raise JsonRpcInvalidParams(f"{key} must be a list of glob strings, got {value!r}")
    return tuple(value)


def parse_params(params: Any, default_preset: str) -> CheckedRequest:
    """The validated request of raw request params; JsonRpcInvalidParams when invalid."""
    if not isinstance(params, Mapping):
        raise JsonRpcInvalidParams(
            f"params must be an object {{query, limit?, preset?, intent?, include?, exclude?}}, "
            f"got {type(params).__name__}")
    unknown = sorted(set(params) - set(PARAM_KEYS) - set(_IGNORED_KEYS))
    if unknown:
        raise JsonRpcInvalidParams(f"unknown parameter(s) {', '.join(unknown)}; "
                                   f"expected {', '.join(PARAM_KEYS)}")
    if "query" not in params:
        raise JsonRpcInvalidParams("query is required")
    for key in ("preset", "intent"):
        value = params.get(key)
        if value is not None and not isinstance(value, str):
            raise JsonRpcInvalidParams(f"{key} must be a string, got {value!r}")
    limit = params.get("limit", 10)
    request = SearchRequest(
        query=params["query"],
        limit=limit,
        preset=params.get("preset") or default_preset,
        intent=params.get("intent") or None,
        include=_globs(params, "include"),
        exclude=_globs(params, "exclude"),
    )
    try:
        return validate(request)
    except QueryError as exc:
        raise JsonRpcInvalidParams(str(exc)) from exc


def _merge_index(states: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """One index summary for several roots: the least advanced state, summed counts."""
    if len(states) == 1:
        return dict(states[0])
    state = least_advanced(s.get("state", READY) for s in states)
    models = sorted({str(s["model"]) for s in states if s.get("model")})
    return {
        "state": state,
        "files": sum(int(s.get("files", 0)) for s in states),
        "chunks": sum(int(s.get("chunks", 0)) for s in states),
        "embedded": sum(int(s.get("embedded", 0)) for s in states),
        "model": models[0] if len(models) == 1 else (models or None),
        "roots": [dict(s) for s in states],
    }


def empty_result(request: CheckedRequest, state: str) -> dict[str, Any]:
    """The answer when no root can search yet (no folder open, or phase 1 still running)."""
    index = {"state": state, "files": 0, "chunks": 0, "embedded": 0, "model": None}
    return SearchAnswer(query=request.asked.query, match=RANKED, no_match=None, total=0,
                        preset=request.preset, intent=None, strategy="none", modalities=(), results=(),
                        index=index, timings_ms={}).to_json()


def _merge_match(answers: Sequence[SearchAnswer]) -> tuple[str, str | None]:
    """One `match` (and `no_match`) for several roots: found in any root is found; none only when every
    root's lookup found nothing (the first root's words then)."""
    kinds = [a.match for a in answers]
    if FOUND in kinds:
        return FOUND, None
    if kinds and all(kind == NO_MATCH for kind in kinds):
        return NO_MATCH, answers[0].no_match
    return RANKED, None


def _selection_line(lines: Lines, entry: ResultEntry) -> bytes | None:
    """The bytes of the line a result's `column` is on (None without a column: nothing to convert)."""
    return lines.get(entry.path, entry.line) if entry.column else None


def search_roots(roots: Sequence[RootIndex], request: CheckedRequest,
                 encoding: str = "utf-16") -> dict[str, Any]:
    """Search every root that finished phase 1; merge results by score (best first) up to `limit`
    (`total`: the roots' totals summed; `match`: `_merge_match`). Each result's `selectionRange` is its
    `line` and `column` in the client's position `encoding`."""
    ready = [r for r in roots if r.phase1_done.is_set()]
    if not ready:
        states = [r.state for r in roots]
        return empty_result(request, states[0] if states else EMPTY)
    answers: list[tuple[RootIndex, SearchAnswer]] = []
    for root in ready:
        try:  # while the model loads, the engine ranks without semantic and says so (index.notes)
            answer = root.codebase.search(request)
        except QueryError as exc:
            raise JsonRpcInvalidParams(str(exc)) from exc
        answers.append((root, answer))
    ranked = sorted(((root, entry) for root, answer in answers for entry in answer.results),
                    key=lambda pair: -pair[1].score)[:request.limit]
    lines = {id(root): Lines(root.codebase.read_bytes) for root, _ in answers}
    merged = [convert.search_result(root.root, entry, _selection_line(lines[id(root)], entry), encoding)
              for root, entry in ranked]
    index_states = []
    for root, answer in answers:
        info = dict(answer.index)
        info["state"] = root.current_state(info.get("state") or None)
        if len(answers) > 1:
            info["root"] = convert.path_to_uri(root.root, ".").rstrip("/.") or str(root.root)
        index_states.append(info)
    timings: dict[str, float] = {}
    for _, answer in answers:
        for key, ms in answer.timings_ms.items():
            timings[key] = round(timings.get(key, 0.0) + float(ms), 3)
    match, no_match = _merge_match([a for _, a in answers])
    out = replace(answers[0][1], match=match, no_match=no_match, total=sum(a.total for _, a in answers),
                  results=(), index=_merge_index(index_states), timings_ms=timings).to_json()
    out["results"] = merged
    return out

