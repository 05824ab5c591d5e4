"""Copies and layers: the shared definition bonus and the demotion of parallel copies
(retrievers.ranking.copies)."""

from __future__ import annotations

import pytest

from indexing.records import Chunk, Definition
from retrievers.base import QueryError
from retrievers.ranking.copies import (
    copy_folder,
    copy_trees,
    copy_trees_of,
    share_definition_bonus,
    tree_factors,
)
from retrievers.ranking.profile import RankingConfig
from retrievers.ranking.rrf import Fused, apply_priors
from retrievers.snapshot import Snapshot
from retrievers.sources.words import home_file, module_declaration


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
    assert copy_folder("src/runtime/time_alt/wheel.rs") == ("time_alt", -1.0)  # beside runtime/time/
    assert copy_folder("ktor-client-darwin-legacy/src/x.kt") == ("ktor-client-darwin-legacy", -1.0)
    assert copy_folder("src/altitude/x.rs") is None and copy_folder("src/bold/x.rs") is None


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
    assert divided == {1: 1.5, 2: 1.5, 3: 1.0}  # src/f.py is named after f, but f is no type
    off = RankingConfig(definition_share="off")
    assert share_definition_bonus(bonuses, chunks, lambda i: 0.0, {}, off) == bonuses
    with pytest.raises(QueryError, match="definition_share"):
        RankingConfig(definition_share="half")


def test_apply_priors_shares_the_definition_bonus() -> None:
    chunks = {1: chunk(1, "pkg/v1/client.py", "Client", "class"),
              2: chunk(2, "pkg/client.py", "Client", "class")}
    fused = [Fused(1, 0.03), Fused(2, 0.02)]
    plain = apply_priors(fused, chunks, {}, symbol="Client", identifier_query=True, query_text="Client",
                         config=RankingConfig(definition_share="off", path_depth_penalty=0.0))
    assert [f.chunk_id for f in plain] == [1, 2]  # the copy wins on its fused score alone
    cfg = RankingConfig(definition_share="first", definition_share_rest=0.5, copy_tree_factor=0.5,
                        path_depth_penalty=0.0)  # the copy alone (its folder is one level deeper too)
    out = apply_priors(fused, chunks, {}, symbol="Client", identifier_query=True, query_text="Client",
                       config=cfg, copy_trees={"pkg/v1": "v1"})
    assert [f.chunk_id for f in out] == [2, 1]
    # both stems match the query word "client" whole: path_keyword_bonus (1.25) each
    assert out[0].score == pytest.approx(0.02 + 0.03 * (3.0 + 1.25))
    assert out[1].score == pytest.approx((0.03 + 0.03 * (1.5 + 1.25)) * 0.5)
    assert out[1].explain["factors"] == {"copy": 0.5} and out[1].explain["bonus"]["definition"] == 1.5


def definition(path: str, qualified: str) -> Definition:
    name = qualified.rsplit(".", 1)[-1]
    return Definition(name=name, qualified_name=qualified, kind="function", path=path, start_line=1,
                      end_line=2, start_byte=0, end_byte=1, name_line=1, name_column=0, signature="")


def test_copy_trees_are_version_folders_that_restate_a_more_current_tree() -> None:
    current = [definition("pkg/main.py", n) for n in ("Model", "Model.dict", "Field", "validate")]
    v1 = [definition("pkg/v1/main.py", n) for n in ("Model", "Model.dict", "Field", "old_helper")]
    other = [definition("pkg/v2/extra.py", n) for n in ("alpha", "beta", "gamma")]  # its own names
    mini = [definition("lua/mini/a.lua", n) for n in ("setup", "config", "apply")]  # no other tree
    defs = current + v1 + other + mini
    assert copy_trees(defs, 0.5) == {"pkg/v1": "v1"}  # 3 of 4 names restated
    assert copy_trees(defs, 0.8) == {}
    assert copy_trees(defs[:6], 0.1) == {}  # under 3 names in the folder: no judgement


def test_tree_factors_demote_every_chunk_of_a_copy_tree_unless_named() -> None:
    cfg = RankingConfig(copy_tree_factor=0.5)
    cands = [chunk(1, "pkg/v1/main.py", "anything"), chunk(2, "pkg/main.py", "Model"),
             chunk(3, "pkg/v2/extra.py", "alpha")]
    trees = {"pkg/v1": "v1"}
    assert tree_factors(cands, trees, "how are models validated", cfg) == {1: 0.5}
    assert tree_factors(cands, trees, "how did v1 validate models", cfg) == {}
    off = RankingConfig(copy_tree_factor=1.0)
    assert tree_factors(cands, trees, "how are models validated", off) == {}
    out = apply_priors([Fused(1, 0.03), Fused(2, 0.02)], {c.id: c for c in cands[:2]}, {},
                       query_text="validation", config=cfg, copy_trees=trees)
    assert [f.chunk_id for f in out] == [2, 1]
    depth = 1.0 - RankingConfig().path_depth_penalty  # one level deeper too
    assert out[1].explain["factors"] == {"copy": 0.5, "depth": pytest.approx(depth)}


