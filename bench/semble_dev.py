"""The semble-dev development set: 43 repositories of the public semble benchmark, 849 queries.

The annotations, the repository list and semble's published scores live in
`$CODESEEK_SHARED_EVAL/semble-dev/` (default /work/shared/eval/semble-dev); the sources are git
checkouts laid out by its `checkout.sh` under a source folder: `--semble-dev-src DIR`, else
`$CODESEEK_SEMBLE_DEV`, else `$XDG_CACHE_HOME/codeseek-eval/semble-dev-src` (~/.cache when unset).
This module names the repositories (all, a subset by name, or the named subset `quick`), says which
are missing and how to get them, and prints the per-repository, per-language and per-category tables
with semble's published NDCG@10 next to ours. `bench/eval_public.py` runs the queries
(`--set semble-dev`, `--set semble-dev:quick`, `--set semble-dev --repos tokio,vitest`).
"""

from __future__ import annotations

import argparse
import csv
import json
import os
from collections import defaultdict
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench.evalsets import QuerySet, load_semble_repo

SHARED_EVAL = Path(os.environ.get("CODESEEK_SHARED_EVAL", "/work/shared/eval"))
SET_NAME = "semble-dev"
CATEGORIES = ("architecture", "semantic", "symbol")
# `quick`: per language, the repository of median size (semble's published chunk count; the smaller
# of two): 17 repositories, one per language, about a third of the chunks.
SUBSETS = ("all", "quick")


@dataclass(frozen=True)
class SembleDevSpec:
    """Which repositories of the set to run: "all", "quick" or comma-separated names."""

    repos: str = "all"

    def __str__(self) -> str:
        return SET_NAME if self.repos == "all" else f"{SET_NAME}:{self.repos}"


@dataclass(frozen=True)
class DevRepo:
    """One repository of the set: where its sources come from and what semble published for it."""

    name: str
    language: str
    url: str
    revision: str
    root: str  # the indexed folder inside the checkout ("" = the whole checkout)
    published: float | None
    chunks: int

    @property
    def slug(self) -> str:
        """owner/name on GitHub (what `fetch github:<slug>` takes)."""
        return self.url.removeprefix("https://github.com/").removesuffix(".git")


def dev_dir() -> Path:
    return SHARED_EVAL / SET_NAME


def parse_spec(name: str) -> SembleDevSpec | None:
    """`semble-dev` or `semble-dev:<subset|a,b,c>` as a spec; anything else None."""
    if name == SET_NAME:
        return SembleDevSpec()
    if name.startswith(SET_NAME + ":"):
        return SembleDevSpec(name.split(":", 1)[1] or "all")
    return None


def cache_home() -> Path:
    """$XDG_CACHE_HOME, else ~/.cache."""
    xdg = os.environ.get("XDG_CACHE_HOME")
    return Path(xdg) if xdg else Path.home() / ".cache"


def source_dir(explicit: Path | str | None = None) -> Path:
    """The folder holding the checkouts (`<dir>/<name>/`)."""
    if explicit:
        return Path(explicit).expanduser()
    env = os.environ.get("CODESEEK_SEMBLE_DEV")
    return Path(env).expanduser() if env else cache_home() / "codeseek-eval" / "semble-dev-src"


def load_repos(directory: Path | None = None) -> list[DevRepo]:
    """Every repository of the set, in repos.json order."""
    base = directory or dev_dir()
    if not (base / "repos.json").is_file():
        raise SystemExit(f"semble-dev: no repos.json in {base} (set CODESEEK_SHARED_EVAL)")
    published = json.loads((base / "published-semble.json").read_text())["repos"]
    out = []
    for raw in json.loads((base / "repos.json").read_text()):
        pub = published.get(raw["name"], {})
        out.append(DevRepo(raw["name"], raw["language"], raw["url"], raw["revision"],
                           raw.get("benchmark_root") or "", pub.get("ndcg10"), int(pub.get("chunks", 0))))
    return out


