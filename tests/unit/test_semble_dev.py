"""bench/semble_dev.py and the semble-dev loader of bench/evalsets.py: naming repositories, subsets,
missing checkouts, target parsing and NDCG over a repository's indexed subfolder."""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from bench import semble_dev  # noqa: E402
from bench.evalsets import Target, load_semble_repo, ndcg_at_10  # noqa: E402

REPOS = [  # name, language, root, published chunks
    ("alpha", "python", "alpha", 100), ("beta", "python", "", 300), ("gamma", "python", "src", 200),
    ("delta", "go", "pkg", 50), ("eps", "go", "", 70),
]


def make_set(base: Path) -> Path:
    """A semble-dev folder with five repositories (three python, two go)."""
    dev = base / "semble-dev"
    (dev / "annotations").mkdir(parents=True)
    (dev / "repos.json").write_text(json.dumps([
        {"name": n, "language": lang, "url": f"https://github.com/o/{n}.git", "revision": "0" * 40,
         "benchmark_root": root or None} for n, lang, root, _ in REPOS]))
    (dev / "published-semble.json").write_text(json.dumps({"repos": {
        n: {"ndcg10": 0.5 + i / 10, "chunks": chunks} for i, (n, _, _, chunks) in enumerate(REPOS)}}))
    for n, *_ in REPOS:
        (dev / "annotations" / f"{n}.json").write_text(json.dumps([
            {"query": "q1", "relevant": [f"{n}/a.py"], "secondary": [], "category": "symbol"},
            {"query": "q2", "relevant": [{"path": "src/b.py", "start_line": 10, "end_line": 20}],
             "secondary": ["c.py"], "category": "semantic", "seed": {"path": "x", "line": 1}},
        ]))
    return dev


def test_select_all_names_and_quick(tmp_path: Path) -> None:
    repos = semble_dev.load_repos(make_set(tmp_path))
    assert [r.name for r in semble_dev.select(repos, None)] == [n for n, *_ in REPOS]
    assert [r.name for r in semble_dev.select(repos, "eps,alpha")] == ["eps", "alpha"]
    # per language the median-sized repository (the smaller of two): python gamma (200), go delta (50)
    assert [r.name for r in semble_dev.select(repos, "quick")] == ["gamma", "delta"]
    with pytest.raises(SystemExit, match="no repository named zeta"):
        semble_dev.select(repos, "alpha,zeta")
    assert repos[0].slug == "o/alpha" and repos[1].root == "" and repos[0].published == 0.5


def test_parse_spec() -> None:
    assert semble_dev.parse_spec("semble-dev") == semble_dev.SembleDevSpec("all")
    assert semble_dev.parse_spec("semble-dev:quick") == semble_dev.SembleDevSpec("quick")
    assert semble_dev.parse_spec("semble-dev:tokio,vitest").repos == "tokio,vitest"
    assert semble_dev.parse_spec("seed") is None
    assert str(semble_dev.SembleDevSpec("quick")) == "semble-dev:quick"


def test_missing_repositories_are_named_with_how_to_get_them(tmp_path: Path) -> None:
    repos = semble_dev.load_repos(make_set(tmp_path))
    src = tmp_path / "src"
    (src / "alpha" / "alpha").mkdir(parents=True)  # present
    (src / "gamma").mkdir(parents=True)  # checkout without its indexed folder
    present, missing = semble_dev.split_present(semble_dev.select(repos, "alpha,gamma,delta"), src)
    assert [r.name for r in present] == ["alpha"]
    assert [(r.name, why) for r, why in missing] == [
        ("gamma", "checkout has no src/"), ("delta", f"no checkout at {src / 'delta'}")]
    message = semble_dev.missing_message(missing, src)
    assert "fetch github:o/gamma github:o/delta" in message
    assert f'DEST={src} NAMES="gamma delta"' in message


def test_source_dir_option_env_and_xdg_default(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("CODESEEK_SEMBLE_DEV", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert semble_dev.source_dir() == tmp_path / "xdg" / "codeseek-eval" / "semble-dev-src"
    monkeypatch.setenv("CODESEEK_SEMBLE_DEV", str(tmp_path / "env"))
    assert semble_dev.source_dir() == tmp_path / "env"
    assert semble_dev.source_dir(tmp_path / "opt") == tmp_path / "opt"


def test_repository_queries_match_results_of_the_indexed_subfolder(tmp_path: Path) -> None:
    dev = make_set(tmp_path)
    qs = load_semble_repo(dev / "annotations" / "gamma.json", "gamma", "python", "src", "ab" * 20, 0.7)
    assert qs.prefix == "src/" and qs.metric == "ndcg" and qs.language == "python"
    assert qs.corpus == {"kind": "semble-dev", "name": "gamma", "version": "abababababab", "root": "src"}
    q2 = qs.queries[1]
    assert q2.targets == [Target("src/b.py", start=10, end=20)] and q2.secondary == [Target("c.py")]
    # result paths are relative to the indexed folder; the prefix makes them checkout-relative
    hit = [{"path": "b.py", "start_line": 15, "end_line": 30},
           {"path": "c.py", "start_line": 1, "end_line": 2}]
    assert ndcg_at_10(hit, q2.targets + q2.secondary, qs.prefix) == pytest.approx(1.0)
    outside = [{"path": "b.py", "start_line": 21, "end_line": 30}]
    assert ndcg_at_10(outside, q2.targets, qs.prefix) == 0.0
    assert ndcg_at_10([{"path": "c.py", "start_line": 1, "end_line": 2}], q2.targets + q2.secondary,
                      qs.prefix) == pytest.approx(1 / (1 + 1 / math.log2(3)))


def test_summarize_means_over_repositories_and_categories(tmp_path: Path) -> None:
    repos = semble_dev.load_repos(make_set(tmp_path))

    def report(name: str, lang: str, pub: float, ndcgs: list[tuple[str, float]]) -> dict:
        rows = [{"category": c, "ndcg": v} for c, v in ndcgs]
        mean = sum(v for _, v in ndcgs) / len(ndcgs)
        return {"set": name, "language": lang, "queries": len(rows), "rows": rows,
                "ndcg@10": {"fused": mean, "text": 0.0}, "published": {"semble": pub}}

    reports = [report("alpha", "python", 0.5, [("symbol", 1.0), ("semantic", 0.0), ("semantic", 1.0)]),
               report("delta", "go", 0.8, [("semantic", 0.5)])]
    s = semble_dev.summarize(reports, repos)
    assert s["repos"] == 2 and s["queries"] == 4
    assert s["mean"]["fused"] == pytest.approx((2 / 3 + 0.5) / 2)
    assert s["published_mean"] == pytest.approx(0.65)
    assert s["published_mean_all"] == pytest.approx(sum(0.5 + i / 10 for i in range(5)) / 5)
    assert s["per_language"]["go"] == {"repos": 1, "queries": 1, "ndcg": 0.5, "published": 0.8}
    assert s["per_category"]["semantic"] == {"repos": 2, "queries": 3, "ndcg": pytest.approx(0.5)}
    assert s["per_category"]["symbol"]["ndcg"] == 1.0 and s["per_category"]["architecture"]["repos"] == 0
