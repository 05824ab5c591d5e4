"""codeseek beside semble 0.7.0 on trees from 10k to 2.2M lines: cold index, warm CLI calls, CPU and
memory of the whole process tree, per-size costs and codeseek/semble ratios (issue 29).

    .venv/bin/python bench/scale_bench.py --trees requests,django --rounds 1
    .venv/bin/python bench/scale_bench.py --trees django-sdist,sympy,transformers,combined --rounds 3
    .venv/bin/python bench/scale_bench.py --fetch-only          # download every tree, print line counts

Trees (PyPI sdists, fetched once by bench/corpora.py into ~/.cache/codeseek-corpora): requests 2.32.3,
Django 5.1.4's `django/` folder, the whole Django 5.1.4 sdist, sympy 1.13.3, transformers 4.46.3, and
`combined`: the last three side by side in one folder (hard links), ~2.2M Python lines.

codeseek is driven only through its console script (`.venv/bin/codeseek`, beside this interpreter),
semble through its own CLI in its own venv (bench/peer_setup.py makes it on the first run). Both use
one static model: the directory `codeseek model --path` names, copied into the bench cache for the
run, which semble reads through SEMBLE_MODEL_NAME. Both run without OPENBLAS_CORETYPE and
OPENBLAS_L2_SIZE (some machines set them for older OpenBLAS builds; a current numpy then runs an older
kernel, here AVX2 instead of AVX-512) unless --keep-blas-env; the report names each one's kernel.

Per tree and round (the tools alternate: which goes first flips every round, and within a round every
pair of warm calls flips again):
- cold: what a new user runs first. codeseek: `codeseek search Q --root ROOT --index-dir NEW` (parse,
  text index, call graph, a static vector for every chunk, the answer, then the derived structures
  written as it exits); semble: `semble search Q ROOT -k 10` with an empty SEMBLE_CACHE_LOCATION
  (chunk, embed every chunk, answer, save its cache).
- warm search: the same commands again on the built index / the filled cache, one untimed call first,
  then each of the tree's queries.
- `codeseek graph NAME --callers` on the built index (semble has no counterpart), beside `grep -rnw NAME
  ROOT` as a floor.

Every command is started by this process, which samples /proc every 50 ms: the process tree is the
command and every process descended from it, also after it was orphaned (this process makes itself a
child subreaper, so orphans are re-parented to it and read one last time before they are reaped).
- wall: spawn to the command's own exit (what the caller waits for); `answer` is spawn to its first
  byte on stdout (both run with PYTHONUNBUFFERED=1), `linger` how long its descendants outlived it.
- CPU: utime+stime of every process of the tree at its last sample (a zombie's figures are final), and
  beside it what wait4 reports for the command alone (its own and its reaped children's, what `time`
  shows), which misses workers it never reaps.
- peak RSS: the largest sum of the RSS of the tree's live processes at one sample (pages shared between
  a parent and its forked workers count once per process: an upper bound; never below the command's
  own VmHWM, which a 50 ms sample can miss); the same with PSS, where a page shared by n processes
  counts 1/n in each (read every 4th sample: smaps_rollup costs more); and the command's own VmHWM.
Figures are medians over rounds (warm ones over rounds and queries). Per-size costs divide by the
tree's Python lines (every line of every *.py file). The machine is shared: read ratios from one run.
"""

from __future__ import annotations

import argparse
import ctypes
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, TextIO

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from bench.corpora import combine_trees, fetch_sdist  # noqa: E402
from indexing.roots import folder_bytes  # noqa: E402

SEMBLE_VERSION = "0.7.0"
SAMPLE_S = 0.05
LINGER_S = 60.0  # how long descendants may outlive the command before the bench stops waiting
PSS_EVERY = 4  # PSS (smaps_rollup, ~3 ms per 800 MiB process) on every 4th sample
PAGE_KIB = os.sysconf("SC_PAGE_SIZE") // 1024
CLK_TCK = os.sysconf("SC_CLK_TCK")
PR_SET_CHILD_SUBREAPER, PR_GET_CHILD_SUBREAPER = 36, 37


# ---------------------------------------------------------------------------------------------------
# Process-tree accounting


