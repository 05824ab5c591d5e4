"""Call-graph accuracy against real analyzers: precision and recall of codeseek's call links.

    .venv/bin/python bench/graph_accuracy.py                  # every corpus below
    .venv/bin/python bench/graph_accuracy.py --only requests express

For every call site codeseek extracts in a corpus, the reference analyzer says where the called
name goes: jedi (`Script.goto`, follow_imports) for Python, the TypeScript language service
(`getDefinitionAtPosition`, `allowJs`) for JavaScript and TypeScript. A reference answer is a set
of workspace definitions (their file and name line), "external" (a builtin, the standard library, a
dependency) or unknown (the analyzer cannot tell: an untyped parameter, a local callable).

- precision: of codeseek's links at sites where the reference knows the answer, the share that
  points at a definition the reference names (a link where the reference says "external" is wrong);
- recall: of the reference's links to workspace definitions, the share codeseek has.

Figures are given per call site link and per distinct caller->callee edge, for the confident links
(evidence "resolved" or "by-unique-name": what hover and call hierarchy show) and for all links
(ambiguous ones included: references and impact). A class and its constructor count as one target.

The analyzers are bench-only dependencies, installed on first use under
`$CODESEEK_CORPORA/bench-tools` (jedi 0.19.2 from PyPI into a venv, typescript 5.6.3 from npm);
their answers are cached there per corpus, so a rerun only re-runs codeseek.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import tempfile
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.corpora import corpora_dir, fetch_npm, fetch_sdist  # noqa: E402
from bench.graph_bench import parse_tree  # noqa: E402
from graph.callgraph import CallGraph, build_call_graph  # noqa: E402
from graph.resolution import CONSTRUCTOR_NAMES  # noqa: E402
from graph.symbol_index import CONFIDENT  # noqa: E402
from indexing.records import CallSite  # noqa: E402

JEDI = "jedi==0.19.2"
TYPESCRIPT = "typescript@5.6.3"
# (name, language, fetch, subdirectory indexed)
CORPORA = [
    ("requests", "python", lambda: fetch_sdist("requests", "2.32.3"), "src/requests"),
    ("flask", "python", lambda: fetch_sdist("flask", "3.0.3"), "src/flask"),
    ("click", "python", lambda: fetch_sdist("click", "8.1.7"), "src/click"),
    ("express", "javascript", lambda: fetch_npm("express", "4.21.2"), ""),
    ("immer", "typescript", lambda: fetch_npm("immer", "10.1.1"), "src"),
]
TARGETS = {"python": (0.95, 0.90), "javascript": (0.90, 0.85), "typescript": (0.90, 0.85)}

Site = tuple[str, int, int]  # path, line, byte column of the called name
Target = tuple[str, int]  # path, name line of a definition

JEDI_WORKER = r"""
import json, sys
import jedi
root, sites_file, out_file = sys.argv[1:4]
sites = json.load(open(sites_file))
project = jedi.Project(root, smart_sys_path=False, load_unsafe_extensions=False)
by_file = {}
for path, line, col in sites:
    by_file.setdefault(path, []).append((line, col))
out = {}
for path, items in by_file.items():
    text = open(root + "/" + path, encoding="utf-8").read()
    lines = text.split("\n")
    script = jedi.Script(code=text, path=root + "/" + path, project=project)
    for line, col in items:
        chars = len(lines[line - 1].encode("utf-8")[:col].decode("utf-8", "replace"))
        try:
            names = script.goto(line, chars, follow_imports=True)
        except Exception:
            names = []
        found = []
        for n in names:
            mp = str(n.module_path) if n.module_path else ""
            inside = mp.startswith(root + "/")
            found.append([mp[len(root) + 1:] if inside else "", n.line or 0, n.type, inside, n.name])
        out[f"{path}:{line}:{col}"] = found
json.dump(out, open(out_file, "w"))
"""

TS_WORKER = r"""
const fs = require('fs'), path = require('path');
const [tsPath, root, sitesFile, outFile] = process.argv.slice(2);
const ts = require(tsPath);
const sites = JSON.parse(fs.readFileSync(sitesFile, 'utf8'));
const files = [...new Set(sites.map(s => path.join(root, s[0])))];
const options = {allowJs: true, checkJs: false, noEmit: true, target: ts.ScriptTarget.ES2020,
  module: ts.ModuleKind.CommonJS, moduleResolution: ts.ModuleResolutionKind.Node10, strict: false};
