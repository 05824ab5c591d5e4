"""The graph retriever on a real parsed sample: references, impact, expansion, scope and errors."""

from __future__ import annotations

import pytest

from graph.callgraph import CallGraph
from graph.errors import GraphError
from indexing.records import Definition
from retrievers.base import (
    Hit,
    IndexedRetriever,
    Query,
    QueryError,
    Retriever,
    RetrieverError,
    StructuralDetail,
)
from retrievers.scope import Scope
from retrievers.sources.graph_retriever import GraphRetriever, GraphRetrieverOptions
from tests.unit.retrieval_sample import Parsed, parse_sample


@pytest.fixture(scope="module")
def sample() -> Parsed:
    return parse_sample()


@pytest.fixture(scope="module")
def graph(sample: Parsed) -> CallGraph:
    return sample.call_graph()


@pytest.fixture()
def retriever(sample: Parsed, graph: CallGraph) -> GraphRetriever:
    return GraphRetriever(lambda: graph, sample.chunk_at, sample.chunk)


def structural(d: Definition) -> StructuralDetail:
    """The detail a structural hit on `d` carries (it names the definition)."""
    return StructuralDetail(d.id, "exact", d.qualified_name, d.kind, d.path, d.name_line)


def refs(r: GraphRetriever, symbol: str, limit: int = 50, **scope: tuple[str, ...]) -> list[Hit]:
    return r.search(Query(f"who calls {symbol}", "find_references", symbol), limit, Scope.build(**scope))


def sites(hits: list[Hit]) -> list[tuple[str, int, str]]:
    return [(h.detail.path, h.detail.line, h.detail.relation) for h in hits]


def test_is_a_retriever(retriever: GraphRetriever) -> None:
    assert isinstance(retriever, Retriever)
    assert not isinstance(retriever, IndexedRetriever)  # the graph is rebuilt with the snapshot
    assert retriever.name == "graph"


def test_references_one_hit_per_call_site(retriever: GraphRetriever, sample: Parsed) -> None:
    hits = refs(retriever, "rebuild_auth")
    assert sites(hits) == [("pkg/sessions.py", 21, "call"), ("tests/test_sessions.py", 14, "call")]
    callee = sample.definition("SessionRedirectMixin.rebuild_auth")
    caller = sample.definition("SessionRedirectMixin.resolve_redirects")
    first = hits[0]
    assert first.chunk_id == sample.chunk_at("pkg/sessions.py", 21)
    assert first.detail.callee_def_id == callee.id and first.detail.caller_def_id == caller.id
    assert first.detail.caller == "SessionRedirectMixin.resolve_redirects"
    assert (first.detail.column, first.detail.end_column) == (17, 29)


def test_references_cover_every_resolved_call_site(retriever: GraphRetriever, graph: CallGraph,
                                                   sample: Parsed) -> None:
    for d in sample.definitions:
        expected = {(s.path, s.line, s.column) for s, _ in graph.callers(d.id)}
        got = {(h.detail.path, h.detail.line, h.detail.column)
               for h in retriever.references(d.qualified_name) if h.detail.relation == "call"}
        if len(graph.resolve(d.qualified_name)) == 1:
            assert got == expected, d.qualified_name


def test_class_references_include_instantiations_and_subclasses(retriever: GraphRetriever) -> None:
    hits = refs(retriever, "HTTPBasicAuth")
    assert sites(hits) == [("pkg/auth.py", 32, "call"), ("pkg/auth.py", 19, "inherits")]
    assert hits[0].score > hits[1].score


def test_references_in_other_languages(retriever: GraphRetriever) -> None:
    assert sites(refs(retriever, "matchRoute")) == [("web/router.js", 11, "call")]
    assert sites(refs(retriever, "NewServer")) == [("cmd/server/main.go", 19, "call")]


def test_unresolvable_library_names_fall_back_to_call_sites_by_name(retriever: GraphRetriever,
                                                                    sample: Parsed) -> None:
    hits = refs(retriever, "urlparse")
    assert sites(hits) == [("pkg/utils.py", 10, "call"), ("pkg/utils.py", 25, "call")]
    assert all(h.detail.resolved is False for h in hits)
    assert hits[0].detail.caller_def_id == sample.definition("get_netrc_auth").id
    assert refs(retriever, "no_such_function") == []