def quick_subset(repos: Sequence[DevRepo]) -> list[DevRepo]:
    """Per language, the repository of median published chunk count (the lower median)."""
    by_lang: dict[str, list[DevRepo]] = defaultdict(list)
    for repo in repos:
        by_lang[repo.language].append(repo)
    chosen = set()
    for group in by_lang.values():
        ordered = sorted(group, key=lambda r: (r.chunks, r.name))
        chosen.add(ordered[(len(ordered) - 1) // 2].name)
    return [r for r in repos if r.name in chosen]


def select(repos: Sequence[DevRepo], spec: str | None) -> list[DevRepo]:
    """The repositories a spec names: "all" (or None), "quick", or names separated by commas."""
    if not spec or spec == "all":
        return list(repos)
    if spec == "quick":
        return quick_subset(repos)
    by_name = {r.name: r for r in repos}
    names = [n.strip() for n in spec.split(",") if n.strip()]
    unknown = [n for n in names if n not in by_name]
    if unknown:
        raise SystemExit(f"semble-dev: no repository named {', '.join(unknown)} "
                         f"(subsets: {', '.join(SUBSETS)}; repositories: {', '.join(sorted(by_name))})")
    return [by_name[n] for n in names]


def add_bench_arguments(parser: argparse.ArgumentParser) -> None:
    """The options the per-repository benches share: `--repos`, `--runs`, `--semble-dev-src`."""
    parser.add_argument("--repos", default="curl,tokio,commons-lang")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--semble-dev-src", default=None)


def bench_repos(spec: str | None, src: Path | str | None,
                base: Path) -> Iterator[tuple[DevRepo, Path, list[str], Path]]:
    """(repository, its benchmark root, its queries, its evaluation index folder under `base`) for the
    repositories `spec` names, as the per-repository benches walk them."""
    checkouts = source_dir(src)
    for repo in select(load_repos(), spec):
        root = checkouts / repo.name / repo.root if repo.root else checkouts / repo.name
        annotations = dev_dir() / "annotations" / f"{repo.name}.json"
        queries = [q["query"] for q in json.loads(annotations.read_text())]
        yield repo, root, queries, base / "semble-dev" / repo.name


def checkout_status(src: Path) -> dict[str, dict[str, str]]:
    """checkout.sh's status.tsv (revision used, missing targets) by repository name, if present."""
    path = src / "status.tsv"
    if not path.is_file():
        return {}
    with path.open(newline="") as fh:
        return {row["name"]: row for row in csv.DictReader(fh, delimiter="\t")}


def split_present(repos: Sequence[DevRepo], src: Path) -> tuple[list[DevRepo], list[tuple[DevRepo, str]]]:
    """(repositories whose indexed folder exists, [(missing repository, why)])."""
    present, missing = [], []
    for repo in repos:
        checkout = src / repo.name
        if not checkout.is_dir():
            missing.append((repo, f"no checkout at {checkout}"))
        elif not (checkout / repo.root).is_dir():
            missing.append((repo, f"checkout has no {repo.root}/"))
        else:
            present.append(repo)
    return present, missing


def missing_targets(qs: QuerySet, checkout: Path, root: str) -> int:
    """Target files found neither in the checkout nor under its indexed folder (annotations of some
    repositories are relative to the indexed folder; scoring matches path suffixes, so both count)."""
    paths = {t.path for q in qs.queries for t in q.targets + q.secondary}
    return sum(not (checkout / p).exists() and not (checkout / root / p).exists() for p in paths)


def missing_message(missing: Sequence[tuple[DevRepo, str]], src: Path) -> str:
    """What is missing and the two steps that bring it."""
    lines = [f"semble-dev: {len(missing)} repositories missing under {src}:"]
    lines += [f"  {repo.name:<20} {why}" for repo, why in missing]
    names = " ".join(r.name for r, _ in missing)
    lines.append("  get them: fetch " + " ".join(f"github:{r.slug}" for r, _ in missing))
    lines.append(f"  then: MIRRORS=<mirrors> DEST={src} NAMES=\"{names}\" {dev_dir()}/checkout.sh")
    return "\n".join(lines)


def query_set(repo: DevRepo, directory: Path | None = None) -> QuerySet:
    base = directory or dev_dir()
    return load_semble_repo(base / "annotations" / f"{repo.name}.json", repo.name, repo.language,
                            repo.root, repo.revision, repo.published)


# ---------------------------------------------------------------------------------------------------
# Aggregation and tables over the per-repository reports of bench/eval_public.evaluate_set.


def _mean(values: Sequence[float]) -> float:
    return sum(values) / len(values) if values else 0.0


def category_means(report: dict[str, Any]) -> dict[str, float]:
    """Mean fused NDCG@10 per query category within one repository."""
    groups: dict[str, list[float]] = defaultdict(list)
    for row in report["rows"]:
        groups[row["category"] or "-"].append(row["ndcg"])
    return {k: _mean(v) for k, v in groups.items()}


def summarize(reports: Sequence[dict[str, Any]], all_repos: Sequence[DevRepo]) -> dict[str, Any]:
    """Means over repositories (overall, per language, per category), ours and semble's published."""
    published_all = [r.published for r in all_repos if r.published is not None]
    columns = [c for c in reports[0]["ndcg@10"]] if reports else []
    mean = {c: _mean([r["ndcg@10"][c] for r in reports]) for c in columns}
    pub = _mean([r["published"].get("semble", 0.0) for r in reports])
    langs: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for r in reports:
        langs[r["language"]].append(r)
    per_lang = {lang: {"repos": len(rs), "queries": sum(r["queries"] for r in rs),
                       "ndcg": _mean([r["ndcg@10"]["fused"] for r in rs]),
                       "published": _mean([r["published"].get("semble", 0.0) for r in rs])}
                for lang, rs in sorted(langs.items())}
    per_cat = {}
    for cat in CATEGORIES:
        values = [category_means(r)[cat] for r in reports if cat in category_means(r)]
        n = sum(1 for r in reports for row in r["rows"] if row["category"] == cat)
        per_cat[cat] = {"repos": len(values), "queries": n, "ndcg": _mean(values)}
    return {"repos": len(reports), "queries": sum(r["queries"] for r in reports), "mean": mean,
            "published_mean": pub, "published_mean_all": _mean(published_all),
            "per_language": per_lang, "per_category": per_cat}


def print_tables(reports: Sequence[dict[str, Any]], summary: dict[str, Any],
                 missing: Sequence[tuple[DevRepo, str]], src: Path, to_stderr: bool = False) -> None:
    """The three tables and the mean (on stderr when stdout carries JSON)."""
    import sys

    from rich.console import Console
    from rich.table import Table

    console = Console(width=170, file=sys.stderr if to_stderr else sys.stdout)
    if not reports:
        console.print("semble-dev: no repository evaluated")
    columns = [c for c in summary["mean"] if c != "fused"]
    table = Table(title=f"semble-dev: NDCG@10 per repository ({summary['repos']} repositories, "
                        f"{summary['queries']} queries)", title_justify="left")
    for name in ("repo", "lang", "queries", "chunks", "fused", *columns, "semble pub.", "delta",
                 "index s", "p50 ms", "checkout"):
        table.add_column(name, justify="left" if name in ("repo", "lang", "checkout") else "right",
                         no_wrap=True, overflow="ellipsis", max_width=24 if name == "checkout" else None)
    for r in reports:
        pub = r["published"].get("semble")
        delta = f"{r['ndcg@10']['fused'] - pub:+.3f}" if pub is not None else "-"
        table.add_row(r["set"], r["language"], str(r["queries"]), str(r["index"]["chunks"]),
                      f"{r['ndcg@10']['fused']:.4f}", *[f"{r['ndcg@10'][c]:.3f}" for c in columns],
                      f"{pub:.4f}" if pub is not None else "-", delta, f"{r['refresh_s']:.1f}",
                      f"{r['latency_ms_p50']}", r.get("checkout", ""))
    console.print(table)
    lang = Table(title="per language (mean over its repositories)", title_justify="left")
    for name in ("language", "repos", "queries", "fused", "semble pub.", "delta"):
        lang.add_column(name, justify="left" if name == "language" else "right")
    for name, row in summary["per_language"].items():
        lang.add_row(name, str(row["repos"]), str(row["queries"]), f"{row['ndcg']:.4f}",
                     f"{row['published']:.4f}", f"{row['ndcg'] - row['published']:+.3f}")
    console.print(lang)
    cat = Table(title="per category (mean per repository, then over them)", title_justify="left")
    for name in ("category", "repos", "queries", "fused"):
        cat.add_column(name, justify="left" if name == "category" else "right")
    for name, row in summary["per_category"].items():
        cat.add_row(name, str(row["repos"]), str(row["queries"]), f"{row['ndcg']:.4f}")
    console.print(cat)
    cols = ", ".join(f"{c} {v:.4f}" for c, v in summary["mean"].items() if c != "fused")
    console.print(f"mean NDCG@10 over {summary['repos']} repositories: fused "
                  f"{summary['mean'].get('fused', 0.0):.4f} (retrievers alone: {cols}); semble published "
                  f"on the same repositories {summary['published_mean']:.4f} "
                  f"(all 43: {summary['published_mean_all']:.4f})")
    empty = [r["set"] for r in reports if not r["index"]["chunks"]]
    if empty:
        console.print(f"no chunks indexed (no file there is one codeseek indexes): {', '.join(empty)}")
    if missing:
        console.print(missing_message(missing, src))


def run_semble_dev(spec: SembleDevSpec, embed: bool, embedder: Any, limit: int, preset: str,
                   columns: Sequence[str], quiet: bool, src: Path | None = None,
                   index_base: Path | None = None, overrides: Sequence[str] = (),
                   cold: bool = False) -> list[dict[str, Any]]:
    """Evaluate the chosen repositories one after another (each its own index, kept for the next
    run; `cold`: a fresh one, its transformer tier left empty), then print the tables. Returns the
    per-repository reports (language and checkout added)."""
    import sys
    import time

    from bench import eval_public

    source = source_dir(src)
    all_repos = load_repos()
    present, missing = split_present(select(all_repos, spec.repos), source)
    if missing:
        print(missing_message(missing, source), file=sys.stderr, flush=True)
    status = checkout_status(source)
    reports = []
    for i, repo in enumerate(present, 1):
        qs = query_set(repo)
        if not quiet:
            print(f"[{i}/{len(present)}] {repo.name} ({repo.language})", file=sys.stderr, flush=True)
        index = index_base / repo.name if index_base else eval_public.index_dir(qs)
        started = time.perf_counter()
        progress = None if quiet else eval_public._progress(repo.name)
        engine = eval_public.open_engine(qs, embed, embedder, progress, source / repo.name / repo.root, index,
                                         overrides, cold)
        refresh_s = time.perf_counter() - started
        try:
            report = eval_public.evaluate_set(engine, qs, limit, preset, columns)
        finally:
            engine.close()
            engine.workspace.close()
        checkout = status.get(repo.name, {}).get("status", "")
        lost = missing_targets(qs, source / repo.name, repo.root)
        if lost:
            checkout += f", {lost} target files missing"
        report.update(language=repo.language, refresh_s=round(refresh_s, 2), checkout=checkout)
        reports.append(report)
    summary = summarize(reports, all_repos)
    print_tables(reports, summary, missing, source, to_stderr=quiet)
    if reports:
        reports[-1]["semble_dev_summary"] = summary
    return reports
