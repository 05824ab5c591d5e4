"""C interface headers: found by a same-stem `.c` file, demoted for natural-language queries only."""

from __future__ import annotations

import pytest

from indexing.records import Chunk
from retrievers.ranking.headers import interface_headers, interface_headers_of
from retrievers.ranking.rrf import Fused, apply_priors
from retrievers.snapshot import Snapshot


def test_a_header_is_an_interface_when_a_c_file_shares_its_stem() -> None:
    paths = ["lib/http_proxy.h", "lib/http_proxy.c", "include/curl/easy.h", "lib/easy.c",
             "lib/curl_setup.h", "absl/strings/str_cat.h", "absl/strings/str_cat.cc",
             "src/server.hpp", "src/server.c"]
    assert interface_headers(paths) == frozenset({"lib/http_proxy.h", "include/curl/easy.h"})


def _chunk(cid: int, path: str, kind: str = "block", symbol: str | None = None) -> Chunk:
    return Chunk(path=path, language="c", start_line=cid, end_line=cid + 5, start_byte=0, end_byte=10,
                 kind=kind, symbol=symbol, labels=("source",), content_hash=f"h{cid}", id=cid)


def test_the_snapshot_headers_are_computed_once_per_snapshot() -> None:
    snap = Snapshot.build([_chunk(1, "src/server.h"), _chunk(2, "src/server.c")], [], None, 2)
    assert interface_headers_of(snap) == frozenset({"src/server.h"})
    assert interface_headers_of(snap) is interface_headers_of(snap)


def test_interface_headers_are_demoted_for_questions_not_for_identifier_lookups() -> None:
    chunks = {1: _chunk(1, "src/server.h", "class", "redisServer"), 2: _chunk(2, "src/server.c")}
    headers = frozenset({"src/server.h"})
    question = {f.chunk_id: f.score for f in apply_priors(
        [Fused(1, 1.0), Fused(2, 0.9)], chunks, {}, query_text="how log lines are formatted",
        c_headers=headers)}
    assert question == pytest.approx({1: 0.5, 2: 0.9})
    lookup = {f.chunk_id: f.score for f in apply_priors(
        [Fused(1, 1.0), Fused(2, 0.9)], chunks, {}, identifier_query=True, query_text="redisServer",
        c_headers=headers)}
    assert lookup[1] > lookup[2]
