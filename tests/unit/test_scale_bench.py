"""bench/scale_bench.py's pure parts: the process-tree accounting (a child whose grandchild it never
waits for), the per-100k-lines arithmetic, line counting, the report's ratios. No corpora, no codeseek."""

from __future__ import annotations

import io
import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from bench import scale_bench  # noqa: E402

pytestmark = pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs Linux /proc")

# The child burns ~0.3 s of CPU and exits; the grandchild it starts and never waits for holds 80 MiB
# and burns ~0.8 s of CPU, most of it after the child has gone (orphaned).
GRANDCHILD = textwrap.dedent("""
    import time
    b = bytearray(80 * 2**20); b[::4096] = b"x" * len(b[::4096])
    t = time.process_time()
    while time.process_time() - t < 0.8:
        pass
""")
CHILD = textwrap.dedent(f"""
    import subprocess, sys, time
    subprocess.Popen([sys.executable, "-c", {GRANDCHILD!r}])
    t = time.process_time()
    while time.process_time() - t < 0.3:
        pass
    print("child done", flush=True)
""")


def check_tree_stats(stats: scale_bench.RunStats) -> None:
    assert stats.returncode == 0
    assert stats.stdout.strip() == "child done"
    assert stats.processes == 2
    assert stats.left_alive == 0
    assert stats.cpu_s >= 1.0  # both processes' CPU
    assert stats.wait4_cpu_s < 0.8  # what `time` sees: the child alone
    assert stats.cpu_s - stats.wait4_cpu_s >= 0.6
    assert stats.peak_rss_mib >= 80 + stats.main_hwm_mib * 0.5  # the grandchild's 80 MiB counts
    assert stats.main_hwm_mib < 80
    assert stats.peak_pss_mib >= 80  # sampled less often, but the grandchild lives ~1 s
    assert stats.linger_s > 0.2  # the grandchild outlived the child
    assert stats.answer_s is not None and stats.answer_s <= stats.wall_s


def test_tree_accounting_counts_an_orphaned_grandchild() -> None:
    check_tree_stats(scale_bench.run_measured([sys.executable, "-c", CHILD]))


def test_tree_accounting_as_a_subreaper() -> None:
    """In a process of its own: becoming a subreaper is not undone, and pytest's process should not be."""
    code = textwrap.dedent(f"""
        import json, sys
        from dataclasses import asdict
        sys.path.insert(0, {str(REPO)!r})
        from bench import scale_bench
        assert scale_bench.set_child_subreaper() and scale_bench.is_child_subreaper()
        stats = scale_bench.run_measured([sys.executable, "-c", {CHILD!r}])
        import os
        try:
            os.waitpid(-1, os.WNOHANG)
            leftover = True
        except ChildProcessError:
            leftover = False  # the orphan was reaped by the bench
        print(json.dumps(dict(asdict(stats), leftover=leftover)))
    """)
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True).stdout
    got = json.loads(out.strip().splitlines()[-1])
    assert got.pop("leftover") is False
    check_tree_stats(scale_bench.RunStats(**got))


def test_exit_status_and_a_lone_process() -> None:
    stats = scale_bench.run_measured([sys.executable, "-c", "import sys; sys.exit(3)"])
    assert stats.returncode == 3
    assert stats.processes == 1 and stats.linger_s == 0.0 and stats.answer_s is None


def test_per_100k_and_ratio() -> None:
    assert scale_bench.per_100k(46.0, 474_000) == pytest.approx(9.7046, rel=1e-4)
    assert scale_bench.per_100k(10.0, 100_000) == 10.0
    assert scale_bench.per_100k(None, 100_000) is None
    assert scale_bench.per_100k(1.0, 0) is None
    assert scale_bench.ratio(46.0, 19.0) == pytest.approx(2.421, rel=1e-3)
    assert scale_bench.ratio(1.0, 0.0) is None and scale_bench.ratio(None, 1.0) is None
    assert scale_bench.median([3.0, None, 1.0, 2.0]) == 2.0
    assert scale_bench.median([None]) is None


def test_count_python_lines(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("x = 1\ny = 2\n")
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "b.py").write_text("z = 3")  # no final newline: still a line
    (tmp_path / "pkg" / "c.txt").write_text("not\npython\n")
    (tmp_path / "empty.py").write_text("")
    assert scale_bench.count_python_lines(tmp_path) == (3, 3)


def test_report_prints_per_size_costs_ratios_and_targets() -> None:
    res = scale_bench.TreeResult("django-sdist", "Django sdist", "/x", 2788, 500_000)
    for tool, wall, rss in (("codeseek", 46.0, 800.0), ("semble", 20.0, 400.0)):
        res.add(f"{tool}/cold", scale_bench.RunStats(wall_s=wall, cpu_s=wall * 2, peak_rss_mib=rss))
    for wall in (3.0, 2.0, 2.5):
        res.add("codeseek/warm", scale_bench.RunStats(wall_s=wall, peak_rss_mib=600.0))
    res.add("semble/warm", scale_bench.RunStats(wall_s=1.0, peak_rss_mib=300.0))
    res.add("codeseek/graph", scale_bench.RunStats(wall_s=0.4))
    out = io.StringIO()
    scale_bench.report([res], out)
    text = out.getvalue()
    assert "500,000 Python lines" in text
    assert "9.20" in text  # 46 s over 500k lines: 9.20 s per 100k
    assert "160" in text  # 800 MiB over 500k lines: 160 MiB per 100k
    assert "2.30x" in text  # cold wall codeseek/semble
    assert "2.50x" in text  # warm wall: median 2.5 s over 1.0 s
    assert "django-sdist cold wall codeseek/semble: 2.30x (target <= 1.2x): MISSED" in text
    assert "django-sdist graph --callers wall: 0.40 s (target <= 0.5 s): met" in text
    assert "django-sdist warm search peak RSS: 600.00 MiB (target <= 150 MiB): MISSED" in text


def test_tree_options() -> None:
    assert scale_bench.parse_trees("requests, django") == ["requests", "django"]
    with pytest.raises(Exception, match="unknown tree"):
        scale_bench.parse_trees("requests,nope")
    combined = scale_bench.TREES["combined"]
    assert [p.package for _, p in combined.parts] == ["Django", "sympy", "transformers"]
    assert all(len(t.queries) >= 2 and t.graph_symbol for t in scale_bench.TREES.values())
