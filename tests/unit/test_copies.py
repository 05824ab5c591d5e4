"""Copies and layers: the shared definition bonus and the demotion of parallel copies (retrievers.copies)."""

from __future__ import annotations

import pytest

from indexing.records import Chunk
from retrievers.base import QueryError
from retrievers.copies import copy_factors, copy_folder, share_definition_bonus
from retrievers.fusion import Fused, apply_priors
from retrievers.profile import RankingConfig


def chunk(cid: int, path: str, symbol: str | None = None, kind: str = "function") -> Chunk:
    return Chunk(path=path, language="python", start_line=cid, end_line=cid + 5, start_byte=0, end_byte=10,
                 kind=kind, symbol=symbol, labels=("source",), content_hash=f"h{cid}", id=cid)


def test_copy_folder_names_versions_and_kept_copies() -> None:
    assert copy_folder("api/v3/client.py") == ("v3", 3.0)
    assert copy_folder("src/v1beta1/types.go") == ("v1beta1", 1.0)
    assert copy_folder("pkg/old/client.py") == ("old", -1.0)
    assert copy_folder("pkg/Classic/Grid.cs") == ("Classic", -1.0)
    assert copy_folder("src/client.py") is None
    assert copy_folder("src/vendor/x.py") is None and copy_folder("src/v8js/x.py") is None
    assert copy_folder("src/old.py") is None  # a file name is not a folder


def test_copy_factors_demote_the_less_current_tree_unless_the_query_names_it() -> None:
    cfg = RankingConfig(copy_factor=0.5)
    cands = [chunk(1, "api/client.py", "Client.send"), chunk(2, "api/v3/client.py", "Client.send"),
             chunk(3, "api/v3/only.py", "only_here"), chunk(4, "api/old/client.py", "Client.send")]
    assert copy_factors(cands, "how does the client send", cfg) == {2: 0.5, 4: 0.5}
    assert copy_factors(cands, "Client.send in v3", cfg) == {4: 0.5}
    # two versions and no current tree: the higher version is the current one
    versions = [chunk(1, "v1/a.py", "f"), chunk(2, "v2/a.py", "f")]
    assert copy_factors(versions, "f", cfg) == {1: 0.5}
    assert copy_factors(cands, "send", RankingConfig()) == {}  # the default factor 1.0 is off


def test_share_definition_bonus_modes() -> None:
    chunks = {1: chunk(1, "a/b/c/copy.py", "f"), 2: chunk(2, "src/f.py", "f"), 3: chunk(3, "x/g.py", "g")}
    bonuses = {1: 3.0, 2: 3.0, 3: 1.0}
    pr = {1: 0.0, 2: 0.0}.get
    first = share_definition_bonus(bonuses, chunks, lambda i: pr(i, 0.0), {},
                                   RankingConfig(definition_share="first", definition_share_rest=0.25))
    assert first == {1: 0.75, 2: 3.0, 3: 1.0}  # equal PageRank: the shallower path keeps the bonus
    ranked = share_definition_bonus(bonuses, chunks, lambda i: 2.0 if i == 1 else 0.0, {},
                                    RankingConfig(definition_share="first", definition_share_rest=0.25))
    assert ranked == {1: 3.0, 2: 0.75, 3: 1.0}
    divided = share_definition_bonus(bonuses, chunks, lambda i: 0.0, {}, RankingConfig())  # the default
    assert divided == {1: 1.5, 2: 1.5, 3: 1.0}
    off = RankingConfig(definition_share="off")
    assert share_definition_bonus(bonuses, chunks, lambda i: 0.0, {}, off) == bonuses
    with pytest.raises(QueryError, match="definition_share"):
        RankingConfig(definition_share="half")


def test_apply_priors_shares_the_bonus_and_demotes_copies() -> None:
    chunks = {1: chunk(1, "pkg/v1/client.py", "Client", "class"),
              2: chunk(2, "pkg/client.py", "Client", "class")}
    fused = [Fused(1, 0.03), Fused(2, 0.02)]
    plain = apply_priors(fused, chunks, {}, symbol="Client", identifier_query=True, query_text="Client",
                         config=RankingConfig(definition_share="off"))
    assert [f.chunk_id for f in plain] == [1, 2]  # the copy wins on its fused score alone
    cfg = RankingConfig(definition_share="first", definition_share_rest=0.5, copy_factor=0.5)
    out = apply_priors(fused, chunks, {}, symbol="Client", identifier_query=True, query_text="Client",
                       config=cfg)
    assert [f.chunk_id for f in out] == [2, 1]
    # both stems match the query word "client": path_keyword 1.0 each
    assert out[0].score == pytest.approx(0.02 + 0.03 * (3.0 + 1.0))
    assert out[1].score == pytest.approx((0.03 + 0.03 * (1.5 + 1.0)) * 0.5)
    assert out[1].explain["factors"] == {"copy": 0.5} and out[1].explain["bonus"]["definition"] == 1.5
