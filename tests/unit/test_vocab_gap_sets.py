"""The vocabulary-gap sets (`bench/queries/gap-*.json`) keep their rules: the obvious phrase is absent from
the corpus, no query names a target or copies its doc, every target is defined where the set says. Each rule
is also tried on a tiny example that breaks it, so the checker itself can fail."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bench.evalsets import load_set
from bench.vocab_gap_check import (
    CorpusText,
    check_identifiers,
    check_phrase,
    check_query,
    check_set,
    corpus_root,
    default_files,
    parse_definitions,
    shared_run,
)

PY_SOURCE = b'''
class Response:
    def should_set_cookie(self, age):
        """Tell whether the session must be written back to the browser this time."""
        return age > 0


# Pause a client that failed too often before it may try again.
def cooldown(client):
    return client.failures > 3
'''

JS_SOURCE = b'''
/**
 * Retry a request that failed with a network error, waiting longer each time.
 */
function backoff(attempt) {
  return 2 ** attempt;
}

class Pool {
  // Hand out an idle connection before opening a new one.
  acquire() {}
}
'''


def _query(text: str, phrase: str, path: str, symbol: str) -> dict[str, object]:
    return {"id": "t-01", "query": text, "category": "vocab-gap", "obvious_phrase": phrase,
            "targets": [{"path": path, "symbol": symbol}]}


def test_rule_a_the_obvious_phrase_must_be_absent_from_the_corpus() -> None:
    corpus = CorpusText.from_texts({"auth.py": "def cooldown():\n    # Lock Out after 3 tries\n"})
    assert check_phrase("lock out", corpus) == "obvious phrase 'lock out' occurs in auth.py"
    assert check_phrase("ban the user", corpus) is None
    assert check_phrase("  ", corpus) == "no obvious_phrase"


def test_rule_b_the_query_must_not_name_a_target() -> None:
    assert check_identifiers("where is should_set_cookie decided", ["Response.should_set_cookie"])
    assert check_identifiers("when should set cookie be true", ["Response.should_set_cookie"])
    assert check_identifiers("when should-set-cookie holds", ["Response.should_set_cookie"])
    assert check_identifiers("where is the Config read", ["Config"])
    assert check_identifiers("what does response.should_set_cookie do", ["Response.should_set_cookie"])
    assert check_identifiers("when do two URLs share an origin", ["isURLSameOrigin"]) == []
    assert check_identifiers("is url same origin", ["isURLSameOrigin"])
    # whole words only: a longer word that contains the name is not the name
    assert check_identifiers("where is the configuration file read", ["Config"]) == []
    assert check_identifiers("when do we write the session back", ["Response.should_set_cookie"]) == []


def test_rule_c_the_query_must_not_copy_four_words_of_a_doc() -> None:
    py = parse_definitions("app/session.py", PY_SOURCE)
    assert "must be written back" in py.docs["Response.should_set_cookie"]
    assert "failed too often" in py.docs["cooldown"]
    assert shared_run("when is it Written back, to the browser?", py.docs["Response.should_set_cookie"]) \
        == "written back to the"
    assert shared_run("when is the session saved again", py.docs["Response.should_set_cookie"]) is None
    js = parse_definitions("lib/net.js", JS_SOURCE)
    assert "waiting longer each time" in js.docs["backoff"]
    assert "idle connection" in js.docs["Pool.acquire"]
    run = shared_run("Waiting longer each time a call fails", js.docs["backoff"])
    assert run == "waiting longer each time"
    # only the doc text counts, never the code of the definition
    assert shared_run("return 2 attempt", js.docs["backoff"]) is None


def test_rule_d_every_target_must_be_defined_in_its_file() -> None:
    corpus = CorpusText.from_texts({"app/session.py": PY_SOURCE.decode()})
    files = {"app/session.py": parse_definitions("app/session.py", PY_SOURCE), "gone.py": None}
    ok = check_query("s", _query("when is the session saved again", "persist session", "app/session.py",
                                 "Response.should_set_cookie"), corpus, files)
    assert ok == []
    missing = check_query("s", _query("when is the session saved again", "persist session", "app/session.py",
                                      "Response.save"), corpus, files)
    assert [(v.rule, v.detail) for v in missing] == [("d", "app/session.py defines no Response.save")]
    no_file = check_query("s", _query("x y", "persist session", "gone.py", "f"), corpus, files)
    assert [v.rule for v in no_file] == ["d"]


def test_a_whole_set_reports_each_broken_rule(tmp_path: Path) -> None:
    root = tmp_path / "corpus"
    (root / "app").mkdir(parents=True)
    (root / "app" / "session.py").write_bytes(PY_SOURCE)
    (root / "lib").mkdir()
    (root / "lib" / "net.js").write_bytes(JS_SOURCE)
    good = _query("how long do we wait between tries after a failure", "exponential", "lib/net.js", "backoff")
    queries = [
        {**good, "id": "ok"},
        {**good, "id": "a", "obvious_phrase": "idle connection"},
        {**good, "id": "b", "query": "where is the backoff computed"},
        {**good, "id": "c", "query": "a request that failed with a timeout"},
        {**good, "id": "d", "targets": [{"path": "lib/net.js", "symbol": "Pool.release"}]},
    ]
    set_file = tmp_path / "gap-tiny-1.0.json"
    set_file.write_text(json.dumps({"name": "gap-tiny-1.0", "note": "test",
                                    "corpus": {"kind": "npm", "name": "tiny", "version": "1.0", "root": ""},
                                    "queries": queries}))
    found = {(v.query_id, v.rule) for v in check_set(set_file, root=root)}
    assert found == {("a", "a"), ("b", "b"), ("c", "c"), ("d", "d")}


def test_the_gap_sets_load_as_rank_sets() -> None:
    for path in default_files():
        qs = load_set(path)
        data = json.loads(path.read_text())
        assert data["note"]
        assert qs.metric == "rank" and qs.queries
        assert {q.category for q in qs.queries} == {"vocab-gap"}
        assert all(t.symbol for q in qs.queries for t in q.targets)
        assert all(q.get("obvious_phrase") for q in data["queries"])


@pytest.mark.slow
@pytest.mark.parametrize("path", default_files(), ids=lambda p: p.stem)
def test_each_gap_set_keeps_every_rule(path: Path) -> None:
    try:
        root = corpus_root(path)
    except RuntimeError as exc:  # a Debian package whose version left the apt lists, apt not updated
        pytest.skip(f"corpus unavailable here: {exc}")
    violations = check_set(path, root)
    assert not violations, "\n".join(map(str, violations))
