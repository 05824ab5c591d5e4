"""Ranking profiles: the shipped presets, weights per intent, immutability, and the one override path."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import get_args

import pytest

from retrievers.base import QueryError
from retrievers.ranking.intent import INTENTS
from retrievers.ranking.profile import (
    DEFAULT_PRESET,
    INTENT_WEIGHTS,
    MODALITIES,
    PRESETS,
    PROFILES,
    PresetName,
    RankingProfile,
    profile,
    with_overrides,
)


def test_every_intent_has_a_weight_profile_over_the_four_modalities() -> None:
    assert set(INTENT_WEIGHTS) == set(INTENTS)
    for weights in INTENT_WEIGHTS.values():
        assert set(weights) == set(MODALITIES)
        assert sum(weights.values()) == pytest.approx(1.0)
    assert INTENT_WEIGHTS["find_definition"] == {"semantic": 0.2, "text": 0.1, "structural": 0.6,
                                                 "graph": 0.1}
    assert INTENT_WEIGHTS["exact_match"]["text"] == 0.9
    # tuned on the query sets (docs/tuning/2026-11-29-fusion-tuning.md and
    # 2026-11-30-issue-9-session-4.md, "Issue 9: the low repositories"), from the brief's
    # 0.5 / 0.2 / 0.2 / 0.1
    assert INTENT_WEIGHTS["understand_code"] == {"semantic": 0.6, "text": 0.2, "structural": 0.1,
                                                 "graph": 0.1}


def test_presets() -> None:
    assert PRESETS == ("quick", "default", "thorough") and DEFAULT_PRESET in PRESETS
    assert get_args(PresetName) == PRESETS  # the annotation the MCP tool schema is built from
    assert all(PROFILES[name].name == name for name in PRESETS)
    assert PROFILES["quick"].modalities == ("semantic", "structural")
    # tuned k (docs/tuning/2026-11-29-fusion-tuning.md), from the brief's 40 / 40 / 60
    assert (PROFILES["quick"].k, PROFILES["default"].k, PROFILES["thorough"].k) == (10, 10, 20)
    assert PROFILES["thorough"].fetch_limit(10) > PROFILES["default"].fetch_limit(10)
    assert PROFILES["default"].fetch_limit(10) == 50 and PROFILES["default"].fetch_limit(20) == 80
    assert [PROFILES[n].expand_seeds for n in PRESETS] == [0, 5, 10]
    assert PROFILES["default"].file_decay == 0.85 and PROFILES["default"].direct_confidence == 0.85
    with pytest.raises(QueryError, match="unknown preset 'fast'; expected one of: quick, default, thorough"):
        profile("fast")


def test_weights_for_restricts_to_the_profile_and_never_leaves_nothing() -> None:
    quick = PROFILES["quick"]
    assert quick.weights_for("understand_code") == {"semantic": 0.6, "structural": 0.1}
    assert quick.weights_for("exact_match") == {"semantic": 0.0, "structural": 0.1}
    # a profile whose modalities all have zero weight for the intent shares equally instead
    semantic_only = RankingProfile("semantic_only", 40, ("semantic",), 3, 30, 0)
    assert semantic_only.weights_for("exact_match") == {"semantic": 1.0}
    # a request restricted to some retrievers keeps the intent's weights for them, else 1 each
    assert quick.weights_for("find_definition", ("text", "graph")) == {"text": 0.1, "graph": 0.1}
    assert quick.weights_for("exact_match", ("semantic", "graph")) == {"semantic": 1.0, "graph": 1.0}


def test_profiles_are_immutable() -> None:
    default = PROFILES["default"]
    with pytest.raises(dataclasses.FrozenInstanceError):
        default.k = 40  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        default.priors.pagerank_cap = 9.0  # type: ignore[misc]
    with pytest.raises(TypeError):
        default.weights["exact_match"]["text"] = 0.1  # type: ignore[index]
    with pytest.raises(TypeError):
        default.priors.label_factors["test"] = 1.0  # type: ignore[index]
    with pytest.raises(TypeError):
        PROFILES["fast"] = default  # type: ignore[index]


def test_overrides_replace_profile_and_prior_fields_and_leave_the_shipped_ones() -> None:
    default = PROFILES["default"]
    tuned = with_overrides(default, {"k": 40, "file_decay": 0.0, "pagerank_coef": 0.5,
                                     "weights": {"exact_match": {"text": 1.0}},
                                     "label_factors": {"test": 0.9}, "modalities": ["text", "graph"]})
    assert (tuned.k, tuned.file_decay, tuned.priors.pagerank_coef) == (40, 0.0, 0.5)
    assert tuned.modalities == ("text", "graph")
    assert tuned.weights["exact_match"] == {"text": 1.0}
    assert tuned.weights["find_definition"] == default.weights["find_definition"]  # others kept
    assert dict(tuned.priors.label_factors) == {"test": 0.9}
    assert tuned.priors.pagerank_cap == default.priors.pagerank_cap
    assert (default.k, default.file_decay, default.priors.pagerank_coef) == (10, 0.85, 0.3)
    assert with_overrides(default, {}) is default
    with pytest.raises(QueryError, match="no ranking setting named 'rrf_k'"):
        with_overrides(default, {"rrf_k": 20})
    with pytest.raises(QueryError, match="file_decay must be in 0..1"):
        with_overrides(default, {"file_decay": 2})
    with pytest.raises(QueryError, match="modalities"):
        with_overrides(default, {"modalities": ["bm25"]})


def test_the_editors_take_the_preset_names_from_the_server() -> None:
    """The server advertises PRESETS; the clients read them from there, and the one static list an
    editor must carry (VS Code's settings schema) is kept equal to them here."""
    from lsp_server.lsp.options import advertised

    assert advertised() == {"codeseek": {"presets": list(PRESETS), "defaultPreset": DEFAULT_PRESET}}
    editors = Path(__file__).resolve().parents[2] / "editors"
    package = json.loads((editors / "vscode" / "package.json").read_text(encoding="utf-8"))
    setting = package["contributes"]["configuration"]["properties"]["codeseek.preset"]
    assert (setting["enum"], setting["default"]) == (list(PRESETS), DEFAULT_PRESET)
    hand_typed = "'quick', 'default', 'thorough'"
    for source in [*(editors / "vscode" / "src").glob("*.ts"), *(editors / "nvim" / "lua").rglob("*.lua")]:
        assert hand_typed not in source.read_text(encoding="utf-8"), f"{source.name} lists the presets"


def test_file_card_settings_are_checked_and_overridable() -> None:
    tuned = with_overrides(PROFILES["default"], {"file_card_intents": ["understand_code", "find_similar"],
                                                 "file_card_top": 5})
    assert tuned.priors.file_card_intents == frozenset({"understand_code", "find_similar"})
    assert tuned.priors.file_card_top == 5 and PROFILES["default"].priors.file_card_top == 3
    for bad in ({"file_card_b": 1.5}, {"file_card_weight": -0.1}, {"file_card_top": -1},
                {"file_card_pagerank": -1.0}):
        with pytest.raises(QueryError, match="file_card"):
            with_overrides(PROFILES["default"], bad)