const host = {
  getScriptFileNames: () => files, getScriptVersion: () => '1',
  getScriptSnapshot: f => fs.existsSync(f)
    ? ts.ScriptSnapshot.fromString(fs.readFileSync(f, 'utf8')) : undefined,
  getCurrentDirectory: () => root, getCompilationSettings: () => options,
  getDefaultLibFileName: o => ts.getDefaultLibFilePath(o),
  fileExists: ts.sys.fileExists, readFile: ts.sys.readFile, readDirectory: ts.sys.readDirectory,
  directoryExists: ts.sys.directoryExists, getDirectories: ts.sys.getDirectories,
};
const service = ts.createLanguageService(host, ts.createDocumentRegistry());
const program = service.getProgram();
const out = {};
for (const [rel, line, col] of sites) {
  const file = path.join(root, rel);
  const sf = program.getSourceFile(file);
  const lineText = sf.text.split('\n')[line - 1] || '';
  const chars = Buffer.from(lineText, 'utf8').subarray(0, col).toString('utf8').length;
  const pos = ts.getPositionOfLineAndCharacter(sf, line - 1, chars);
  let defs = [];
  try { defs = service.getDefinitionAtPosition(file, pos) || []; } catch (e) { defs = []; }
  out[`${rel}:${line}:${col}`] = defs.map(d => {
    const inside = d.fileName.startsWith(root + '/') && !d.fileName.includes('/node_modules/');
    const dsf = program.getSourceFile(d.fileName);
    const at = dsf ? ts.getLineAndCharacterOfPosition(dsf, d.textSpan.start).line + 1 : 0;
    return [inside ? path.relative(root, d.fileName) : '', at, d.kind, inside, d.name];
  });
}
fs.writeFileSync(outFile, JSON.stringify(out));
"""


def tools_dir() -> Path:
    path = corpora_dir() / "bench-tools"
    path.mkdir(parents=True, exist_ok=True)
    return path


def jedi_python() -> Path:
    """A venv with jedi, made on first use (bench-only; not a codeseek dependency)."""
    venv = tools_dir() / "jedi-venv"
    python = venv / "bin" / "python"
    if not python.exists():
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    if subprocess.run([str(python), "-c", "import jedi"], capture_output=True).returncode:
        subprocess.run([str(python), "-m", "pip", "install", "--quiet", JEDI], check=True)
    return python


def typescript_module() -> Path:
    """The typescript package, npm-installed on first use under bench-tools/ts."""
    folder = tools_dir() / "ts"
    module = folder / "node_modules" / "typescript"
    if not module.is_dir():
        folder.mkdir(exist_ok=True)
        subprocess.run(["npm", "install", "--silent", "--no-save", "--prefix", str(folder), TYPESCRIPT],
                       check=True)
    return module


def reference(name: str, language: str, root: Path, sites: list[Site]) -> dict[str, list[list]]:
    """The analyzer's answer per site key "path:line:col" (cached per corpus)."""
    cache = tools_dir() / f"reference-v2-{name}.json"
    if cache.exists():
        cached: dict[str, list[list]] = json.loads(cache.read_text())
        if all(f"{p}:{ln}:{c}" in cached for p, ln, c in sites):
            return cached
    with tempfile.TemporaryDirectory() as tmp:
        sites_file, out_file = Path(tmp) / "sites.json", Path(tmp) / "out.json"
        sites_file.write_text(json.dumps(sites))
        if language == "python":
            cmd = [str(jedi_python()), "-c", JEDI_WORKER, str(root), str(sites_file), str(out_file)]
        else:
            worker = Path(tmp) / "worker.js"
            worker.write_text(TS_WORKER)
            cmd = ["node", str(worker), str(typescript_module()), str(root), str(sites_file), str(out_file)]
        subprocess.run(cmd, check=True)
        result: dict[str, list[list]] = json.loads(out_file.read_text())
    cache.write_text(json.dumps(result))
    return result


# Reference answers that are definitions; a variable, parameter or import alias counts only where
# codeseek also sees a definition (`const f = () => ...`), else the answer is "unknown".
_IDENT = re.compile(r"^[A-Za-z_$][\w$]*$")
_DEF_KINDS = {"function", "class", "method", "constructor", "local function", "member", "getter",
              "setter", "interface", "enum", "type", "local class"}


