"""indexing.parse_pool: worker processes parse a large update with exactly the records parsing in process
gives, in file order; how many workers an update gets. Real grammars, store and sample workspace."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from indexing.parse_pool import MIN_FILES, PRELOAD, Plan, parse_in_order, worker_count, worth_a_pool
from indexing.records import FileInfo
from indexing.workspace import Workspace, WorkspaceOptions

SAMPLE = Path(__file__).resolve().parents[1] / "workspace" / "engine_sample"


def records(root: Path, index: Path, workers: int) -> tuple[list[tuple[object, ...]], ...]:
    with Workspace(root, WorkspaceOptions(index_dir=index, parse_workers=workers)) as ws:
        result = ws.update()
        assert result.parsed > 0
        errors = [(path, reason) for path, reason in result.error_paths]
        chunks = [(c.id, c.path, c.start_line, c.end_line, c.kind, c.symbol, c.content_hash)
                  for c in ws.store.chunks()]
        definitions = [(d.id, d.path, d.qualified_name, d.start_line, d.end_line) for d in ws.definitions()]
        calls = [(c.path, c.line, c.column, c.callee, c.caller) for c in ws.calls()]
        imports = [(i.path, i.line, i.module, i.name) for i in ws.imports()]
    return chunks, definitions, calls, imports, errors


def test_workers_store_what_parsing_in_process_stores(tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CODESEEK_PARSE_WORKERS", raising=False)
    root = tmp_path / "ws"
    shutil.copytree(SAMPLE, root)
    (root / "broken.py").write_bytes(b"def broken(:\n    return \xff\xfe\n")  # a syntax error, bad UTF-8
    serial = records(root, tmp_path / "serial", 0)
    pooled = records(root, tmp_path / "pooled", 2)
    assert pooled == serial and all(serial)
    assert {path for path, _ in serial[-1]} == {"broken.py"}  # a syntax error and bad UTF-8


def test_results_come_in_plan_order_and_plans_without_data_pass_through() -> None:
    plans = [Plan(FileInfo(f"m{k}.py", "python", 0, 0, ()), f"def f{k}():\n    return {k}\n".encode(), "h")
             if k % 3 else Plan(FileInfo(f"skip{k}.py", "python", 0, 0, ())) for k in range(40)]
    out = list(parse_in_order(iter(plans), workers=2))
    assert [plan for plan, _ in out] == plans
    for k, (_, result) in enumerate(out):
        if k % 3:
            assert result is not None and [d.name for d in result.definitions] == [f"f{k}"]
        else:
            assert result is None


def test_files_go_to_the_workers_in_batches(monkeypatch: pytest.MonkeyPatch) -> None:
    """Up to BATCH_FILES files (or BATCH_BYTES) a task: fewer round trips through the caller's threads.
    A long run of files that need no parse behind an open batch sends it; every result in plan order."""
    from concurrent.futures import ProcessPoolExecutor

    from indexing import parse_pool

    sent: list[int] = []
    submit = ProcessPoolExecutor.submit

    def counted(self: ProcessPoolExecutor, fn: object, *args: object, **kwargs: object) -> object:
        sent.append(len(args[0]))  # type: ignore[arg-type]
        return submit(self, fn, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(ProcessPoolExecutor, "submit", counted)
    plans = [Plan(FileInfo(f"m{k}.py", "python", 0, 0, ()), f"def f{k}():\n    return {k}\n".encode(), "h")
             for k in range(40)]
    plans.insert(20, Plan(FileInfo("big.py", "python", 0, 0, ()), b"x = 1\n" * (parse_pool.BATCH_BYTES // 6)))
    plans += [Plan(FileInfo(f"skip{k}.py", "python", 0, 0, ())) for k in range(300)]  # nothing to parse
    plans.append(Plan(FileInfo("late.py", "python", 0, 0, ()), b"def late():\n    return 0\n"))
    out = list(parse_in_order(iter(plans), workers=2))
    assert [plan for plan, _ in out] == plans
    # the big file closes its batch; the last four files' batch goes when the files behind it pile up
    assert sent == [16, 5, 16, 4, 1]
    named = [[d.name for d in result.definitions] for _, result in out if result is not None]
    assert named[:3] == [["f0"], ["f1"], ["f2"]] and ["late"] in named and len(named) == 42


def _die_in_a_worker(owner: int, chunks: list[object], data: bytes) -> None:
    """A feed's `prepare` that kills the parse worker it runs in on a marked file (never the owner)."""
    import os

    if b"# die" in data and os.getpid() != owner:
        os._exit(3)


def test_a_killed_worker_leaves_its_batch_and_the_rest_to_the_caller(caplog: pytest.LogCaptureFixture
                                                                     ) -> None:
    """A worker dying mid-batch (killed, out of memory) loses nothing: its batch, the batches queued
    behind it and every later file are parsed in process, in plan order."""
    import functools
    import os

    plans = [Plan(FileInfo(f"m{k}.py", "python", 0, 0, ()),
                  f"def f{k}():\n    return {k}\n{'# die' if k == 20 else ''}\n".encode(), "h")
             for k in range(60)]
    prepare = functools.partial(_die_in_a_worker, os.getpid())
    with caplog.at_level("WARNING", logger="indexing.parse_pool"):
        out = list(parse_in_order(iter(plans), workers=2, prepare=prepare))
    assert any("parsing it in process" in r.getMessage() for r in caplog.records)  # (a worker died)
    assert [plan for plan, _ in out] == plans
    assert [[d.name for d in result.definitions] for _, result in out if result is not None] == \
        [[f"f{k}"] for k in range(60)]


