"""Call sites asking the same question resolve once (graph.call_memo): the same resolutions as the
resolver gives each site on its own, over real parses."""

from __future__ import annotations

from pathlib import Path

from graph.call_memo import CallMemo
from graph.resolution import Resolver
from graph.symbol_index import Resolution, SymbolIndex
from indexing.records import CallSite
from tests.unit.graph_records import parse_sources

SAMPLE = Path(__file__).resolve().parents[1] / "workspace" / "graph_sample"

SOURCES = {
    "app/models.py": (
        "class Base:\n"
        "    def save(self):\n        self.check()\n        self.check()\n"
        "    def check(self):\n        return 1\n\n"
        "class Child(Base):\n"
        "    def check(self):\n        return 2\n"
        "    def run(self):\n        self.check()\n        super().check()\n"
        "    def again(self):\n        self.check()\n        helper()\n\n"
        "def helper():\n    return Child()\n\n"
        "def main():\n    item = Child()\n    item.run()\n    helper()\n    helper()\n"
    ),
    "web/app.js": (
        "function route() { return this.handle(); }\n"
        "function other() { return this.handle(); }\n"
        "const app = { handle() { return 1; } };\n"
        "class View { render() { this.draw(); this.draw(); } draw() { return route(); } }\n"
    ),
    "srv/server.go": (
        "package srv\n\ntype Server struct{}\n\n"
        "func (s *Server) Start() { s.Stop(); s.Stop() }\n"
        "func (t *Server) Stop() { t.Start() }\n"
    ),
}


def _fields(res: Resolution) -> tuple[object, ...]:
    return res.caller, res.callees, res.status, res.rule, res.weight, res.evidence


def _both(files: dict[str, str]) -> tuple[list[CallSite], list[Resolution], list[Resolution], int]:
    """The sites, each resolved alone, the same through a `CallMemo`, and how many of them it resolved
    (not counting the typed rules' own probes)."""
    defs, calls, imports = parse_sources(files)
    alone = Resolver(SymbolIndex(defs, imports, extra_paths=[c.path for c in calls]))
    resolver = Resolver(SymbolIndex(defs, imports, extra_paths=[c.path for c in calls]))
    resolved = []
    real = resolver.resolve_call_of

    def counted(site: CallSite, caller: int | None) -> Resolution:
        resolved.append(site)
        return real(site, caller)
    resolver.resolve_call_of = counted  # type: ignore[method-assign]
    memo = CallMemo(resolver)
    memoized = [memo.resolve(c) for c in calls]
    sites = {id(c) for c in calls}
    return calls, [alone.resolve_call(c) for c in calls], memoized, sum(id(s) in sites for s in resolved)


def test_each_site_resolves_as_it_does_alone_and_repeated_questions_are_kept_once() -> None:
    calls, alone, memoized, resolved = _both(SOURCES)
    assert [_fields(r) for r in memoized] == [_fields(r) for r in alone]
    by_site = {(c.path, c.line, c.callee): r for c, r in zip(calls, memoized, strict=True)}
    # `self.check()` in Base.save twice, in Child.run and Child.again: one question per class
    assert by_site[("app/models.py", 3, "check")].callees == by_site[("app/models.py", 4, "check")].callees
    assert by_site[("app/models.py", 12, "check")].callees != by_site[("app/models.py", 3, "check")].callees
    assert by_site[("app/models.py", 12, "check")].caller != by_site[("app/models.py", 15, "check")].caller
    assert by_site[("app/models.py", 15, "check")].callees == by_site[("app/models.py", 12, "check")].callees
    assert resolved <= len(calls) - 3  # (Base.save's second, Child.again's `self.check()`, main's `helper()`)
    # a kept resolution's callees are the site's own list
    first, second = by_site[("app/models.py", 3, "check")], by_site[("app/models.py", 4, "check")]
    assert first.callees is not second.callees


def test_the_graph_sample_resolves_as_site_by_site() -> None:
    files = {str(p.relative_to(SAMPLE)): p.read_text(encoding="utf-8")
             for p in sorted(SAMPLE.rglob("*")) if p.suffix in (".py", ".js")}
    calls, alone, memoized, resolved = _both(files)
    assert len(calls) > 50 and resolved < len(calls)
    assert [_fields(r) for r in memoized] == [_fields(r) for r in alone]
