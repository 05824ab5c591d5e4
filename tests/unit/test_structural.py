"""The structural retriever over real parsed definitions: match tiers, ordering, scope, upkeep."""

from __future__ import annotations

from dataclasses import replace

import pytest

from retrievers.base import Hit, Query, QueryError, Retriever
from retrievers.scope import Scope
from retrievers.sources.structural import StructuralRetriever, module_parts
from tests.unit.retrieval_sample import Parsed, parse_sample


@pytest.fixture(scope="module")
def sample() -> Parsed:
    return parse_sample()


@pytest.fixture()
def retriever(sample: Parsed) -> StructuralRetriever:
    r = StructuralRetriever(lambda: sample.definitions, sample.chunk_for_definition)
    r.index(sample.chunks)
    return r


def names(hits: list[Hit]) -> list[str]:
    return [h.detail.name for h in hits]


def search(r: StructuralRetriever, text: str, symbol: str | None = None, limit: int = 10,
           **scope: tuple[str, ...]) -> list[Hit]:
    return r.search(Query(text, "find_definition", symbol), limit, Scope.build(**scope))


def test_is_a_retriever(retriever: StructuralRetriever) -> None:
    assert isinstance(retriever, Retriever)
    assert retriever.name == "structural"


def test_exact_name_wins_and_names_its_chunk(retriever: StructuralRetriever, sample: Parsed) -> None:
    hits = search(retriever, "should_strip_auth", "should_strip_auth")
    top = hits[0]
    d = sample.definition("SessionRedirectMixin.should_strip_auth")
    assert top.chunk_id == sample.chunk_for_definition(d)
    assert top.detail.as_dict() == {"def_id": d.id, "match": "exact",
                                    "name": "SessionRedirectMixin.should_strip_auth", "kind": "method",
                                    "path": "pkg/sessions.py", "line": d.name_line}
    # the test named after it is found too, by split-identifier match, lower
    assert any(h.detail.name == "test_should_strip_auth_on_host_change" and h.detail.match == "split"
               for h in hits[1:])


def matched(r: StructuralRetriever, symbol: str | None, text: str = "") -> list[tuple[str, str]]:
    """(qualified name, match kind) per definition, best first (before the one-hit-per-chunk rule)."""
    defs = r.definitions()
    return [(defs[i].qualified_name, kind) for i, _, kind in r.match(symbol, text)]


def test_case_sensitive_beats_case_insensitive(retriever: StructuralRetriever) -> None:
    assert matched(retriever, "retry_limit", "retry_limit")[:2] == [
        ("retry_limit", "exact"), ("RETRY_LIMIT", "exact_folded")]
    hits = search(retriever, "httpbasicauth", "httpbasicauth")
    assert (hits[0].detail.name, hits[0].detail.match) == ("HTTPBasicAuth", "exact_folded")


def test_qualified_names(retriever: StructuralRetriever) -> None:
    assert (names(search(retriever, "Session.send", "Session.send"))[0]) == "Session.send"
    assert search(retriever, "Session.send", "Session.send")[0].detail.match == "qualified"
    # module-qualified: the file's module path prefixes the qualified name
    hit = search(retriever, "sessions.Session", "sessions.Session")[0]
    assert (hit.detail.name, hit.detail.match) == ("Session", "qualified")
    hit = search(retriever, "pkg.utils.select_proxy", "pkg.utils.select_proxy")[0]
    assert (hit.detail.name, hit.detail.path) == ("select_proxy", "pkg/utils.py")
    # a package that re-exports it: leftover qualifiers need only name folders of the path, in order
    hit = search(retriever, "pkg.Session", "pkg.Session")[0]
    assert (hit.detail.name, hit.detail.match) == ("Session", "qualified")
    assert search(retriever, "utils.Session", "utils.Session")[0].detail.match == "last_part"
    assert search(retriever, "sessions.pkg.Session", "sessions.pkg.Session")[0].detail.match == "last_part"
    # other languages' qualified names
    assert names(search(retriever, "Router.handle", "Router.handle"))[0] == "Router.handle"
    assert names(search(retriever, "Server.Start", "Server.Start"))[0] == "Server.Start"
    assert names(search(retriever, "Router::use", "Router::use"))[0] == "Router.use"


def test_qualifier_that_does_not_match_falls_back_to_the_last_part(retriever: StructuralRetriever) -> None:
    hit = search(retriever, "Client.send", "Client.send")[0]
    assert (hit.detail.name, hit.detail.match) == ("Session.send", "last_part")


def test_split_identifier_share_of_terms(retriever: StructuralRetriever) -> None:
    hits = search(retriever, "strip auth")
    assert hits[0].detail.name == "SessionRedirectMixin.should_strip_auth"
    assert hits[0].detail.match == "split"
    # natural language: "strip" and "redirect" reach it partially, stopwords are ignored
    nl = names(search(retriever, "where do we strip credentials on redirect"))
    assert "SessionRedirectMixin.should_strip_auth" in nl[:5]
    assert "SessionRedirectMixin.resolve_redirects" in nl[:5]