def normalizer(graph: CallGraph) -> tuple[Callable[[int], Target], dict[Target, list[int]]]:
    """Definition id -> comparable target, and definition ids by (path, name line)."""
    defs_at: dict[Target, list[int]] = defaultdict(list)
    for d in graph.definitions():
        defs_at[(d.path, d.name_line)].append(d.id)

    first_line: dict[tuple[str, str], int] = {}
    for d in graph.definitions():
        key = (d.path, d.qualified_name)
        first_line[key] = min(first_line.get(key, d.name_line), d.name_line)

    def norm(def_id: int) -> Target:
        """A constructor counts as its class; overload signatures and the body count as one."""
        d = graph.definition(def_id)
        parent = graph.index.parent_of.get(def_id)
        if parent is not None and graph.index.is_class(parent) and (
                d.name in CONSTRUCTOR_NAMES or d.name == graph.definition(parent).name):
            d = graph.definition(parent)
        return (d.path, first_line[(d.path, d.qualified_name)])

    return norm, defs_at


def evaluate(graph: CallGraph, calls: list[CallSite], ref: dict[str, list[list]]) -> dict[str, float]:
    """Precision/recall per site link and per caller->callee edge (module docstring)."""
    norm, defs_at = normalizer(graph)
    names = {d.id: d.name for d in graph.definitions()}

    links, callers = site_targets(graph, norm, confident_only=False)
    counts: dict[str, float] = defaultdict(float)
    edges: dict[str, set] = defaultdict(set)
    for site in calls:
        key = (site.path, site.line, site.column)
        answer = ref.get(f"{site.path}:{site.line}:{site.column}")
        if not answer:
            continue  # the analyzer does not know
        inside = reference_targets(answer, norm, defs_at, names)
        if inside is None:
            continue
        caller = callers.get(key, graph.resolver.caller_of(site))
        for confident_only in (True, False):
            tag = "conf" if confident_only else "all"
            ours = {t for t, conf in links.get(key, ()) if conf or not confident_only}
            counts[f"{tag}_links"] += len(ours)
            counts[f"{tag}_correct"] += len(ours & inside)
            counts[f"{tag}_ref"] += len(inside)
            counts[f"{tag}_found"] += len(ours & inside)
            edges[f"{tag}_ours"].update((caller, key[0] if caller is None else "", t) for t in ours)
            edges[f"{tag}_good"].update((caller, key[0] if caller is None else "", t) for t in ours & inside)
            edges[f"{tag}_ref"].update((caller, key[0] if caller is None else "", t) for t in inside)
        counts["sites_known"] += 1
        counts["sites_inside"] += bool(inside)
    out = dict(counts)
    for tag in ("conf", "all"):
        out[f"{tag}_P"] = counts[f"{tag}_correct"] / counts[f"{tag}_links"] if counts[f"{tag}_links"] else 1.0
        out[f"{tag}_R"] = counts[f"{tag}_found"] / counts[f"{tag}_ref"] if counts[f"{tag}_ref"] else 1.0
        ours, good, refs = edges[f"{tag}_ours"], edges[f"{tag}_good"], edges[f"{tag}_ref"]
        out[f"{tag}_edge_P"] = len(good) / len(ours) if ours else 1.0
        out[f"{tag}_edge_R"] = len(good & refs) / len(refs) if refs else 1.0
        out[f"{tag}_edges"] = len(ours)
        out[f"{tag}_ref_edges"] = len(refs)
    return out


def site_targets(graph: CallGraph, norm: Callable[[int], Target], confident_only: bool
                 ) -> tuple[dict[Site, list[tuple[Target, bool]]], dict[Site, int | None]]:
    """codeseek's links per site as (target, confident); a constructor linked beside its class (or a
    subclass: `InvalidURL(...)` runs `RequestException.__init__`) is the class, not a second target."""
    ids: dict[Site, list[tuple[int, bool]]] = defaultdict(list)
    callers: dict[Site, int | None] = {}
    for d in graph.definitions():
        for site, caller, evidence in graph.callers_marked(d.id):
            if confident_only and evidence not in CONFIDENT:
                continue
            key = (site.path, site.line, site.column)
            ids[key].append((d.id, evidence in CONFIDENT))
            callers[key] = caller
    ix = graph.index
    links: dict[Site, list[tuple[Target, bool]]] = {}
    for key, items in ids.items():
        has_class = any(ix.is_class(i) for i, _ in items)
        links[key] = [(norm(i), conf) for i, conf in items
                      if not (has_class and i in ix.parent_of and ix.is_class(ix.parent_of[i])
                              and graph.definition(i).name in CONSTRUCTOR_NAMES)]
    return links, callers


