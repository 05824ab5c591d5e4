"""indexing.parse_pool: worker processes parse a large update with exactly the records parsing in process
gives, in file order; how many workers an update gets. Real grammars, store and sample workspace."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from indexing.parse_pool import MIN_FILES, Plan, parse_in_order, worker_count
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