def test_stems_meet(retriever: StructuralRetriever) -> None:
    # "redirects" ~ "redirect", "proxies" ~ "proxy"
    assert "SessionRedirectMixin" in names(search(retriever, "redirects mixin"))[:2]
    assert "select_proxy" in names(search(retriever, "select proxies"))[:2]


def test_prefix_match(retriever: StructuralRetriever) -> None:
    hits = search(retriever, "select_pro", "select_pro")
    assert (hits[0].detail.name, hits[0].detail.match) == ("select_proxy", "prefix")
    # a name the query is a prefix of edges out names that only share its words
    assert matched(retriever, "basic_auth_h", "basic_auth_h")[:2] == [
        ("basic_auth_header", "prefix"), ("HTTPBasicAuth", "split")]


def test_classes_and_functions_rank_above_variables(retriever: StructuralRetriever) -> None:
    # both match every term, in the same tier; the function comes first
    assert matched(retriever, None, "retry limit")[:2] == [("retry_limit", "split"), ("RETRY_LIMIT", "split")]
    scores = [score for _, score, _ in retriever.match(None, "retry limit")[:2]]
    assert scores[0] == pytest.approx(scores[1] + 2.0)


def test_source_ranks_above_a_test_helper_of_the_same_name(retriever: StructuralRetriever) -> None:
    hits = search(retriever, "select_proxy", "select_proxy")
    assert [h.detail.path for h in hits[:2]] == ["pkg/utils.py", "tests/test_sessions.py"]


def test_one_hit_per_chunk_and_limit(retriever: StructuralRetriever, sample: Parsed) -> None:
    hits = search(retriever, "auth", limit=50)
    ids = [h.chunk_id for h in hits]
    assert len(ids) == len(set(ids))
    assert len(search(retriever, "auth", limit=2)) == 2
    assert search(retriever, "auth", limit=0) == []
    assert all(h.score >= n.score for h, n in zip(hits, hits[1:], strict=False))


def test_scope(retriever: StructuralRetriever) -> None:
    hits = search(retriever, "select_proxy", "select_proxy", include=("tests/**",))
    assert [h.detail.path for h in hits] == ["tests/test_sessions.py"] * len(hits) and hits
    hits = search(retriever, "select_proxy", "select_proxy", exclude=("pkg/",))
    assert all(not h.detail.path.startswith("pkg/") for h in hits)
    with pytest.raises(QueryError):
        search(retriever, "x", "x", include=("../outside/**",))


def test_no_match_and_odd_input(retriever: StructuralRetriever) -> None:
    assert search(retriever, "zzqqxx", "zzqqxx") == []
    for text in ["", "   ", "\x00\x01", "((((", "x" * 10_000, "how " * 2000, "🙂"]:
        assert isinstance(search(retriever, text), list)


def test_rebuilds_after_update(sample: Parsed) -> None:
    defs = list(sample.definitions)
    r = StructuralRetriever(lambda: defs, sample.chunk_for_definition)
    r.index(sample.chunks)
    assert search(r, "matchRoute", "matchRoute")[0].detail.name == "matchRoute"
    gone = sample.definition("matchRoute")
    defs.remove(gone)
    renamed = replace(gone, name="findRoute", qualified_name="findRoute")
    defs.append(renamed)
    r.update([], [])
    assert all(h.detail.name != "matchRoute" for h in search(r, "matchRoute", "matchRoute"))
    assert search(r, "findRoute", "findRoute")[0].detail.name == "findRoute"
    defs.remove(renamed)
    r.remove([1])
    assert all(h.detail.name != "findRoute" for h in search(r, "findRoute", "findRoute"))


def test_module_parts() -> None:
    assert module_parts("src/requests/sessions.py") == ["src", "requests", "sessions"]
    assert module_parts("pkg/__init__.py") == ["pkg"]
    assert module_parts("lib/router/index.js") == ["lib", "router"]


def test_a_partial_class_ranks_its_home_file_first() -> None:
    # C#'s partial class: the same name declared in SqlMapper.cs and in smaller SqlMapper.*.cs files.
    files = {
        "Dapper/SqlMapper.Link.cs": "namespace Dapper { public static partial class SqlMapper { } }\n",
        "Dapper/SqlMapper.cs": "namespace Dapper {\n public static partial class SqlMapper\n {\n"
                               "  public static int Execute(string sql) { return 0; }\n }\n}\n",
        "Dapper/SqlMapper.Async.cs": "namespace Dapper { public static partial class SqlMapper { } }\n",
    }
    parsed = parse_sample(files)
    r = StructuralRetriever(lambda: parsed.definitions, parsed.chunk_for_definition)
    r.index(parsed.chunks)
    hits = search(r, "SqlMapper", "SqlMapper")
    # the home file first although its declaration is the largest, then smaller-first, then by path
    assert [h.detail.path for h in hits] == ["Dapper/SqlMapper.cs", "Dapper/SqlMapper.Async.cs",
                                               "Dapper/SqlMapper.Link.cs"]