def reference_targets(answer: list[list], norm: Callable[[int], Target], defs_at: dict[Target, list[int]],
                      names: dict[int, str]) -> set[Target] | None:
    """The workspace definitions an analyzer answer names; None when it names only a variable."""
    inside: set[Target] = set()
    for p, ln, kind, ins, name in answer:
        named = [i for i in defs_at.get((p, ln), ()) if names[i] == name]
        if ins and named:
            inside.add(norm(named[0]))
        elif ins and kind in _DEF_KINDS and _IDENT.match(name or ""):
            inside.add((p, ln))  # a definition codeseek does not have: a miss
    if not inside and any(a[3] for a in answer):
        return None  # a workspace variable or parameter, not a definition: unknown
    return inside


def misses(graph: CallGraph, calls: list[CallSite], ref: dict[str, list[list]], limit: int) -> None:
    """Print up to `limit` wrong confident links and missed reference links (for debugging)."""
    norm, defs_at = normalizer(graph)
    names = {d.id: d.name for d in graph.definitions()}
    links, _ = site_targets(graph, norm, confident_only=True)
    shown = 0
    for site in calls:
        answer = ref.get(f"{site.path}:{site.line}:{site.column}")
        inside = reference_targets(answer, norm, defs_at, names) if answer else None
        if inside is None or shown >= limit:
            continue
        ours = [at for at, _ in links.get((site.path, site.line, site.column), [])]
        wrong = [at for at in ours if at not in inside]
        missed = inside - set(ours)
        if wrong or missed:
            shown += 1
            recv = f"{site.receiver}." if site.receiver else ""
            print(f"    {site.path}:{site.line} {recv}{site.callee} [{site.receiver_type}] "
                  f"wrong={wrong or '-'} "
                  f"missed={sorted(missed) or '-'}{'' if inside else ' (analyzer: external)'}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--only", nargs="*", help="corpus names (default: all)")
    parser.add_argument("--show", type=int, default=0, help="print this many disagreements per corpus")
    args = parser.parse_args()
    totals: dict[str, dict[str, float]] = defaultdict(lambda: defaultdict(float))
    for name, language, fetch, sub in CORPORA:
        if args.only and name not in args.only:
            continue
        root = (fetch() / sub) if sub else fetch()
        defs, calls, imports = parse_tree(root)
        graph = build_call_graph(defs, calls, imports)
        ref = reference(name, language, root.resolve(), [(c.path, c.line, c.column) for c in calls])
        r = evaluate(graph, calls, ref)
        print(f"{name} ({language}): {len(calls)} call sites, {int(r['sites_known'])} known to the analyzer, "
              f"{int(r['sites_inside'])} into the workspace")
        for tag, label in (("conf", "confident"), ("all", "all links")):
            print(f"  {label:10s} links P {r[f'{tag}_P']:.3f} R {r[f'{tag}_R']:.3f}   "
                  f"edges P {r[f'{tag}_edge_P']:.3f} R {r[f'{tag}_edge_R']:.3f} "
                  f"({int(r[f'{tag}_edges'])} ours, {int(r[f'{tag}_ref_edges'])} reference)")
        if args.show:
            misses(graph, calls, ref, args.show)
        for k, v in r.items():
            if not k.endswith(("_P", "_R")):
                totals[language][k] += v
    print("\nper language, confident links (targets: Python P>=0.95 R>=0.90; JS/TS P>=0.90 R>=0.85):")
    for language, t in totals.items():
        p = t["conf_correct"] / t["conf_links"] if t["conf_links"] else 1.0
        rec = t["conf_found"] / t["conf_ref"] if t["conf_ref"] else 1.0
        tp, tr = TARGETS[language]
        verdict = "meets" if p >= tp and rec >= tr else "below"
        print(f"  {language:10s} P {p:.3f} (target {tp})  R {rec:.3f} (target {tr})  {verdict} target")


if __name__ == "__main__":
    main()
