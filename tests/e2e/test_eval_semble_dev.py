"""`bench/eval_public.py` over a semble-dev style set: the real engine (no embeddings) on a tiny
checkout, scored per repository, the tables printed, a missing repository named, the index kept."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from bench import eval_public, semble_dev  # noqa: E402

CONFIG = '''"""Configuration loading."""


def parse_config(text):
    """Parse key=value lines into a dict."""
    out = {}
    for line in text.splitlines():
        key, _, value = line.partition("=")
        out[key.strip()] = value.strip()
    return out
'''
OTHER = '''def render_banner(name):
    return "*** " + name + " ***"
'''


def test_semble_dev_run_on_a_tiny_checkout(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    shared = tmp_path / "shared"
    dev = shared / "semble-dev"
    (dev / "annotations").mkdir(parents=True)
    (dev / "repos.json").write_text(json.dumps([
        {"name": "tiny", "language": "python", "url": "https://github.com/o/tiny.git", "revision": "1" * 40,
         "benchmark_root": "lib"},
        {"name": "gone", "language": "go", "url": "https://github.com/o/gone.git", "revision": "2" * 40,
         "benchmark_root": None}]))
    (dev / "published-semble.json").write_text(json.dumps({"repos": {
        "tiny": {"ndcg10": 0.75, "chunks": 2}, "gone": {"ndcg10": 0.5, "chunks": 9}}}))
    (dev / "annotations" / "tiny.json").write_text(json.dumps([
        {"query": "parse_config", "relevant": ["lib/config.py"], "secondary": [], "category": "symbol"},
        {"query": "where is the banner drawn", "relevant": ["lib/missing.py"], "secondary": [],
         "category": "semantic"}]))
    monkeypatch.setattr(semble_dev, "SHARED_EVAL", shared)
    src = tmp_path / "src"
    (src / "tiny" / "lib").mkdir(parents=True)
    (src / "tiny" / "lib" / "config.py").write_text(CONFIG)
    (src / "tiny" / "lib" / "banner.py").write_text(OTHER)
    (src / "tiny" / "README.md").write_text("outside the indexed folder\n")
    index_base = tmp_path / "indexes"

    spec = eval_public.find_set("semble-dev:tiny,gone")
    assert spec == semble_dev.SembleDevSpec("tiny,gone")
    reports = eval_public.run([spec], embed=False, root=src, index_dir=index_base)

    assert [r["set"] for r in reports] == ["tiny"]
    report = reports[0]
    assert [row["ndcg"] for row in report["rows"]] == [1.0, 0.0]
    assert report["rows"][0]["fused"] == 1
    assert report["ndcg@10"]["fused"] == 0.5 and report["language"] == "python"
    assert report["checkout"] == ", 1 target files missing"
    assert report["index"]["files"] == 2  # lib/ only: the README beside it is not indexed
    assert (index_base / "tiny").is_dir()
    summary = report["semble_dev_summary"]
    assert summary["published_mean"] == 0.75 and summary["published_mean_all"] == 0.625
    assert summary["per_category"]["symbol"]["ndcg"] == 1.0
    out, err = capsys.readouterr()
    assert "semble-dev: NDCG@10 per repository (1 repositories, 2 queries)" in out
    assert "mean NDCG@10 over 1 repositories: fused 0.5000" in out
    assert "gone" in err and f"no checkout at {src / 'gone'}" in err