def test_a_windows_port_restating_the_portable_tree_is_a_copy_unless_the_query_names_windows() -> None:
    unix = [definition(f"src/unix/{f}.c", n) for f, n in (("pipe", "uv_pipe_init"), ("tcp", "uv_tcp_bind"),
                                                          ("tty", "uv_tty_init"), ("core", "uv__io_poll"))]
    win = [definition(f"src/win/{f}.c", n) for f, n in (("pipe", "uv_pipe_init"), ("tcp", "uv_tcp_bind"),
                                                        ("tty", "uv_tty_init"), ("winapi", "pNtQueryFile"))]
    assert copy_folder("src/win/pipe.c") == ("win", -1.0)
    trees = copy_trees(unix + win, 0.2)
    assert trees == {"src/win": "win"}  # the unix tree is the portable one: not a copy
    cfg = RankingConfig(copy_tree_factor=0.5)
    cands = [chunk(1, "src/win/pipe.c", "uv_pipe_init"), chunk(2, "src/unix/pipe.c", "uv_pipe_init")]
    assert tree_factors(cands, trees, "pipe IPC between processes", cfg) == {1: 0.5}
    assert tree_factors(cands, trees, "named pipes on Windows", cfg) == {}
    assert tree_factors(cands, trees, "win32 pipe handles", cfg) == {}


def test_copy_trees_of_a_snapshot_are_computed_once_per_snapshot() -> None:
    defs = [definition("a/main.py", n) for n in ("x", "y", "z")] + \
        [definition("a/old/main.py", n) for n in ("x", "y", "z")]
    for i, d in enumerate(defs):
        d.id = i
    snap = Snapshot.build([], defs, None, 0)
    first = copy_trees_of(snap, 0.5)
    assert first == {"a/old": "old"} and copy_trees_of(snap, 0.5) is first
    assert copy_trees_of(Snapshot.build([], defs[:3], None, 0), 0.5) == {}


def test_home_file_is_the_file_named_after_the_definition() -> None:
    assert home_file("Dapper/SqlMapper.cs", "SqlMapper")
    assert not home_file("Dapper/SqlMapper.Async.cs", "SqlMapper")  # a partial declaration's other file
    assert home_file("lib/rack/request.rb", "Request") and home_file("src/Foo.java", "pkg.Foo")
    assert not home_file("src/sessions.py", "Session") and not home_file("src/f.py", "")


def test_partial_declarations_share_the_bonus_with_the_home_file_apart() -> None:
    chunks = {i: chunk(i, path, "SqlMapper", "class")
              for i, path in enumerate(["SqlMapper.Async.cs", "SqlMapper.cs", "SqlMapper.Link.cs"], 1)}
    shared = share_definition_bonus({1: 3.0, 2: 3.0, 3: 3.0}, chunks, lambda i: 0.0, {}, RankingConfig())
    assert shared == {1: 1.0, 2: 3.0, 3: 1.0}
    apart = RankingConfig(definition_home=False)
    assert share_definition_bonus({1: 3.0, 2: 3.0, 3: 3.0}, chunks, lambda i: 0.0, {}, apart) == {
        1: 1.0, 2: 1.0, 3: 1.0}
    homes = {1: chunk(1, "Http/Request.php", "Request", "class"),
             2: chunk(2, "Http/Client/Request.php", "Request", "class")}
    both = share_definition_bonus({1: 3.0, 2: 3.0}, homes, lambda i: 0.0, {}, RankingConfig())
    assert both == {1: 1.5, 2: 1.5}  # both are home files: divided as before


def test_a_module_declaration_is_no_home_declaration() -> None:
    # Haskell's `module Data.Aeson.Parser` is always in Parser.hs: it does not outrank `newtype Parser`.
    chunks = {1: chunk(1, "src/Data/Aeson/Parser.hs", "Data.Aeson.Parser", "block"),
              2: chunk(2, "src/Data/Aeson/Types/Internal.hs", "Parser", "class")}
    shared = share_definition_bonus({1: 1.0, 2: 1.0}, chunks, lambda i: 0.0, {}, RankingConfig())
    assert shared == {1: 0.5, 2: 0.5}
    assert module_declaration("src/Data/Aeson/Parser.hs", "Data.Aeson.Parser")
    assert not module_declaration("lib/rails/engine.rb", "Rails.Engine")  # a class nested in a module
    assert not module_declaration("Dapper/SqlMapper.cs", "SqlMapper")
