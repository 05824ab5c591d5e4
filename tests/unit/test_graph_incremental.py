"""Incremental call-graph builds (graph.incremental through GraphState(incremental=True)): after each
edit of real code the graph equals a whole build's, edge for edge and site for site, and the edits
that can only be handled whole are built whole; the real parser, store and resolver."""

from __future__ import annotations

import re
import shutil
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from graph.callgraph import CallGraph
from graph.incremental import MAX_SHARE, MIN_FILES, WHOLE_EVERY, GraphInputs
from graph.resolution import Resolver
from graph.symbol_index import Resolution, SymbolIndex
from indexing.workspace import Workspace, WorkspaceOptions
from retrievers.engine.graph_state import GraphState

SAMPLES = Path(__file__).resolve().parents[1] / "workspace"


def facts(graph: CallGraph) -> tuple[Any, ...]:
    """Everything a build decides, by definition id (both builds read the same store, so the ids
    agree): nodes, every edge with its attributes and sites, each callee's incoming sites, the order
    of each node's edges, the unresolved sites and the outcome counts."""
    def site(s: Any) -> tuple[Any, ...]:
        return (s.path, s.line, s.column, s.callee, s.receiver)

    edges = {(u, v, a.get("type"), a.get("weight"), a.get("evidence"), a.get("inherits"),
              tuple(map(site, a.get("sites", ()))), len(a.get("imports", ())))
             for u, nbrs in graph.succ.items() for v, a in nbrs.items()}
    incoming = {k: [(site(s), c, e) for s, c, e in v] for k, v in graph.incoming_index.items()}
    nodes = {n: (d["definition"].qualified_name, d["definition"].path, d["definition"].end_line)
             for n, d in graph.nodes_data.items()}
    # the order readers meet them in (a callee's callers, a class's bases...)
    order = ([(u, list(nbrs)) for u, nbrs in graph.succ.items()],
             [(v, list(nbrs)) for v, nbrs in graph.pred.items()], list(graph.incoming_index))
    return (nodes, edges, incoming, order, list(map(site, graph.unresolved)), dict(graph.outcomes),
            index_facts(graph))


def index_facts(graph: CallGraph) -> dict[str, Any]:
    """The symbol index's tables as plain values (and its files in their order)."""
    ix = graph.index
    out: dict[str, Any] = {name: {k: list(v) for k, v in getattr(ix, name).items()} for name in (
        "by_name", "by_qname", "by_name_lower", "by_qname_lower", "by_path", "by_path_name", "by_path_qname")}
    out["defs"] = list(ix.defs)
    out["path_order"] = list(ix.by_path)
    out["members"] = {p: {k: list(v) for k, v in t.items()} for p, t in ix.members.items()}
    out["local"] = {p: {k: list(v) for k, v in t.items()} for p, t in ix.local.items()}
    out["stars"] = {p: list(v) for p, v in ix.stars.items()}
    for name in ("parent_of", "ctor_functions", "class_ids", "member_ids", "not_callable"):
        out[name] = getattr(ix, name)
    out["modules"] = sorted(ix.modules.paths)
    return out


