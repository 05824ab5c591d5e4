"""Dotted names that name a module file (retrievers.ranking.priors.module_named / module_bonuses, wired in
fusion.apply_priors): `mini.comment` asks for `lua/mini/comment.lua`, not `MiniBracketed.comment`."""

from __future__ import annotations

from indexing.records import Chunk
from retrievers.ranking.priors import module_named
from retrievers.ranking.profile import RankingConfig
from retrievers.ranking.rrf import Fused, apply_priors


def chunk(cid: int, path: str, symbol: str | None = None, kind: str = "method") -> Chunk:
    return Chunk(path=path, language="lua", start_line=cid, end_line=cid + 5, start_byte=0, end_byte=10,
                 kind=kind, symbol=symbol, labels=("source",), content_hash=f"h{cid}", id=cid)


def test_module_named_by_path_folder_module_file_and_root() -> None:
    assert module_named("lua/mini/comment.lua", "mini.comment")
    assert module_named("lua/mini/comment/init.lua", "mini.comment")  # init stands for its folder
    assert module_named("requests/sessions.py", "requests.sessions")
    # a workspace opened at lua/mini
    assert module_named("comment.lua", "mini.comment", ("work", "mini.nvim", "lua", "mini"))
    assert module_named("lua/Mini/Comment.lua", "mini.comment")  # case-insensitive
    assert not module_named("comment.lua", "mini.comment")  # `mini` is nowhere in the path
    assert not module_named("lua/mini/comment.lua", "comment")  # one word is not a module path
    assert not module_named("lua/mini/bracketed.lua", "mini.comment")
    assert not module_named("lua/mini/comment.lua", "mini.comment.toggle")  # names a function in it


def test_the_named_module_takes_the_bonus_from_last_part_namesakes() -> None:
    chunks = {1: chunk(1, "lua/mini/bracketed.lua", "MiniBracketed.comment"),
              2: chunk(2, "lua/mini/comment.lua", "MiniComment.toggle_lines"),
              3: chunk(3, "lua/mini/comment.lua", "H.get_comment_parts"),
              4: chunk(4, "lua/mini/splitjoin.lua", "H.is_comment_block")}
    fused = [Fused(1, 0.07), Fused(4, 0.068), Fused(2, 0.065), Fused(3, 0.02)]
    text = "how mini.comment toggles line and block comments"
    out = apply_priors(fused, chunks, {}, symbol="mini.comment", query_text=text)
    assert out[0].chunk_id == 2 and out[0].explain["bonus"]["definition"] == 1.0
    by_id = {f.chunk_id: f.explain["bonus"] for f in out}
    assert "definition" not in by_id[1] and "definition" not in by_id[3]  # one chunk of the module
    # without the mechanism the namesake `MiniBracketed.comment` takes the bonus
    off = apply_priors(fused, chunks, {}, symbol="mini.comment", query_text=text,
                       config=RankingConfig(module_names=False))
    assert off[0].chunk_id == 1 and off[0].explain["bonus"]["definition"] == 1.0


def test_a_definition_of_the_whole_dotted_name_keeps_its_bonus() -> None:
    # `M.sessions` names the module; a chunk defining the table field `M.sessions` is the whole name too
    # and keeps its bonus beside the module's
    chunks = {1: chunk(1, "lua/init.lua", "requests.sessions", "function"),
              2: chunk(2, "requests/sessions.py", "Session", "class"),
              3: chunk(3, "other/util.py", "Helper.sessions", "function")}
    fused = [Fused(3, 0.05), Fused(1, 0.04), Fused(2, 0.03)]
    out = apply_priors(fused, chunks, {}, symbol="requests.sessions",
                       query_text="how requests.sessions works")
    bonus = {f.chunk_id: f.explain["bonus"].get("definition", 0.0) for f in out}
    assert bonus[2] == 1.0 and bonus[1] > 0 and bonus[3] == 0.0


def test_identifier_lookup_of_a_module_gets_the_full_bonus() -> None:
    chunks = {1: chunk(1, "lua/mini/bracketed.lua", "MiniBracketed.comment"),
              2: chunk(2, "lua/mini/comment.lua", None, "block")}
    out = apply_priors([Fused(1, 0.05), Fused(2, 0.01)], chunks, {}, symbol="mini.comment",
                       identifier_query=True, query_text="mini.comment")
    assert out[0].chunk_id == 2 and out[0].explain["bonus"]["definition"] == 3.0
