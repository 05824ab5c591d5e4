"""Retrieval evaluation: the public seed set, the dev sets and our own query sets, per retriever and fused.

    python bench/eval_public.py                       # every set (seed, dev, bench/queries/*.json)
    python bench/eval_public.py --set seed            # one set by name or path
    python bench/eval_public.py --no-embed --json out.json
    python bench/eval_public.py --set semble-dev [--repos tokio,vitest | --set semble-dev:quick]

For each query it prints the rank of the target in the fused result (the one `codeseek search`
returns) and in each retriever's own ranking (chunk by chunk, no fusion, priors or dedupe): text
(tantivy BM25 + exact), semantic (embeddings), structural (definitions), graph. Rank sets report
hit@1, hit@5, hit@10 and MRR (over the top 10) per column; NDCG sets (file-level targets, the
semble benchmark style) report NDCG@10 next to the published scores.

The semble-dev set (43 repositories, bench/semble_dev.py) is run only when named; it prints
per-repository, per-language and per-category tables instead of per-query rows; its sources come from
`--semble-dev-src DIR` / `$CODESEEK_SEMBLE_DEV` (missing repositories are listed with how to get them).

Indexes live under `$CODESEEK_EVAL_DIR` (default `$XDG_CACHE_HOME/codeseek-eval/<corpus>`, ~/.cache when
unset; semble-dev: `semble-dev/<repo>`), so a second run only embeds chunks whose text changed.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import shutil
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from bench.corpora import cache_home  # noqa: E402
from bench.evalsets import (  # noqa: E402
    EvalQuery,
    QuerySet,
    Target,
    Totals,
    first_rank,
    load_set,
    ndcg_at_10,
)
from bench.semble_dev import SembleDevSpec  # noqa: E402
from indexing.workspace import Workspace, WorkspaceOptions  # noqa: E402
from retrievers.engine.search_engine import EngineOptions, SearchEngine, SearchRequest  # noqa: E402
from retrievers.ranking.profile import OVERRIDABLE, PRESETS  # noqa: E402
from retrievers.semantic.tiered import TierBlend  # noqa: E402

SHARED_EVAL = Path(os.environ.get("CODESEEK_SHARED_EVAL", "/work/shared/eval"))
COLUMNS = ("text", "semantic", "structural", "graph")
DEEP_LIMIT = 100  # how deep a miss is looked for (diagnostics only; metrics use the top 10)
TOP_KEPT = int(os.environ.get("CODESEEK_EVAL_TOP", "3"))  # top results kept per JSON row (diagnostics)


def default_sets() -> list[Path]:
    """The public seed set, the dev sets, then ours, those that exist."""
    shared = [SHARED_EVAL / "requests-seed.json", *sorted(SHARED_EVAL.glob("dev-*.json"))]
    return [p for p in shared if p.exists()] + sorted((HERE / "queries").glob("*.json"))


def find_set(name: str) -> Path | SembleDevSpec:
    """A set by path, or by a name: seed, pydantic, model2vec, click, express, flask, self...;
    `semble-dev` or `semble-dev:<quick|repo,repo>` for the 43-repository development set."""
    from bench.semble_dev import parse_spec

    spec = parse_spec(name)
    if spec is not None:
        return spec
    path = Path(name)
    if path.exists():
        return path
    for candidate in default_sets():
        if name in candidate.stem:
            return candidate
    raise SystemExit(f"no query set named {name!r} (have: {', '.join(p.stem for p in default_sets())})")


def corpus_root(qs: QuerySet) -> Path:
    """The folder a set searches: the unpacked corpus (fetched once), plus its `root` subfolder."""
    from bench.corpora import fetch_deb, fetch_npm, fetch_sdist

    corpus = qs.corpus
    kind = corpus.get("kind", "sdist")
    if kind == "self":
        base = REPO
    elif kind == "npm":
        base = fetch_npm(corpus["name"], corpus["version"])
    elif kind == "deb":  # a Debian package unpacked; root names the source tree in it (usr/share/...)
        base = fetch_deb(corpus["name"], corpus["version"])
    elif kind == "sdist":
        base = fetch_sdist(corpus["name"], corpus["version"])
    else:
        raise SystemExit(f"{qs.source or qs.name}: unknown corpus kind {kind!r} (sdist, npm, deb or self)")
    sub = corpus.get("root") or ""
    return base / sub if sub else base


def index_dir(qs: QuerySet) -> Path:
    base = Path(os.environ.get("CODESEEK_EVAL_DIR") or cache_home() / "codeseek-eval")
    c = qs.corpus
    if c.get("kind") == "semble-dev":
        return base / "semble-dev" / c["name"]
    key = "self" if c.get("kind") == "self" else f"{c['name']}-{c['version']}"
    if c.get("root"):
        key += "-" + c["root"].replace("/", "_")
    return base / key


def engine_options(embed: bool, embedder: Any = None, overrides: Sequence[str] = ()) -> EngineOptions:
    """EngineOptions with `name=value` overrides (A/B runs): of its own fields (`tier_blend`...), else of
    the ranking profile of every preset (`k`, `file_decay`, `weights`, a prior's `pagerank_coef`...)."""
    options = EngineOptions(embeddings=embed, embedder=embedder)
    for item in overrides:
        name, sep, raw = item.partition("=")
        if not sep:
            raise SystemExit(f"--opt expects NAME=VALUE, got {item!r}")
        value = json.loads(raw) if raw not in ("true", "false") else raw == "true"
        if name == "tier_blend":  # {"k": 10, "fast": 0.3, "deep": 0.7}
            value = TierBlend(**dict(value))  # type: ignore[arg-type]
        if name in OVERRIDABLE:
            options.ranking[name] = value
        elif name in {f.name for f in dataclasses.fields(options)} - {"ranking"}:
            setattr(options, name, value)
        else:
            raise SystemExit(f"--opt: no engine or ranking option named {name!r}")
    return options


def open_engine(qs: QuerySet, embed: bool, embedder: Any = None,
                progress: Callable[[str, int, int], None] | None = None, root: Path | None = None,
                index: Path | None = None, overrides: Sequence[str] = (), cold: bool = False) -> SearchEngine:
    """An engine over the set's corpus (or `root`), refreshed (and embedded unless `embed` is False);
    `cold`: in a fresh index folder whose transformer tier is left empty (a first `codeseek search`)."""
    folder = index or index_dir(qs)
    if cold:
        folder = folder.with_name(folder.name + "-cold")
        shutil.rmtree(folder, ignore_errors=True)
    ws = Workspace(root or corpus_root(qs), WorkspaceOptions(index_dir=folder))
    engine = SearchEngine(ws, engine_options(embed, embedder, overrides))
    engine.refresh(embed=embed, progress=progress)
    if embed and not cold:  # the index as it converges: the transformer tier filled in too (if any)
        engine.embed_transformer(progress)
    return engine


def resolve_targets(engine: SearchEngine, qs: QuerySet, targets: Sequence[Target]) -> list[Target]:
    """Targets named by symbol alone get the line of that definition (our sets survive code edits)."""
    out = []
    defs = engine.workspace.store.definitions()
    for target in targets:
        symbol = target.symbol
        if symbol and target.line is None and target.start is None:
            path = target.path[len(qs.prefix):] if target.path.startswith(qs.prefix) else target.path
            found = [d for d in defs if d.path == path and d.qualified_name == symbol]
            if not found:
                raise SystemExit(f"{qs.name}: no definition {symbol} in {target.path}")
            target = Target(target.path, found[0].name_line, symbol=symbol)
        out.append(target)
    return out


def _rank_of(results: Sequence[dict[str, Any]], q: EvalQuery, qs: QuerySet) -> int | None:
    return first_rank(results, q.targets + q.secondary, qs.prefix, suffix=qs.metric == "ndcg")


def evaluate_set(engine: SearchEngine, qs: QuerySet, limit: int = 10, preset: str = "default",
                 columns: Sequence[str] = COLUMNS) -> dict[str, Any]:
    """Run every query of a set; per-query ranks per column and totals."""
    rows = []
    totals = {name: Totals() for name in ("fused", *columns)}
    ndcg: dict[str, list[float]] = {name: [] for name in ("fused", *columns)}
    latencies = []
    for q in qs.queries:
        started = time.perf_counter()
        answer = engine.search(SearchRequest(q.query, limit=limit, preset=preset)).to_json()
        latencies.append((time.perf_counter() - started) * 1000)
        results = answer["results"]
        rank = _rank_of(results, q, qs)
        deep = rank
        if rank is None:
            deeper = engine.search(SearchRequest(q.query, limit=DEEP_LIMIT, preset=preset))
            deep = _rank_of(deeper.to_json()["results"], q, qs)
        row: dict[str, Any] = {"id": q.id, "query": q.query, "category": q.category,
                               "intent": answer["intent"]["name"], "strategy": answer["strategy"],
                               "fused": rank, "fused_deep": deep,
                               "top": [f"{r['path']}:{r['start_line']}" for r in results[:TOP_KEPT]]}
        totals["fused"].add(rank)
        ndcg["fused"].append(ndcg_at_10(results, q.targets + q.secondary, qs.prefix))
        row["ndcg"] = round(ndcg["fused"][-1], 4)
        for name in columns:
            located = engine.retrieve(SearchRequest(q.query, limit=limit, preset=preset), name, DEEP_LIMIT)
            raw = [{"path": x.chunk.path, "start_line": x.chunk.start_line, "end_line": x.chunk.end_line}
                   for x in located]
            r = _rank_of(raw, q, qs)
            row[name] = r
            totals[name].add(r)
            ndcg[name].append(ndcg_at_10(raw, q.targets + q.secondary, qs.prefix))
        rows.append(row)
    latencies.sort()
    return {
        "set": qs.name, "source": qs.source, "metric": qs.metric, "queries": len(qs.queries),
        "rows": rows, "totals": {k: v.as_dict() for k, v in totals.items()},
        "ndcg@10": {k: round(sum(v) / len(v), 4) if v else 0.0 for k, v in ndcg.items()},
        "published": qs.published, "index": engine.index_info(),
        "latency_ms_p50": round(latencies[len(latencies) // 2], 1) if latencies else 0.0,
    }


def _cell(rank: int | None, deep: int | None = None) -> str:
    if rank is not None:
        return str(rank)
    return f"({deep})" if deep else "-"


def print_report(report: dict[str, Any], columns: Sequence[str] = COLUMNS) -> None:
    from rich.console import Console
    from rich.table import Table

    console = Console(width=160)
    title = (f"{report['set']}: {report['queries']} queries, index {report['index']['state']} "
             f"({report['index']['chunks']} chunks, {report['index']['embedded']} embedded), "
             f"p50 {report['latency_ms_p50']} ms")
    table = Table(title=title, title_justify="left", show_lines=False)
    table.add_column("id")
    table.add_column("query", max_width=52, overflow="ellipsis", no_wrap=True)
    table.add_column("intent/route", no_wrap=True)
    for name in ("fused", *columns):
        table.add_column(name, justify="right")
    for row in report["rows"]:
        route = f"{row['intent'][:10]}/{row['strategy'][0]}"
        table.add_row(row["id"], row["query"], route, _cell(row["fused"], row["fused_deep"]),
                      *[_cell(row[c]) for c in columns])
    console.print(table)
    totals = report["totals"]
    summary = Table(show_header=True, title_justify="left")
    summary.add_column("")
    for name in ("fused", *columns):
        summary.add_column(name, justify="right")
    for key in ("hit@1", "hit@5", "hit@10"):
        summary.add_row(key, *[f"{totals[c][key]}/{totals[c]['n']}" for c in ("fused", *columns)])
    summary.add_row("MRR", *[f"{totals[c]['mrr']:.3f}" for c in ("fused", *columns)])
    summary.add_row("NDCG@10", *[f"{report['ndcg@10'][c]:.4f}" for c in ("fused", *columns)])
    console.print(summary)
    if report["published"]:
        published = ", ".join(f"{k} {v:.4f}" for k, v in report["published"].items())
        console.print(f"NDCG@10 fused {report['ndcg@10']['fused']:.4f}; published on this repository: "
                      f"{published}")
    console.print("(n) = rank beyond the top 10; - = not in the top 100\n")


def summary_line(report: dict[str, Any]) -> str:
    """One line: fused hit@1/5/10, MRR, NDCG@10, then the text and semantic columns' hit@5/MRR."""
    t = report["totals"]
    f = t["fused"]
    cols = " ".join(f"{c}:{t[c]['hit@5']}/{t[c]['mrr']:.3f}" for c in ("text", "semantic") if c in t)
    return (f"{report['set']:<16} n={f['n']:<3} hit@1 {f['hit@1']:>2} hit@5 {f['hit@5']:>2} "
            f"hit@10 {f['hit@10']:>2} MRR {f['mrr']:.3f} NDCG {report['ndcg@10']['fused']:.4f}   [{cols}]")


def _progress(name: str) -> Callable[[str, int, int], None]:
    last: dict[str, float] = {}

    def report(phase: str, done: int, total: int) -> None:
        now = time.monotonic()
        if done == total or now - last.get(phase, 0.0) > 2.0:
            last[phase] = now
            print(f"  {name}: {phase} {done}/{total}", file=sys.stderr, flush=True)

    return report


def run(sets: Sequence[Path | SembleDevSpec], embed: bool = True, limit: int = 10, preset: str = "default",
        json_out: str | None = None, quiet: bool = False, root: Path | None = None,
        index_dir: Path | None = None, overrides: Sequence[str] = (),
        model: str | None = None, cold: bool = False) -> list[dict[str, Any]]:
    """Evaluate each set (one model load shared by all) and print the reports."""
    embedder = None
    if embed:
        from retrievers.semantic.embedder import foreground_options
        from retrievers.semantic.models import make_embedder

        embedder = make_embedder(model, foreground_options())
    columns = COLUMNS if embed else tuple(c for c in COLUMNS if c != "semantic")
    reports = []
    for path in sets:
        if isinstance(path, SembleDevSpec):
            from bench.semble_dev import run_semble_dev

            reports += run_semble_dev(path, embed, embedder, limit, preset, columns, quiet, root, index_dir,
                                      overrides, cold)
            continue
        qs = load_set(path)
        engine = open_engine(qs, embed, embedder, None if quiet else _progress(qs.name), root, index_dir,
                             overrides, cold)
        try:
            for q in qs.queries:
                q.targets = resolve_targets(engine, qs, q.targets)
            report = evaluate_set(engine, qs, limit, preset, columns)
        finally:
            engine.close()
            engine.workspace.close()
        reports.append(report)
        if not quiet:
            print_report(report, columns)
    if json_out:
        Path(json_out).write_text(json.dumps(reports, indent=2))
    return reports


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--set", action="append", default=[], metavar="NAME|PATH",
                        help="query set (repeatable); default: all")
    parser.add_argument("--no-embed", action="store_true", help="no semantic retriever")
    parser.add_argument("--model", default=None,
                        help="embedding model (default: the static tier; 'minilm' for the transformer)")
    parser.add_argument("--static-only", action="store_true",
                        help="leave the transformer tier empty (what a cold CLI search ranks with; the "
                             "default fills it in, as the language server does: slow on large sets)")
    parser.add_argument("--cold", action="store_true",
                        help="a fresh index each set, its transformer tier left empty: what a first "
                             "`codeseek search` ranks with (the default fills the tier in)")
    parser.add_argument("--limit", type=int, default=10)
    parser.add_argument("--preset", default="default", choices=PRESETS)
    parser.add_argument("--json", metavar="FILE", help="write the reports as JSON")
    parser.add_argument("--opt", action="append", default=[], metavar="NAME=VALUE",
                        help="override an EngineOptions field or a ranking profile setting (JSON), "
                             "e.g. file_decay=0")
    parser.add_argument("--summary", action="store_true", help="totals only, one line per set")
    parser.add_argument("--repos", metavar="A,B|quick",
                        help="semble-dev: these repositories (implies the set)")
    parser.add_argument("--semble-dev-src", metavar="DIR",
                        help="semble-dev: the folder holding the checkouts")
    parser.add_argument("--root", metavar="DIR", help="corpus root (one set; default: from the query set)")
    parser.add_argument("--index-dir", metavar="DIR", help="the corpus index folder (one set)")
    args = parser.parse_args(argv)
    sets = [find_set(s) for s in args.set] or ([] if args.repos else default_sets())
    if args.repos:
        sets = [s for s in sets if not isinstance(s, SembleDevSpec)] + [SembleDevSpec(args.repos)]
    if args.semble_dev_src:
        os.environ["CODESEEK_SEMBLE_DEV"] = args.semble_dev_src
    if (args.root or args.index_dir) and len(sets) != 1:
        parser.error("--root and --index-dir need one query set (--set)")
    root = Path(args.root).expanduser().resolve() if args.root else None
    if root is not None and not root.is_dir():
        parser.error(f"root is not a directory: {root}")
    reports = run(sets, not args.no_embed, args.limit, args.preset, args.json, quiet=args.summary,
                  root=root, index_dir=Path(args.index_dir).expanduser() if args.index_dir else None,
                  overrides=[*args.opt, *(["transformer=null"] if args.static_only else [])],
                  model=args.model, cold=args.cold)
    if args.summary:
        for report in reports:
            print(summary_line(report))
    return 0


if __name__ == "__main__":
    sys.exit(main())