@pytest.fixture()
def tree(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    shutil.copytree(SAMPLES / "graph_sample", root / "graph_sample")
    shutil.copytree(SAMPLES / "sample", root / "sample")
    (root / "base.py").write_text("class Base:\n    def run(self):\n        return 1\n")
    (root / "sub.py").write_text("from base import Base\n\n\nclass Sub(Base):\n"
                                 "    def go(self):\n        return self.step()\n")
    (root / "lib.py").write_text("def target():\n    return 1\n")
    (root / "reexport.py").write_text("from lib import target as aim\nfrom lib import helper\n"
                                      "from lib import later as soon\n")
    (root / "user.py").write_text("from reexport import aim, helper, soon\n\n\ndef use():\n"
                                  "    return aim() + helper()\n\n\ndef wait():\n    return soon()\n")
    (root / "parent.py").write_text("from grand import Grand\n\n\ndef unrelated():\n    return 1\n")
    (root / "grand.py").write_text("class Grand:\n    def walk(self):\n        return 1\n")
    (root / "child.py").write_text("from parent import Missing\n\n\nclass Child(Missing):\n"
                                   "    def go(self):\n        return self.walk()\n")
    (root / "caller.py").write_text("import helpers\n\n\ndef call():\n    return helpers.missing()\n")
    (root / "pkg").mkdir()  # a Go type and its methods in two files of one package
    (root / "pkg" / "shape.go").write_text("package pkg\n\ntype Shape struct{}\n")
    (root / "pkg" / "area.go").write_text("package pkg\n\nfunc (s *Shape) Area() int {\n\treturn 1\n}\n\n"
                                          "func Use() int {\n\ts := &Shape{}\n\treturn s.Area()\n}\n")
    return root


def edit(root: Path, rel: str, change: Callable[[str], str]) -> str:
    path = root / rel
    text = path.read_text()
    new = change(text)
    assert new != text, f"the edit of {rel} changed nothing"
    path.write_text(new)
    return rel


def append(text: str) -> Callable[[str], str]:
    return lambda s: s + text


def body_edit(text: str) -> str:
    """A change inside the first function body that returns 1 (`x = 1`, then `return x`, at its
    indent): no name changes shape."""
    return re.sub(r"( +)return 1\n", r"\1x = 1\n\1return x\n", text, count=1)


@contextmanager
def built(tree: Path, tmp_path: Path) -> Iterator[tuple[Workspace, GraphState]]:
    """The workspace of `tree`, indexed, and an incremental graph holder that has built it once."""
    with Workspace(tree, WorkspaceOptions(index_dir=tmp_path / "index")) as ws:
        ws.update()
        holder = GraphState(ws, incremental=True)
        holder.build()
        yield ws, holder


# (name, file, change, built incrementally)
EDITS: list[tuple[str, str, Callable[[str], str], bool]] = [
    ("body", "graph_sample/requests/sessions.py",
     lambda s: s.replace("    return ", "    x = 1\n    return ", 1), True),
    ("a function another file's import names", "lib.py",
     append("\n\ndef helper():\n    return target()\n"), True),
    ("a method a subclass calls on self", "base.py",
     append("\n    def step(self):\n        return 2\n"), True),
    ("a function renamed away", "lib.py", lambda s: s.replace("def target", "def other_target"), True),
    ("an import alias moved", "reexport.py",
     lambda s: s.replace("as aim", "as aim2\nfrom lib import other_target as aim"), True),
    ("a JavaScript method", "graph_sample/express/router/layer.js", append(
        "\nLayer.prototype.extra = function extra() {\n  return this.handle_error();\n};\n"), True),
    ("a Go function", "sample/cmd/feedping/main.go", append("\nfunc extra() int {\n\treturn 1\n}\n"), True),
    ("a Go method beside its type's file", "pkg/area.go",
     append("\nfunc (s *Shape) Perimeter() int {\n\treturn s.Area()\n}\n"), True),
    ("the file of a Go type whose methods live elsewhere", "pkg/shape.go",
     append("\nfunc NewShape() *Shape {\n\treturn &Shape{}\n}\n"), True),
    ("a class no base names", "lib.py",
     append("\n\nclass Tool:\n    def use(self):\n        return target()\n"), True),
    ("a class a subclass names as its base", "parent.py",
     append("\n\nclass Missing(Grand):\n    pass\n"), False),  # Child's self.walk() reaches Grand
    ("a class's bases", "sub.py", lambda s: s.replace("class Sub(Base)", "class Sub(object)"), False),
    ("a constructor", "base.py", append("\n    def __init__(self):\n        self.x = 1\n"), False),
]


def test_each_edit_builds_the_graph_a_whole_build_makes(tree: Path, tmp_path: Path) -> None:
    with Workspace(tree, WorkspaceOptions(index_dir=tmp_path / "index")) as ws:
        ws.update()
        holder = GraphState(ws, incremental=True)
        holder.build()
        for name, rel, change, incremental in EDITS:
            before = holder._inputs.incremental_builds if holder._inputs else 0
            ws.update(paths=[edit(tree, rel, change)])
            graph = holder.build()
            assert holder._inputs is not None
            took = holder._inputs.incremental_builds == before + 1
            assert took == incremental, name
            assert facts(graph) == facts(GraphState(ws).build()), name


def test_new_targets_reached_through_imports_and_bases(tree: Path, tmp_path: Path) -> None:
    """The shapes a kept resolution could miss: calls that named nothing until the edit, imported
    through a re-export (`helper`) or under another name (`soon`, `later` in lib.py), and a self-call
    an edited base class now answers."""
    with Workspace(tree, WorkspaceOptions(index_dir=tmp_path / "index")) as ws:
        ws.update()
        holder = GraphState(ws, incremental=True)
        first = holder.build()
        assert not first.resolve("helper") and not first.resolve("step")
        ws.update(paths=[edit(tree, "lib.py", append("\n\ndef helper():\n    return 2\n\n\n"
                                                     "def later():\n    return 3\n"))])
        ws.update(paths=[edit(tree, "base.py", append("\n    def step(self):\n        return 2\n"))])
        graph = holder.build()
        assert holder._inputs is not None and holder._inputs.incremental_builds == 1
        (helper,) = graph.resolve("helper")
        (step,) = graph.resolve("step")
        (later,) = graph.resolve("later")
        assert {graph.definition(c).name for _, c in graph.callers(later.id) if c is not None} == {"wait"}
        assert {graph.definition(c).name for _, c in graph.callers(helper.id) if c is not None} == {"use"}
        assert {graph.definition(c).name for _, c in graph.callers(step.id) if c is not None} == {"go"}


def test_unchanged_index_keeps_the_graph(tree: Path, tmp_path: Path) -> None:
    with Workspace(tree, WorkspaceOptions(index_dir=tmp_path / "index")) as ws:
        ws.update()
        holder = GraphState(ws, incremental=True)
        graph = holder.build()
        (tree / "lib.py").touch()
        ws.update()
        assert holder.build() is graph  # no file's records changed


@pytest.mark.parametrize("files", [
    {"extra.py": "from lib import target\n\n\ndef more():\n    return target()\n"},
    {"aim.py": "def aim():\n    return 0\n"},  # a module named as a name others import
    # a module others import from outside until now: their calls on it are no longer external
    {"helpers.py": "def run():\n    return 0\n"},
    {"graph_sample/requests/compat.py": "def builtin_str(x):\n    return str(x)\n"},
    {"pkg/perimeter.go": "package pkg\n\nfunc (s *Shape) Perimeter() int {\n\treturn s.Area()\n}\n"},
])
def test_files_added_and_removed(tree: Path, tmp_path: Path, files: dict[str, str]) -> None:
    with Workspace(tree, WorkspaceOptions(index_dir=tmp_path / "index")) as ws:
        ws.update()
        holder = GraphState(ws, incremental=True)
        holder.build()
        for rel, text in files.items():
            (tree / rel).write_text(text)
        ws.update()
        added = holder.build()
        assert holder._inputs is not None and holder._inputs.incremental_builds == 1
        assert facts(added) == facts(GraphState(ws).build())
        for rel in files:
            (tree / rel).unlink()
        (tree / "lib.py").unlink()  # and one that others import
        ws.update()
        removed = holder.build()
        assert holder._inputs is not None and holder._inputs.incremental_builds == 2
        assert facts(removed) == facts(GraphState(ws).build())


def test_which_changes_build_whole() -> None:
    stamps = {f"f{i}.py": (i, "h", i) for i in range(1000)}
    last = GraphInputs(stamps, [], [], [], [])
    limit = int(max(MIN_FILES, MAX_SHARE * len(stamps)))
    few = {**stamps, **{f"f{i}.py": (i, "new", i) for i in range(limit)}}
    assert last.changed_paths(few) == sorted(f"f{i}.py" for i in range(limit))
    assert last.changed_paths({**few, "f999.py": (999, "new", 999)}) is None  # one over the share
    assert last.changed_paths({**stamps, "new.py": (1000, "h", None)}) == ["new.py"]  # a file added
    assert last.changed_paths({k: v for k, v in stamps.items() if k != "f1.py"}) == ["f1.py"]  # removed
    assert last.changed_paths(stamps) == []
    tired = GraphInputs(stamps, [], [], [], [], incremental_builds=WHOLE_EVERY - 1)
    assert tired.changed_paths(stamps) is None  # every WHOLE_EVERY-th build is whole


def test_equal_resolutions_made_afresh_share_one_object() -> None:
    a, b, kept = (Resolution(1, [2], "resolved") for _ in range(3))
    other = Resolution(1, [3], "resolved")
    inputs = GraphInputs({}, [], [], [], [a, b, kept, other])
    inputs.share_resolutions([None, None, kept, None])
    assert inputs.resolutions[0] is a and inputs.resolutions[1] is a  # b made afresh, equal to a: a
    assert inputs.resolutions[2] is kept and inputs.resolutions[3] is other  # kept ones stay as they are


def test_a_failed_incremental_build_is_made_whole(tree: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                   caplog: pytest.LogCaptureFixture) -> None:
    with Workspace(tree, WorkspaceOptions(index_dir=tmp_path / "index")) as ws:
        ws.update()
        holder = GraphState(ws, incremental=True)
        holder.build()

        def broken(*_args: object, **_kwargs: object) -> None:
            raise RuntimeError("a bug in the patch")
        monkeypatch.setattr(SymbolIndex, "patched", broken)
        ws.update(paths=[edit(tree, "lib.py", append("\n\ndef helper():\n    return target()\n"))])
        graph = holder.build()
        assert "building it whole" in caplog.text and "a bug in the patch" in caplog.text
        assert holder._inputs is not None and holder._inputs.incremental_builds == 0
        assert facts(graph) == facts(GraphState(ws).build())
        monkeypatch.undo()
        ws.update(paths=[edit(tree, "lib.py", append("\n\ndef later():\n    return 3\n"))])
        assert facts(holder.build()) == facts(GraphState(ws).build())
        assert holder._inputs.incremental_builds == 1  # and the next one is incremental again


def test_calls_into_an_edited_file_keep_their_resolutions_moved_to_the_new_ids(
        tree: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """An edit writes every definition of its file again, with new ids: a call from another file whose
    one callee kept its name, kind, parent, bases and signature keeps its resolution, moved to the new
    id, and is not resolved again; one into a name the file defines twice is (which one a call means
    may follow their order). The graph is still the whole build's."""
    (tree / "twice.py").write_text("def pick(a):\n    return 1\n\n\ndef pick():\n    return 2\n")
    (tree / "calls.py").write_text("from lib import target\nfrom twice import pick\n\n\n"
                                   "def run():\n    return target() + pick()\n")
    resolved: list[str] = []
    real = Resolver.resolve_call_of  # (what every resolution of a build goes through: `graph.call_memo`)

    def spy(self: Resolver, site: Any, caller: int | None) -> Resolution:
        resolved.append(f"{site.path}:{site.callee}")
        return real(self, site, caller)
    with built(tree, tmp_path) as (ws, holder):
        monkeypatch.setattr(Resolver, "resolve_call_of", spy)
        ws.update(paths=[edit(tree, "lib.py", body_edit)])
        ws.update(paths=[edit(tree, "twice.py", lambda s: "def pick():\n    return 2\n\n\n"
                                                          "def pick(a):\n    return 1\n")])
        graph = holder.build()
        assert holder._inputs is not None and holder._inputs.incremental_builds == 1
        assert "calls.py:target" not in resolved and "user.py:aim" not in resolved
        assert "calls.py:pick" in resolved
        (target,) = graph.resolve("target")
        callers = {graph.definition(c).name for _, c in graph.callers(target.id) if c is not None}
        assert callers == {"run", "use"}
        monkeypatch.undo()
        assert facts(graph) == facts(GraphState(ws).build())


def test_class_bases_are_taken_over_unless_they_may_resolve_otherwise(
        tree: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """An incremental build takes over the resolved bases of the classes outside the edited files
    (before, every class's bases were resolved again by each build), those outside the workspace
    included; a class whose base is a definition of the edited file (written again with a new id) has
    its bases resolved again. The graph is still the whole build's."""
    looked: list[str] = []
    real = Resolver.lookup_class

    def spy(self: Resolver, name: str, path: str) -> tuple[list[int], bool]:
        looked.append(f"{path}:{name}")
        return real(self, name, path)
    with built(tree, tmp_path) as (ws, holder):
        monkeypatch.setattr(Resolver, "lookup_class", spy)
        ws.update(paths=[edit(tree, "lib.py", body_edit)])
        graph = holder.build()
        assert holder._inputs is not None and holder._inputs.incremental_builds == 1
        assert "sub.py:Base" not in looked and "child.py:Missing" not in looked
        (child,) = graph.resolve("Child")
        assert graph.resolver.has_open_bases(child.id)  # (its base is nowhere in the workspace)
        ws.update(paths=[edit(tree, "base.py", body_edit)])
        graph = holder.build()
        assert holder._inputs.incremental_builds == 2
        assert "sub.py:Base" in looked
        (sub,), (base,) = graph.resolve("Sub"), graph.resolve("Base")
        assert graph.resolver.bases(sub.id) == [base.id]
        monkeypatch.undo()
        assert facts(graph) == facts(GraphState(ws).build())


def test_a_loaded_graph_primed_builds_the_first_edit_incrementally(tree: Path, tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """A warm process loads the saved graph, which carries no inputs: `prime` reads and resolves them
    (the loaded graph stays in use), so the first edit is built incrementally, equal to a whole build;
    a graph built here, or a state that keeps no inputs, is not primed."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))  # the signing key lives there
    with Workspace(tree, WorkspaceOptions(index_dir=tmp_path / "index")) as ws:
        ws.update()
        built = GraphState(ws, persist=True, incremental=True)
        built.build()
        assert not built.loaded and not built.prime()  # (built here: it has its inputs)
        assert not GraphState(ws, persist=True).prime()  # (keeps no inputs)
    with Workspace(tree, WorkspaceOptions(index_dir=tmp_path / "index")) as ws:
        warm = GraphState(ws, persist=True, incremental=True)
        loaded = warm.build()
        assert warm.loaded and warm.prime() and warm.current is loaded and not warm.prime()
        warm.persist = False  # (as a server's later refreshes)
        ws.update(paths=[edit(tree, "lib.py", append("\n\ndef helper():\n    return target()\n"))])
        graph = warm.build()
        assert warm._inputs is not None and warm._inputs.incremental_builds == 1
        assert facts(graph) == facts(GraphState(ws).build())


def test_a_servers_builds_make_the_case_folded_tables_and_a_one_shot_build_does_not(
        tree: Path, tmp_path: Path) -> None:
    """Made on a lookup, the sdist's folded name tables took 70 ms of a search: a server's builds make
    them (whole) or patch them (incremental); a one-shot command's build leaves them to a lookup."""
    with built(tree, tmp_path) as (ws, holder):
        first = holder.build()
        assert first.index._folded is not None
        ws.update(paths=[edit(tree, "lib.py", append("\n\ndef Helper_Two():\n    return target()\n"))])
        graph = holder.build()
        assert holder._inputs is not None and holder._inputs.incremental_builds == 1
        assert graph.index._folded is not None and graph.index._folded is not first.index._folded
        assert [graph.index.defs[i].name for i in graph.index.by_name_lower["helper_two"]] == ["Helper_Two"]
        assert GraphState(ws).build().index._folded is None