@dataclass
class RunStats:
    """One command: wall, CPU and memory of its whole process tree."""

    returncode: int = 0
    wall_s: float = 0.0
    answer_s: float | None = None  # spawn to the first byte on stdout
    linger_s: float = 0.0  # how long after the command's exit its last descendant was seen alive
    cpu_s: float = 0.0  # utime+stime of every process of the tree
    wait4_cpu_s: float = 0.0  # what wait4 gives for the command (`time`'s user+sys)
    peak_rss_mib: float = 0.0  # the largest sum of the tree's RSS at one sample (at least main_hwm_mib)
    peak_pss_mib: float = 0.0  # the largest sum of the tree's PSS (shared pages split), every 4th sample
    main_hwm_mib: float = 0.0  # the command's own peak RSS (VmHWM)
    processes: int = 0  # distinct processes seen in the tree
    left_alive: int = 0  # descendants still alive when the bench stopped waiting
    stdout: str = ""
    stderr_tail: str = ""


def set_child_subreaper() -> bool:
    """Make this process the child subreaper of its descendants (Linux): an orphaned grandchild is
    re-parented here rather than to init, so its last CPU figures can be read before it is reaped."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return int(libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)) == 0
    except (OSError, AttributeError):
        return False


def is_child_subreaper() -> bool:
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        flag = ctypes.c_int(0)
        got = int(libc.prctl(PR_GET_CHILD_SUBREAPER, ctypes.byref(flag), 0, 0, 0))
        return got == 0 and flag.value != 0
    except (OSError, AttributeError):
        return False


@dataclass(frozen=True)
class ProcStat:
    ppid: int
    state: str
    ticks: int  # utime + stime, clock ticks
    start: int  # start time since boot, clock ticks (with the pid, a process's identity)


def read_stat(pid: int) -> ProcStat | None:
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            raw = fh.read()
    except OSError:
        return None
    try:
        fields = raw.rsplit(b")", 1)[1].split()
        # after "pid (comm)": state ppid pgrp session tty tpgid flags minflt cminflt majflt cmajflt
        # utime stime cutime cstime priority nice threads itrealvalue starttime
        ticks = int(fields[11]) + int(fields[12])
        return ProcStat(int(fields[1]), fields[0].decode(), ticks, int(fields[19]))
    except (IndexError, ValueError):
        return None


def scan_processes() -> dict[int, ProcStat]:
    out: dict[int, ProcStat] = {}
    for name in os.listdir("/proc"):
        if name.isdigit():
            got = read_stat(int(name))
            if got is not None:
                out[int(name)] = got
    return out


def read_rss_kib(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/statm", "rb") as fh:
            return int(fh.read().split()[1]) * PAGE_KIB
    except (OSError, IndexError, ValueError):
        return 0


def _proc_field_kib(path: str, field: bytes) -> int:
    """The kB figure of the line starting with `field` in a /proc file (0: unreadable or absent)."""
    try:
        with open(path, "rb") as fh:
            for line in fh:
                if line.startswith(field):
                    return int(line.split()[1])
    except (OSError, IndexError, ValueError):
        pass
    return 0


def read_pss_kib(pid: int) -> int:
    return _proc_field_kib(f"/proc/{pid}/smaps_rollup", b"Pss:")


def read_hwm_kib(pid: int) -> int:
    return _proc_field_kib(f"/proc/{pid}/status", b"VmHWM:")


class TreeSampler:
    """The process tree below one root pid: members are the root, every process whose parent is a
    member, and (`adopt_orphans`, when this process is a subreaper) every child of this process that
    the bench did not start itself (an orphan re-parented here); a member stays one after it is
    orphaned, until it exits."""

    def __init__(self, root: int, adopt_orphans: bool) -> None:
        self.root = root
        self.me = os.getpid()
        self.adopt = adopt_orphans
        self.ticks: dict[tuple[int, int], int] = {}  # (pid, start) -> utime+stime at its last sample
        self.peak_kib = 0
        self.pss_peak_kib = 0
        self.hwm_kib = 0
        self.samples = 0
        self.root_start: int | None = None

    def sample(self) -> dict[int, ProcStat]:
        """One sample; the live (non-zombie) members and the zombies among them, by pid."""
        procs = scan_processes()
        members: dict[int, ProcStat] = {}
        for pid, st in procs.items():
            if (pid, st.start) in self.ticks or pid == self.root and (
                    self.root_start is None or st.start == self.root_start):
                members[pid] = st
        grew = True
        while grew:
            grew = False
            for pid, st in procs.items():
                if pid in members:
                    continue
                if st.ppid in members or (self.adopt and st.ppid == self.me and pid not in _OWN_CHILDREN):
                    members[pid] = st
                    grew = True
        if self.root in members and self.root_start is None:
            self.root_start = members[self.root].start
        total = pss = 0
        with_pss = self.samples % PSS_EVERY == 0
        self.samples += 1
        for pid, st in members.items():
            self.ticks[(pid, st.start)] = st.ticks
            if st.state != "Z":
                total += read_rss_kib(pid)
                if with_pss:
                    pss += read_pss_kib(pid)
        self.peak_kib = max(self.peak_kib, total)
        self.pss_peak_kib = max(self.pss_peak_kib, pss)
        if self.root in members and members[self.root].state != "Z":
            self.hwm_kib = max(self.hwm_kib, read_hwm_kib(self.root))
        return members

    def reap_orphans(self, members: dict[int, ProcStat]) -> None:
        """Reap the zombies re-parented here (their final figures were just read)."""
        for pid, st in members.items():
            if pid != self.root and st.state == "Z" and st.ppid == self.me:
                try:
                    os.waitpid(pid, os.WNOHANG)
                except ChildProcessError:
                    pass

    @property
    def cpu_s(self) -> float:
        return sum(self.ticks.values()) / CLK_TCK


_OWN_CHILDREN: set[int] = set()  # pids this bench started and waits for itself (never adopted)


def _alive(members: dict[int, ProcStat], but: int) -> list[int]:
    return [pid for pid, st in members.items() if pid != but and st.state != "Z"]


def run_measured(cmd: Sequence[str], env: dict[str, str] | None = None, cwd: str | Path | None = None,
                 interval: float = SAMPLE_S, linger: float = LINGER_S,
                 stdout_limit: int = 200_000) -> RunStats:
    """Run `cmd` to its end and measure its whole process tree (see the module's docstring)."""
    adopt = is_child_subreaper()
    first_byte: list[float] = []
    chunks: list[bytes] = []
    kept = [0]
    with tempfile.TemporaryFile() as err:
        started = time.perf_counter()
        proc = subprocess.Popen(list(cmd), stdout=subprocess.PIPE, stderr=err, stdin=subprocess.DEVNULL,
                                env=env, cwd=cwd)
        _OWN_CHILDREN.add(proc.pid)
        sampler = TreeSampler(proc.pid, adopt)
        exited: list[float] = []

        def read_stdout() -> None:
            assert proc.stdout is not None
            fd = proc.stdout.fileno()
            while True:
                data = os.read(fd, 65536)
                if not data:
                    return
                if not first_byte:
                    first_byte.append(time.perf_counter())
                if kept[0] < stdout_limit:
                    chunks.append(data)
                    kept[0] += len(data)

        def wait_exit() -> None:  # blocks until the command exits, leaving it a zombie (WNOWAIT)
            try:
                os.waitid(os.P_PID, proc.pid, os.WEXITED | os.WNOWAIT)
            except ChildProcessError:
                pass
            exited.append(time.perf_counter())

        reader = threading.Thread(target=read_stdout, daemon=True)
        waiter = threading.Thread(target=wait_exit, daemon=True)
        reader.start()
        waiter.start()
        status = 0
        wait4_cpu = 0.0
        last_seen = started
        try:
            while True:
                done = bool(exited)
                members = sampler.sample()  # after the exit: the command's final figures, as a zombie
                if done and proc.returncode is None:
                    _, status, usage = os.wait4(proc.pid, 0)
                    proc.returncode = os.waitstatus_to_exitcode(status)
                    wait4_cpu = usage.ru_utime + usage.ru_stime
                if adopt:
                    sampler.reap_orphans(members)
                alive = _alive(members, proc.pid)
                now = time.perf_counter()
                if alive:
                    last_seen = now
                if done and (not alive or now - exited[0] > linger):
                    break
                time.sleep(interval)
        finally:
            if proc.returncode is None:  # interrupted: leave no zombie behind
                proc.kill()
                proc.wait()
            _OWN_CHILDREN.discard(proc.pid)
        reader.join(timeout=10)
        if proc.stdout is not None:
            proc.stdout.close()
        err.seek(0)
        stderr = err.read().decode("utf-8", "replace")
    end = exited[0]
    return RunStats(
        returncode=int(proc.returncode), wall_s=end - started,
        answer_s=(first_byte[0] - started) if first_byte else None,
        linger_s=max(0.0, last_seen - end),
        cpu_s=sampler.cpu_s, wait4_cpu_s=wait4_cpu,
        peak_rss_mib=max(sampler.peak_kib, sampler.hwm_kib) / 1024,
        peak_pss_mib=sampler.pss_peak_kib / 1024, main_hwm_mib=sampler.hwm_kib / 1024,
        processes=len(sampler.ticks), left_alive=len(alive),
        stdout=b"".join(chunks).decode("utf-8", "replace"), stderr_tail=stderr[-3000:])


# ---------------------------------------------------------------------------------------------------
# Arithmetic


def per_100k(value: float | None, lines: int) -> float | None:
    """`value` per 100,000 lines (seconds or MiB per 100k lines of code)."""
    if value is None or lines <= 0:
        return None
    return value * 100_000 / lines


def ratio(a: float | None, b: float | None) -> float | None:
    if a is None or b is None or b == 0:
        return None
    return a / b


def median(values: Sequence[float | None]) -> float | None:
    got = [v for v in values if v is not None]
    return statistics.median(got) if got else None


def count_python_lines(root: Path) -> tuple[int, int]:
    """(Python files, lines in them): every line of every *.py file under `root`."""
    files = lines = 0
    for dirpath, _, names in os.walk(root):
        for name in names:
            if name.endswith(".py"):
                try:
                    with open(os.path.join(dirpath, name), "rb") as fh:
                        data = fh.read()
                except OSError:
                    continue
                files += 1
                lines += data.count(b"\n") + (1 if data and not data.endswith(b"\n") else 0)
    return files, lines


def dir_mib(path: Path) -> float:
    return folder_bytes(path) / 2**20


# ---------------------------------------------------------------------------------------------------
# Trees


@dataclass(frozen=True)
class Part:
    package: str
    version: str
    sub: str = ""  # the folder inside the unpacked sdist ("" = all of it)


@dataclass(frozen=True)
class Tree:
    key: str
    label: str
    parts: tuple[tuple[str, Part], ...]  # one part: that folder; several: combined side by side
    queries: tuple[str, ...]
    graph_symbol: str


DJANGO_Q = ("how are database migrations applied in order", "validate the CSRF token of a POST request",
            "QuerySet.filter", "get_object_or_404")
SYMPY_Q = ("solve a system of polynomial equations", "simplify trigonometric expressions",
           "Matrix.inv", "sympify")
TRANSFORMERS_Q = ("load pretrained weights from a checkpoint", "apply rotary position embeddings",
                  "PreTrainedModel.from_pretrained", "AutoTokenizer")
DJANGO, SYMPY, TRANSFORMERS = Part("Django", "5.1.4"), Part("sympy", "1.13.3"), Part("transformers", "4.46.3")
TREES: dict[str, Tree] = {t.key: t for t in (
    Tree("requests", "requests 2.32.3", (("", Part("requests", "2.32.3")),),
         ("how are redirects followed and when is the method changed",
          "where are proxy settings read from the environment", "Session.request",
          "merge_environment_settings"), "merge_setting"),
    Tree("django", "Django 5.1.4 django/", (("", Part("Django", "5.1.4", "django")),), DJANGO_Q,
         "get_or_create"),
    Tree("django-sdist", "Django 5.1.4 sdist", (("", DJANGO),), DJANGO_Q, "get_or_create"),
    Tree("sympy", "sympy 1.13.3", (("", SYMPY),), SYMPY_Q, "sympify"),
    Tree("transformers", "transformers 4.46.3", (("", TRANSFORMERS),), TRANSFORMERS_Q,
         "apply_rotary_pos_emb"),
    Tree("combined", "Django sdist + sympy + transformers",
         (("django", DJANGO), ("sympy", SYMPY), ("transformers", TRANSFORMERS)),
         (DJANGO_Q[0], SYMPY_Q[0], TRANSFORMERS_Q[2], DJANGO_Q[3]), "get_or_create"),
)}


def part_path(part: Part) -> Path:
    base = fetch_sdist(part.package, part.version)
    return base / part.sub if part.sub else base


def tree_path(tree: Tree) -> Path:
    if len(tree.parts) == 1:
        return part_path(tree.parts[0][1])
    name = "combined-" + "-".join(f"{p.package}-{p.version}" for _, p in tree.parts)
    return combine_trees(name, {key: part_path(p) for key, p in tree.parts})


# ---------------------------------------------------------------------------------------------------
# The two tools


def log(msg: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def codeseek_script() -> Path:
    script = Path(sys.executable).parent / "codeseek"
    if not script.exists():
        raise SystemExit(f"no codeseek console script beside {sys.executable}: run with .venv/bin/python")
    return script


# Set on some machines for older OpenBLAS builds, which compute wrong results or crash on their
# processors: a current numpy's OpenBLAS then runs an older kernel than the processor's own (here
# Haswell's AVX2 instead of SkylakeX's AVX-512: half the speed of a matrix product, where the
# transformer's question pool spends most of its time). Both tools' commands run without them unless
# --keep-blas-env; the header and the report's last line say which kernel each tool's numpy runs.
BLAS_OVERRIDES = ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE")
# Which OpenBLAS kernel an interpreter's numpy runs (its bundled library's own answer).
KERNEL_PROBE = """
import ctypes, glob, os, numpy
name = "unknown"
for lib in glob.glob(os.path.dirname(numpy.__file__) + ".libs/*openblas*"):
    dll = ctypes.CDLL(lib)
    for symbol in ("scipy_openblas_get_corename64_", "scipy_openblas_get_corename",
                   "openblas_get_corename64_", "openblas_get_corename"):
        get = getattr(dll, symbol, None)
        if get is not None:
            get.restype = ctypes.c_char_p
            name = get().decode()
            break
print(name)
"""


def base_env(keep_blas_env: bool = False) -> dict[str, str]:
    dropped = ("PYTHONPATH", "CODESEEK_INDEX_DIR", "SEMBLE_CACHE_LOCATION", "SEMBLE_MODEL_NAME",
               *(() if keep_blas_env else BLAS_OVERRIDES))
    env = {k: v for k, v in os.environ.items() if k not in dropped}
    env.update(HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1", PYTHONUNBUFFERED="1")
    return env


def blas_kernel(python: Path, env: dict[str, str]) -> str:
    """The OpenBLAS kernel `python`'s numpy runs under `env` ("unknown" when it cannot say)."""
    try:
        proc = subprocess.run([str(python), "-c", KERNEL_PROBE], env=env, check=False, timeout=60,
                              stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    except (OSError, subprocess.TimeoutExpired):
        return "unknown"
    lines = proc.stdout.split()
    return lines[-1] if proc.returncode == 0 and lines else "unknown"


class Tools:
    """Command lines and environments of both tools for one bench run."""

    def __init__(self, work: Path, keep_blas_env: bool = False) -> None:
        from bench.peer_setup import ensure_semble

        self.codeseek = codeseek_script()
        self.env = base_env(keep_blas_env)
        self.semble = ensure_semble().parent / "semble"
        self.kernels = {"codeseek": blas_kernel(Path(sys.executable), self.env),
                        "semble": blas_kernel(self.semble.parent / "python", self.env)}
        proc = subprocess.run([str(self.codeseek), "model", "--path"], env=self.env, check=False,
                              stdout=subprocess.PIPE, text=True)
        lines = proc.stdout.strip().splitlines()
        if proc.returncode != 0 or not lines or not Path(lines[-1]).is_dir():
            raise SystemExit(f"`codeseek model --path` failed ({proc.returncode}): {proc.stdout[-500:]}")
        # a copy: the model semble reads stays put whatever happens to the checkout during the run
        self.model_source = Path(lines[-1])
        self.model = work / "model"
        if not self.model.is_dir():
            shutil.copytree(self.model_source, self.model)

    def cold_or_warm_search(self, tool: str, root: Path, query: str, scratch: Path) -> list[str]:
        if tool == "codeseek":
            return [str(self.codeseek), "search", query, "--root", str(root), "--index-dir",
                    str(scratch / "codeseek-index")]
        return [str(self.semble), "search", query, str(root), "-k", "10"]

    def env_for(self, tool: str, scratch: Path) -> dict[str, str]:
        if tool == "codeseek":
            return self.env
        return dict(self.env, SEMBLE_MODEL_NAME=str(self.model),
                    SEMBLE_CACHE_LOCATION=str(scratch / "semble-cache"))

    def graph(self, root: Path, symbol: str, scratch: Path) -> list[str]:
        return [str(self.codeseek), "graph", symbol, "--callers", "--root", str(root), "--index-dir",
                str(scratch / "codeseek-index")]


TOOLS = ("codeseek", "semble")
OK_CODES = {"codeseek": (0, 1), "semble": (0,), "grep": (0, 1)}  # codeseek/grep: 1 = no match


@dataclass
class TreeResult:
    key: str
    label: str
    root: str
    py_files: int
    py_lines: int
    runs: dict[str, list[dict[str, Any]]] = field(default_factory=dict)  # "codeseek/cold" -> [RunStats]
    disk_mib: dict[str, list[float]] = field(default_factory=dict)

    def add(self, name: str, stats: RunStats) -> None:
        row = asdict(stats)
        row["head"] = (row.pop("stdout").strip().splitlines() or [""])[0][:200]  # what it answered
        row.pop("stderr_tail")
        self.runs.setdefault(name, []).append(row)

    def med(self, name: str, figure: str) -> float | None:
        return median([r[figure] for r in self.runs.get(name, [])])


def checked(tool: str, what: str, stats: RunStats) -> RunStats:
    if stats.returncode not in OK_CODES[tool]:
        raise SystemExit(f"{tool} {what} failed (exit {stats.returncode}):\n{stats.stderr_tail}")
    if stats.left_alive:
        log(f"  note: {stats.left_alive} process(es) of {tool} {what} still alive {LINGER_S:.0f} s "
            "after it exited")
    return stats


def bench_round(tree: Tree, tools: Tools, root: Path, scratch: Path, order: Sequence[str],
                result: TreeResult, label: str) -> None:
    """One round on one tree: both cold builds, the warm searches, the graph calls."""

    def search(tool: str, what: str, query: str) -> RunStats:
        cmd = tools.cold_or_warm_search(tool, root, query, scratch)
        return checked(tool, what, run_measured(cmd, tools.env_for(tool, scratch), scratch))

    for tool in order:
        log(f"  {label}: {tool} cold index + search")
        stats = search(tool, "cold search", tree.queries[0])
        result.add(f"{tool}/cold", stats)
        log(f"    {stats.wall_s:.1f} s wall, {stats.cpu_s:.1f} s CPU (wait4 sees {stats.wait4_cpu_s:.1f}), "
            f"peak {stats.peak_rss_mib:.0f} MiB, {stats.processes} processes")
    stored = {"codeseek": scratch / "codeseek-index", "semble": scratch / "semble-cache"}
    for tool in TOOLS:
        if not stored[tool].is_dir() or not any(stored[tool].iterdir()):
            raise SystemExit(f"{tool} left nothing in {stored[tool]} after its cold search")
        result.disk_mib.setdefault(tool, []).append(dir_mib(stored[tool]))
    for tool in order:  # one untimed warm call each
        search(tool, "warm-up search", tree.queries[1])
    log(f"  {label}: warm searches ({len(tree.queries)} queries each), graph")
    for i, query in enumerate(tree.queries):
        for tool in order if i % 2 == 0 else order[::-1]:
            result.add(f"{tool}/warm", search(tool, "warm search", query))
    graph = tools.graph(root, tree.graph_symbol, scratch)
    grep = ["grep", "-rnw", tree.graph_symbol, str(root)]
    for _ in range(2):
        result.add("codeseek/graph", checked("codeseek", "graph", run_measured(graph, tools.env, scratch)))
        result.add("grep/graph", checked("grep", "grep", run_measured(grep, tools.env, scratch)))


def bench_tree(tree: Tree, tools: Tools, rounds: int, work: Path) -> TreeResult:
    root = tree_path(tree)
    files, lines = count_python_lines(root)
    result = TreeResult(tree.key, tree.label, str(root), files, lines)
    log(f"{tree.key}: {root} ({files} Python files, {lines:,} lines)")
    for rnd in range(rounds):
        order = TOOLS if rnd % 2 == 0 else TOOLS[::-1]
        scratch = Path(tempfile.mkdtemp(prefix=f"{tree.key}-r{rnd}-", dir=work))
        try:
            bench_round(tree, tools, root, scratch, order, result, f"{tree.key} round {rnd + 1}/{rounds}")
        finally:
            shutil.rmtree(scratch, ignore_errors=True)
    return result


# ---------------------------------------------------------------------------------------------------
# Report


def fmt(value: float | None, spec: str = "{:.2f}") -> str:
    return "-" if value is None else spec.format(value)


def table(title: str, header: Sequence[str], rows: Sequence[Sequence[str]], out: TextIO) -> None:
    widths = [max(len(header[i]), *(len(r[i]) for r in rows)) if rows else len(header[i])
              for i in range(len(header))]

    def cells(row: Sequence[str]) -> str:
        return "  ".join(c.ljust(w) if i == 0 else c.rjust(w)
                         for i, (c, w) in enumerate(zip(row, widths, strict=True)))

    line = cells(header)
    print(f"\n{title}", file=out)
    print(line, file=out)
    print("-" * len(line), file=out)
    for r in rows:
        print(cells(r), file=out)


Figure = tuple[str, str, str, str, bool]  # (run, figure, label, format, show the codeseek/semble ratio)

# The rows under a run's wall time: figure -> (label, format, show the ratio); format None is the run's
# own precision for seconds.
FIGURE_ROWS: dict[str, tuple[str, str | None, bool]] = {
    "answer_s": ("answer printed at (s)", None, True),
    "cpu_s": ("CPU, whole tree (s)", None, True),
    "wait4_cpu_s": ("CPU as wait4/time sees it (s)", None, True),
    "peak_rss_mib": ("peak RSS, whole tree (MiB)", "{:.0f}", True),
    "peak_pss_mib": ("peak PSS, whole tree (MiB)", "{:.0f}", True),
    "main_hwm_mib": ("peak RSS, main process (MiB)", "{:.0f}", True),
    "processes": ("processes", "{:.0f}", False),
    "linger_s": ("workers outlived it by (s)", "{:.2f}", False),
}


def run_figures(run: str, wall_label: str, seconds: str, figures: str) -> list[Figure]:
    """run's wall time, then the figures named (FIGURE_ROWS, space-separated) indented under it."""
    rows: list[Figure] = [(run, "wall_s", wall_label, seconds, True)]
    for figure in figures.split():
        label, spec, show = FIGURE_ROWS[figure]
        rows.append((run, figure, "  " + label, spec or seconds, show))
    return rows


FIGURES: list[Figure] = [
    *run_figures("cold", "cold index+search wall (s)", "{:.1f}",
                 "answer_s cpu_s wait4_cpu_s peak_rss_mib peak_pss_mib main_hwm_mib processes linger_s"),
    *run_figures("warm", "warm search process wall (s)", "{:.2f}", "cpu_s peak_rss_mib processes"),
]


def tool_figure(res: TreeResult, tool: str, run: str, figure: str) -> float | None:
    return res.med(f"{tool}/{run}", figure)


def report(results: Sequence[TreeResult], out: TextIO = sys.stdout) -> None:
    for res in results:
        rows = []
        for run, figure, label, spec, show_ratio in FIGURES:
            a, b = tool_figure(res, "codeseek", run, figure), tool_figure(res, "semble", run, figure)
            shown = fmt(ratio(a, b), "{:.2f}x") if show_ratio else ""
            rows.append([label, fmt(a, spec), fmt(b, spec), shown])
        disk = [median(res.disk_mib.get(t, [])) for t in TOOLS]
        rows.append(["index on disk (MiB)", fmt(disk[0], "{:.0f}"), fmt(disk[1], "{:.0f}"),
                     fmt(ratio(disk[0], disk[1]), "{:.2f}x")])
        for run, label in (("codeseek/graph", "codeseek graph --callers wall (s)"),
                           ("grep/graph", "grep -rnw wall (s), for scale")):
            rows.append([label, fmt(res.med(run, "wall_s")), "", ""])
        graph_rss = res.med("codeseek/graph", "peak_rss_mib")
        rows.append(["  its peak RSS (MiB)", fmt(graph_rss, "{:.0f}"), "", ""])
        n_cold = len(res.runs.get("codeseek/cold", []))
        table(f"{res.label}: {res.py_lines:,} Python lines in {res.py_files:,} files; medians of {n_cold} "
              f"round(s)", ["", "codeseek", "semble", "codeseek/semble"], rows, out)

    rows = []
    for res in results:
        n = res.py_lines
        row = [res.key, f"{n / 1000:.0f}k"]
        for tool in TOOLS:
            row += [fmt(per_100k(tool_figure(res, tool, "cold", "wall_s"), n)),
                    fmt(per_100k(tool_figure(res, tool, "cold", "cpu_s"), n)),
                    fmt(per_100k(tool_figure(res, tool, "cold", "peak_rss_mib"), n), "{:.0f}")]
        row += [fmt(per_100k(tool_figure(res, "codeseek", "warm", "wall_s"), n)),
                fmt(per_100k(tool_figure(res, "codeseek", "warm", "peak_rss_mib"), n), "{:.0f}")]
        rows.append(row)
    table("per 100k Python lines (cold: index+search; s = wall seconds, cpu = CPU seconds, MiB = peak RSS)",
          ["tree", "lines", "cs cold s", "cs cold cpu", "cs cold MiB", "sb cold s", "sb cold cpu",
           "sb cold MiB", "cs warm s", "cs warm MiB"], rows, out)

    rows = []
    for res in results:
        row = [res.key]
        for run, figure in (("cold", "wall_s"), ("cold", "cpu_s"), ("cold", "peak_rss_mib"),
                            ("warm", "wall_s"), ("warm", "cpu_s"), ("warm", "peak_rss_mib")):
            row.append(fmt(ratio(tool_figure(res, "codeseek", run, figure),
                                 tool_figure(res, "semble", run, figure)), "{:.2f}x"))
        rows.append(row)
    table("codeseek/semble",
          ["tree", "cold wall", "cold CPU", "cold RSS", "warm wall", "warm CPU", "warm RSS"], rows, out)

    checks = targets(results)
    if checks:
        print("\ntargets (issue 29):", file=out)
        for line in checks:
            print(f"  {line}", file=out)


def targets(results: Sequence[TreeResult]) -> list[str]:
    lines = []

    def check(name: str, value: float | None, limit: float, unit: str) -> None:
        if value is not None:
            lines.append(f"{name}: {value:.2f}{unit} (target <= {limit:g}{unit}): "
                         f"{'met' if value <= limit else 'MISSED'}")

    for res in results:
        cold = [ratio(tool_figure(res, "codeseek", "cold", f), tool_figure(res, "semble", "cold", f))
                for f in ("wall_s", "peak_rss_mib")]
        check(f"{res.key} cold wall codeseek/semble", cold[0], 1.2, "x")
        check(f"{res.key} cold peak RSS codeseek/semble", cold[1], 1.0, "x")
        if res.key in ("django-sdist", "transformers"):
            check(f"{res.key} warm search wall", tool_figure(res, "codeseek", "warm", "wall_s"), 0.5, " s")
            check(f"{res.key} warm search peak RSS",
                  tool_figure(res, "codeseek", "warm", "peak_rss_mib"), 150, " MiB")
        check(f"{res.key} graph --callers wall", res.med("codeseek/graph", "wall_s"), 0.5, " s")
    return lines


# ---------------------------------------------------------------------------------------------------


def parse_trees(text: str) -> list[str]:
    keys = [k.strip() for k in text.split(",") if k.strip()]
    unknown = [k for k in keys if k not in TREES]
    if unknown:
        raise argparse.ArgumentTypeError(f"unknown tree(s) {', '.join(unknown)}; known: {', '.join(TREES)}")
    return keys


def fetch_only(keys: Sequence[str], out: TextIO = sys.stdout) -> None:
    rows = []
    for key in keys:
        started = time.perf_counter()
        root = tree_path(TREES[key])
        files, lines = count_python_lines(root)
        rows.append([key, str(root), f"{files:,}", f"{lines:,}", f"{time.perf_counter() - started:.1f}"])
    table("trees (fetched and cached)", ["tree", "folder", "py files", "py lines", "s"], rows, out)


def blas_note(tools: Tools, keep_blas_env: bool) -> str:
    """Which OpenBLAS kernel each tool ran, and what became of this shell's overrides."""
    kernels = f"OpenBLAS kernel: codeseek {tools.kernels['codeseek']}, semble {tools.kernels['semble']}"
    present = [f"{k}={os.environ[k]}" for k in BLAS_OVERRIDES if k in os.environ]
    if not present:
        return kernels
    what = "kept (--keep-blas-env)" if keep_blas_env else "dropped for both tools' commands"
    return f"{kernels}; this shell's {', '.join(present)} {what}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--trees", type=parse_trees, default=["requests", "django"],
                        help=f"comma-separated, of {','.join(TREES)} (default: requests,django)")
    parser.add_argument("--rounds", type=int, default=3, help="cold rounds per tool and tree (default 3)")
    parser.add_argument("--fetch-only", action="store_true", help="download the trees, print line counts")
    parser.add_argument("--json", metavar="FILE", help="also write every run's figures here")
    parser.add_argument("--keep-blas-env", action="store_true",
                        help=f"run both tools with this shell's {' and '.join(BLAS_OVERRIDES)} (by default "
                             "dropped: they make a current numpy run an older kernel)")
    args = parser.parse_args(argv)
    if args.fetch_only:
        fetch_only(args.trees)
        return 0
    if not set_child_subreaper():
        log("warning: could not become a child subreaper; orphaned workers' last CPU figures are approximate")
    from bench.peer_setup import bench_home

    bench_home().mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix="scale-", dir=bench_home()))
    try:
        tools = Tools(work, args.keep_blas_env)
        log(f"codeseek {tools.codeseek}; semble {tools.semble}; model {tools.model_source}")
        log(blas_note(tools, args.keep_blas_env))
        results = []
        for key in args.trees:
            results.append(bench_tree(TREES[key], tools, args.rounds, work))
            if len(args.trees) > 1:
                report(results[-1:])  # each tree as it finishes; the whole report again at the end
                print("\n" + "=" * 100, flush=True)
        report(results)
        print(f"\nmodel: {tools.model_source} (both tools); cold = `codeseek search Q --root R --index-dir "
              "NEW` vs `semble search Q R -k 10` on an empty cache. Shared 2-core machine: read ratios.")
        print(blas_note(tools, args.keep_blas_env))
        if args.json:
            Path(args.json).write_text(json.dumps([asdict(r) for r in results], indent=1))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
