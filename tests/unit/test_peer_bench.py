"""bench/peer_bench.py's measuring parts: a child's wall time and peak RSS, percentiles, the report's
medians, ratios and target checks, and where the bench keeps semble's venv."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from bench import peer_bench, peer_setup  # noqa: E402


def test_measure_reports_the_childs_own_peak_rss() -> None:
    small = peer_bench.measure([sys.executable, "-c", "print('ok')"], dict(os.environ))
    grow = "b = bytearray(120 * 2**20); b[::4096] = b'x' * len(b[::4096])"
    big = peer_bench.measure([sys.executable, "-c", grow], dict(os.environ))
    assert small[2] == 0 and small[3].strip() == "ok"
    assert big[2] == 0
    assert big[1] >= small[1] + 100  # MiB: the 120 MiB buffer, not the parent's or an earlier child's
    assert small[1] < 100 and small[0] > 0


def test_percentile() -> None:
    values = [5.0, 1.0, 3.0, 2.0, 4.0]
    assert peer_bench.percentile(values, 0.5) == 3.0
    assert peer_bench.percentile(values, 0.95) == 5.0
    assert peer_bench.percentile([7.0], 0.95) == 7.0


def test_report_medians_ratios_and_targets(capsys: pytest.CaptureFixture[str]) -> None:
    cs, sb = peer_bench.Samples(), peer_bench.Samples()
    for v in (3.0, 1.0, 2.0):
        cs.add("cold_s", v)
        sb.add("cold_s", v / 2)
    cs.add("p50_ms", 4.0)
    sb.add("p50_ms", 5.0)
    cs.notes.update(chunks=10, embedded=10, model="m")
    sb.notes.update(chunks=8, model="m")
    out = peer_bench.report(peer_bench.CORPORA["requests"], {"codeseek": cs, "semble": sb}, "same model")
    assert out["cold_s"]["codeseek"] == 2.0 and out["cold_s"]["ratio"] == pytest.approx(2.0)
    assert out["p50_ms"]["ratio"] == pytest.approx(0.8)
    assert out["targets"] == ["cold_s 2.00 (target <= 2): met", "cold_s ratio 2.00x (target <= 2): met",
                              "p50_ms ratio 0.80x (target <= 1): met"]
    assert "rss_mib" not in out  # not measured: no row, no check
    printed = capsys.readouterr().out
    assert "requests 2.32.3 (whole sdist)" in printed and "2.00x" in printed
    assert out["per_query_p50_ms"] == []  # no query timed on its own: no per-query rows


def test_report_lists_each_querys_p50_for_both_tools(capsys: pytest.CaptureFixture[str]) -> None:
    cs, sb = peer_bench.Samples(), peer_bench.Samples()
    queries = peer_bench.QUERIES["flask"]
    for i in range(len(queries)):
        for run in (1.0, 3.0, 2.0):
            cs.add(f"{peer_bench.QUERY_P50}{i}", run + i)
        sb.add(f"{peer_bench.QUERY_P50}{i}", 1.0)
    out = peer_bench.report(peer_bench.CORPORA["flask"], {"codeseek": cs, "semble": sb}, "same model")
    assert [row["query"] for row in out["per_query_p50_ms"]] == queries
    assert [row["codeseek"] for row in out["per_query_p50_ms"]] == [2.0 + i for i in range(len(queries))]
    assert all(row["semble"] == 1.0 for row in out["per_query_p50_ms"])
    printed = capsys.readouterr().out
    assert queries[0] in printed and f"{2.0 + len(queries) - 1:.2f}x" in printed


def test_semble_venv_lives_under_the_user_cache_dir(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert peer_setup.bench_home() == tmp_path / "codeseek-bench"
    monkeypatch.delenv("XDG_CACHE_HOME")
    assert peer_setup.bench_home() == Path.home() / ".cache" / "codeseek-bench"