def test_worker_count(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CODESEEK_PARSE_WORKERS", raising=False)
    assert worker_count(MIN_FILES - 1, None, cpus=8) == 0  # a small update: the pool's start costs more
    assert worker_count(MIN_FILES, None, cpus=2) == 2 and worker_count(10_000, None, cpus=16) == 4
    assert worker_count(10_000, None, cpus=1) == 0
    assert worker_count(10_000, 0, cpus=8) == 0 and worker_count(5, 3, cpus=8) == 3  # chosen wins
    assert worker_count(0, 3, cpus=8) == 0
    monkeypatch.setenv("CODESEEK_PARSE_WORKERS", "1")
    assert worker_count(5, 0, cpus=8) == 1
    monkeypatch.setenv("CODESEEK_PARSE_WORKERS", "many")
    assert worker_count(5, 0, cpus=8) == 0  # ignored, logged


@pytest.mark.skipif(not Path("/proc/self/environ").exists(), reason="reads /proc")
def test_workers_end_when_their_owner_is_killed(tmp_path: Path) -> None:
    """A killed indexer leaves no parse worker (nor fork server) behind."""
    import os
    import subprocess
    import sys
    import time
    import uuid

    mark = f"codeseek-test-{uuid.uuid4().hex}"
    code = (
        "import os, signal\n"
        "from indexing.parse_pool import Plan, parse_in_order\n"
        "from indexing.records import FileInfo\n"
        "if __name__ == '__main__':\n"
        "    plans = [Plan(FileInfo(f'm{k}.py', 'python', 0, 0, ()), b'def f():\\n    return 1\\n', 'h')\n"
        "             for k in range(40)]\n"
        "    results = parse_in_order(iter(plans), workers=2)\n"
        "    next(results)\n"
        "    os.kill(os.getpid(), signal.SIGKILL)\n"
    )
    script = tmp_path / "owner.py"
    script.write_text(code)
    proc = subprocess.run([sys.executable, str(script)], env={**os.environ, "CODESEEK_TEST_MARK": mark},
                          capture_output=True, timeout=120)
    assert proc.returncode == -9

    def marked() -> list[int]:
        found = []
        for entry in Path("/proc").iterdir():
            if entry.name.isdigit():
                try:
                    if mark.encode() in (entry / "environ").read_bytes():
                        found.append(int(entry.name))
                except OSError:
                    pass
        return found

    deadline = time.monotonic() + 10
    while marked() and time.monotonic() < deadline:
        time.sleep(0.2)
    assert marked() == []


def test_the_fork_servers_preload_imports_no_numpy() -> None:
    """The fork server preloads `indexing.parse` and lives as long as the pools: without numpy it holds
    ~17 MiB instead of ~30 (a worker imports numpy itself when it first measures a file)."""
    import subprocess
    import sys

    code = "import sys, indexing.parse; assert 'numpy' not in sys.modules, 'numpy imported'"
    subprocess.run([sys.executable, "-c", code], check=True, cwd=Path(__file__).resolve().parents[2])


def test_worth_a_pool_counts_known_files_outside_the_folders_a_scan_skips(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A first index starts its fork server early only for a tree its workers will parse: `MIN_FILES`
    files of a known language, not counting those in folders every scan skips by name."""
    monkeypatch.setenv("CODESEEK_PARSE_WORKERS", "2")
    assert not worth_a_pool(tmp_path / "missing")  # (a folder it cannot read: the scan says why)
    (tmp_path / "node_modules").mkdir()
    for k in range(MIN_FILES):
        (tmp_path / "node_modules" / f"m{k}.js").write_text("x\n")
        (tmp_path / f"blob{k}.bin").write_bytes(b"x")
    for k in range(MIN_FILES - 1):
        (tmp_path / f"m{k}.py").write_text("x = 1\n")
    assert not worth_a_pool(tmp_path)
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "last.py").write_text("x = 1\n")
    assert worth_a_pool(tmp_path)
    monkeypatch.setenv("CODESEEK_PARSE_WORKERS", "0")  # (no workers: no fork server to start)
    assert not worth_a_pool(tmp_path)


def test_a_first_search_starts_the_fork_server_as_it_opens_its_engine(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`codeseek search` with no index yet, on a tree its workers will parse, starts their fork server
    (the parser preloaded) before the engine's imports and the scan; with the index there, or on a
    small tree, it starts none."""
    import argparse
    from multiprocessing import forkserver
    from typing import Any

    from lsp_server.cli.foreground import open_engine, refresh
    from lsp_server.process_tuning import reap_worker_processes

    monkeypatch.setenv("CODESEEK_PARSE_WORKERS", "2")
    server: Any = forkserver._forkserver  # (its pid: a private attribute, as reap_worker_processes reads it)
    small, large = tmp_path / "small", tmp_path / "large"
    for root, count in ((small, 3), (large, MIN_FILES)):
        root.mkdir()
        for k in range(count):
            (root / f"m{k}.py").write_text(f"def f{k}():\n    return {k}\n")
    args = argparse.Namespace(index_dir=str(tmp_path / "indexes"), no_embed=True)
    reap_worker_processes()
    try:
        for root, starts in ((small, False), (large, True)):
            assert server._forkserver_pid is None
            engine = open_engine(root, args)
            assert (server._forkserver_pid is not None) is starts
            if starts:
                assert server._preload_modules == PRELOAD
            assert refresh(engine, show_progress=False).update is not None  # (stops it)
            engine.close()
        engine = open_engine(large, args)  # (indexed now)
        assert server._forkserver_pid is None
        engine.close()
    finally:
        reap_worker_processes()