def test_impact_lists_transitive_callers_with_depth(retriever: GraphRetriever, sample: Parsed) -> None:
    hits = retriever.search(Query("what breaks if I change should_strip_auth", "impact_analysis",
                                  "should_strip_auth"), 50)
    got = [(h.detail.name, h.detail.depth) for h in hits]
    # nearest first; at equal depth the more central (PageRank), then by path
    assert got == [("SessionRedirectMixin.rebuild_auth", 1), ("test_should_strip_auth_on_host_change", 1),
                   ("SessionRedirectMixin.resolve_redirects", 2), ("test_rebuild_auth_drops_header", 2)]
    assert [h.score for h in hits] == [1.0, 1.0, 0.5, 0.5]
    target = sample.definition("SessionRedirectMixin.should_strip_auth")
    assert all(h.detail.target_def_id == target.id for h in hits)
    assert hits[0].chunk_id == sample.chunk_for_definition(sample.definition(hits[0].detail.name))


def test_impact_depth_is_an_option(sample: Parsed, graph: CallGraph) -> None:
    shallow = GraphRetriever(lambda: graph, sample.chunk_at, options=GraphRetrieverOptions(impact_depth=1))
    hits = shallow.search(Query("impact of should_strip_auth", "impact_analysis", "should_strip_auth"), 50)
    assert {h.detail.depth for h in hits} == {1}
    assert len(hits) == 2


def test_expand_reaches_callees_before_callers(retriever: GraphRetriever, sample: Parsed) -> None:
    seed = Hit(sample.chunk_of("SessionRedirectMixin.rebuild_auth"), 1.0)
    hits = retriever.expand([seed], 10)
    got = [(h.detail.name, h.detail.relation) for h in hits]
    assert set(got[:2]) == {("auth_for", "callee"), ("SessionRedirectMixin.should_strip_auth", "callee")}
    assert set(got[2:]) == {("SessionRedirectMixin.resolve_redirects", "caller"),
                            ("test_rebuild_auth_drops_header", "caller")}
    assert all(h.detail.via == seed.chunk_id and h.chunk_id != seed.chunk_id for h in hits)
    assert hits[0].score == 1.0 and hits[-1].score == pytest.approx(0.8)
    assert len(retriever.expand([seed], 1)) == 1
    assert retriever.expand([], 10) == [] and retriever.expand([seed], 0) == []


def test_expand_uses_a_seed_definition_id_and_discounts_later_seeds(retriever: GraphRetriever,
                                                                    sample: Parsed) -> None:
    # a structural hit names its definition: no chunk lookup is needed
    auth_for = sample.definition("auth_for")
    first = Hit(sample.chunk_of("Session.send"), 1.0, structural(sample.definition("Session.send")))
    second = Hit(10_000, 1.0, structural(auth_for))
    hits = {h.detail.name: h for h in retriever.expand([first, second], 20)}
    assert hits["get_netrc_auth"].score == pytest.approx(0.5)  # callee of the second seed
    assert hits["get_netrc_auth"].detail.via == 10_000
    assert hits["SessionRedirectMixin.resolve_redirects"].score == 1.0  # callee of the first


def test_other_intents_start_from_the_symbol_definition(retriever: GraphRetriever, sample: Parsed) -> None:
    hits = retriever.search(Query("how does auth_for work", "understand_code", "auth_for"), 10)
    assert hits[0].detail.relation == "definition"
    assert hits[0].chunk_id == sample.chunk_of("auth_for")
    assert "get_netrc_auth" in {h.detail.name for h in hits[1:]}
    assert retriever.search(Query("how are retries counted", "understand_code"), 10) == []


def test_scope_and_limit(retriever: GraphRetriever) -> None:
    assert sites(refs(retriever, "rebuild_auth", include=("pkg/**",))) == [("pkg/sessions.py", 21, "call")]
    assert sites(refs(retriever, "rebuild_auth", exclude=("tests/",))) == [("pkg/sessions.py", 21, "call")]
    assert len(refs(retriever, "rebuild_auth", limit=1)) == 1
    assert refs(retriever, "rebuild_auth", limit=0) == []
    with pytest.raises(QueryError):
        refs(retriever, "rebuild_auth", include=("/etc/**",))


def test_bare_identifier_text_is_used_when_no_symbol_was_extracted(retriever: GraphRetriever) -> None:
    hits = retriever.search(Query("rebuild_auth", "find_references"), 10)
    assert len(hits) == 2
    assert retriever.search(Query("who calls the thing", "find_references"), 10) == []


def test_graph_errors_become_retriever_errors(sample: Parsed) -> None:
    def broken() -> CallGraph:
        raise GraphError("records are inconsistent")

    r = GraphRetriever(broken, sample.chunk_at)
    with pytest.raises(RetrieverError, match="call graph unavailable"):
        refs(r, "rebuild_auth")
