"""codeseek beside semble 0.7.0 with the same static model, in one run: cold index, warm queries, RSS.

    python bench/peer_bench.py                                # requests 2.32.3, Flask 3.0.3, Django 5.1.4
    python bench/peer_bench.py --corpus requests --reps 3
    python bench/peer_bench.py --corpus django --django-sdist # django/ and the whole Django sdist

semble is installed into its own venv under the user cache dir (`$XDG_CACHE_HOME/codeseek-bench/
semble-0.7.0`, made on the first run, reused after; never a codeseek dependency). Both tools use one
static model: codeseek's own (`codeseek model --path`, else `retrievers.semantic.static_model`), or,
where this
checkout has no static tier, a model2vec model distilled here from the packaged all-MiniLM-L6-v2
(offline) that semble gets while codeseek keeps its default, which the table says. semble reads it
through SEMBLE_MODEL_NAME / `model_path`; its own model is on a hub this machine cannot reach.

Per corpus and repetition, the tools alternate (which goes first flips every repetition):
- cold index with every vector: a child process (bench/peer_worker.py) builds a fresh index
  (codeseek `SearchEngine.refresh(embed=True)` on a new index folder, with the options `codeseek
  search` uses: every CPU embeds, and the pickles saved beside the index are written when the engine
  closes, after the warm queries; semble `SembleIndex.from_path` with an empty cache folder, which
  writes no cache at all); spawn-to-ready wall time, the build alone, and the child's peak RSS
  (ru_maxrss from os.wait4 in a small launcher, so the bench's own pages do not count), then the
  same process times the warm queries in process (p50/p95, and each query's own p50 in a second
  table: a tool whose queries split into fast and slow ones has its overall p50 where they divide);
- cold CLI (`--cold-cli`): `codeseek search Q` on a new index folder vs `semble search Q` on an empty
  cache (parse + embed + answer, what a new user waits for), wall and peak RSS;
- warm CLI: `codeseek search Q` on the built index vs `semble search Q` with its cache filled, wall.
Figures are medians over repetitions; ratios are codeseek/semble, printed beside the issue's targets.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from bench.peer_setup import bench_home, codeseek_command, ensure_semble, static_model  # noqa: E402

WORKER = HERE / "peer_worker.py"


@dataclass(frozen=True)
class Corpus:
    key: str
    package: str
    version: str
    sub: str  # the folder indexed inside the unpacked sdist ("" = all of it)


CORPORA = {
    "requests": Corpus("requests", "requests", "2.32.3", ""),
    "flask": Corpus("flask", "flask", "3.0.3", ""),
    "django": Corpus("django", "Django", "5.1.4", "django"),
    "django-sdist": Corpus("django-sdist", "Django", "5.1.4", ""),
}
# Written for this bench (not eval queries): natural-language questions and identifiers per corpus.
QUERIES = {
    "requests": ["how are redirects followed and when is the method changed",
                 "where are proxy settings read from the environment",
                 "retry a request after a connection error", "check the server's TLS certificate",
                 "Session.request", "HTTPAdapter", "merge_environment_settings", "extract_cookies_to_jar"],
    "flask": ["how does a blueprint register its routes on the app",
              "where is the application context pushed for a request",
              "load configuration from an environment variable", "sign the session cookie",
              "url_for", "send_from_directory", "Flask.make_response", "jsonify"],
    "django": ["how are database migrations applied in order", "validate the CSRF token of a POST request",
               "hash a password with a salt", "render a template with a context",
               "QuerySet.filter", "get_object_or_404", "ModelAdmin", "reverse"],
}
QUERIES["django-sdist"] = QUERIES["django"]
# issue 8's targets for this machine: (figure, "abs" limit on codeseek's median | "ratio" limit on
# codeseek/semble). Peak RSS "under 400 MB" is 381.5 MiB.
TARGETS: dict[str, list[tuple[str, str, float]]] = {
    "requests": [("cold_s", "abs", 2.0), ("cold_s", "ratio", 2.0), ("p50_ms", "ratio", 1.0)],
    "flask": [("cold_s", "ratio", 2.0), ("p50_ms", "ratio", 1.0)],
    "django": [("cold_s", "abs", 30.0), ("cold_s", "ratio", 2.0), ("p50_ms", "ratio", 1.0),
               ("p50_ms", "abs", 10.0), ("warm_cli_s", "abs", 1.0), ("tree_rss_mib", "abs", 381.5)],
    "django-sdist": [("cold_s", "abs", 60.0), ("cold_s", "ratio", 2.0)],
}


@dataclass
class Samples:
    """Measurements of one tool on one corpus, each a list over repetitions (or queries)."""

    values: dict[str, list[float]] = field(default_factory=dict)
    notes: dict[str, Any] = field(default_factory=dict)

    def add(self, name: str, value: float) -> None:
        self.values.setdefault(name, []).append(value)

    def median(self, name: str) -> float | None:
        got = self.values.get(name)
        return statistics.median(got) if got else None


# A forked child's peak RSS counts the parent's pages until it execs, so the measured command is
# started by this small interpreter (no site, ~10 MiB), which reports its child's ru_maxrss (KiB) and
# the peak of the summed RSS of the child and every process below it, sampled every 50 ms (codeseek's
# parse workers are processes of their own: ru_maxrss does not see them).
RSS_WRAPPER = """import os, sys, time
pid = os.fork()
if pid == 0:
    os.execvp(sys.argv[2], sys.argv[2:])
page = os.sysconf("SC_PAGE_SIZE") // 1024
def tree_kib():
    parent = {}
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                with open("/proc/" + name + "/stat", "rb") as fh:
                    parent[int(name)] = int(fh.read().rsplit(b")", 1)[1].split()[1])
            except (OSError, ValueError, IndexError):
                pass
    members, grew = {pid}, True
    while grew:
        grew = False
        for proc, up in parent.items():
            if up in members and proc not in members:
                members.add(proc)
                grew = True
    total = 0
    for proc in members:
        try:
            with open("/proc/%d/statm" % proc, "rb") as fh:
                total += int(fh.read().split()[1]) * page
        except (OSError, ValueError, IndexError):
            pass
    return total
peak = 0
while True:
    done, status, usage = os.wait4(pid, os.WNOHANG)
    if done:
        break
    peak = max(peak, tree_kib())
    time.sleep(0.05)
with open(sys.argv[1], "w") as fh:
    fh.write("%d %d" % (usage.ru_maxrss, max(peak, usage.ru_maxrss)))
sys.exit(os.waitstatus_to_exitcode(status))
"""


def measure(cmd: list[str], env: dict[str, str]) -> tuple[float, float, int, str, str, float, float]:
    """Run a child; (wall s, peak RSS MiB, exit status, stdout, stderr tail, spawn time, peak RSS MiB of
    the child's whole process tree)."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err, \
            tempfile.NamedTemporaryFile(suffix=".rss") as rss:
        spawned = time.time()
        started = time.perf_counter()
        proc = subprocess.run([sys.executable, "-I", "-S", "-c", RSS_WRAPPER, rss.name, *cmd], stdout=out,
                              stderr=err, env=env, cwd=str(REPO), check=False)
        wall = time.perf_counter() - started
        out.seek(0)
        err.seek(0)
        raw = Path(rss.name).read_text().split()
        own, tree = (int(raw[0]) / 1024.0, int(raw[1]) / 1024.0) if len(raw) == 2 else (0.0, 0.0)
        return (wall, own, proc.returncode, out.read().decode("utf-8", "replace"),
                err.read().decode("utf-8", "replace")[-2000:], spawned, tree)


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


class Bench:
    """One run: the semble venv, the shared model, the environments of both tools' children."""

    def __init__(self, reps: int, repeat: int, cold_cli: bool) -> None:
        self.reps, self.repeat, self.cold_cli = reps, repeat, cold_cli
        self.semble_python = ensure_semble()
        self.model, self.model_source = static_model()
        base = dict(os.environ, HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1")
        base["PYTHONPATH"] = os.pathsep.join(p for p in (str(REPO), os.environ.get("PYTHONPATH", "")) if p)
        self.env_codeseek = base
        self.env_semble = {k: v for k, v in base.items() if k != "PYTHONPATH"}
        self.env_semble["SEMBLE_MODEL_NAME"] = str(self.model)
        self.work = bench_home() / "runs"
        self.work.mkdir(parents=True, exist_ok=True)

    def _scratch(self, name: str) -> Path:
        path = Path(tempfile.mkdtemp(prefix=f"{name}-", dir=self.work))
        return path

    def _worker(self, tool: str, root: Path, qfile: Path, samples: Samples, scratch: Path) -> None:
        if tool == "codeseek":
            cmd = [sys.executable, str(WORKER), "codeseek", str(root), "--index-dir", str(scratch / "index")]
            env = self.env_codeseek
        else:
            cmd = [str(self.semble_python), str(WORKER), "semble", str(root), "--model", str(self.model)]
            env = dict(self.env_semble, SEMBLE_CACHE_LOCATION=str(scratch / "semble-cache"))
        cmd += ["--queries", str(qfile), "--repeat", str(self.repeat)]
        wall, rss, code, out, err, spawned, tree = measure(cmd, env)
        if code != 0:
            raise SystemExit(f"{tool} worker failed ({code}) on {root}:\n{err}")
        data = json.loads(out.strip().splitlines()[-1])
        if data.get("loaded_from_disk"):
            raise SystemExit(f"{tool} loaded a cached index where a cold build was meant ({scratch})")
        samples.add("cold_s", data["ready_at"] - spawned)
        samples.add("build_s", data["build_s"])
        samples.add("rss_mib", rss)
        samples.add("tree_rss_mib", tree)
        samples.add("p50_ms", percentile(data["latencies_ms"], 0.5))
        samples.add("p95_ms", percentile(data["latencies_ms"], 0.95))
        latencies, n = data["latencies_ms"], len(json.loads(qfile.read_text()))
        for i in range(n):  # the worker times pass after pass over the queries, in their order
            samples.add(f"{QUERY_P50}{i}", percentile(latencies[i::n], 0.5))
        samples.notes.update(chunks=data["chunks"], embedded=data["embedded"], model=data["model"],
                             top=data["top"])

    def _cli(self, tool: str, root: Path, query: str, scratch: Path) -> tuple[float, float]:
        if tool == "codeseek":
            cmd = [*codeseek_command(), "search", query, "--root", str(root),
                   "--index-dir", str(scratch / "index")]
            env = self.env_codeseek
        else:
            cmd = [str(self.semble_python.parent / "semble"), "search", query, str(root), "-k", "10"]
            env = dict(self.env_semble, SEMBLE_CACHE_LOCATION=str(scratch / "semble-cache"))
        wall, rss, code, _, err, _, _ = measure(cmd, env)
        if code != 0:
            raise SystemExit(f"{tool} search failed ({code}) on {root}:\n{err}")
        return wall, rss

    def run_corpus(self, corpus: Corpus) -> dict[str, Samples]:
        from bench.corpora import fetch_sdist

        base = fetch_sdist(corpus.package, corpus.version)
        root = base / corpus.sub if corpus.sub else base
        queries = QUERIES[corpus.key]
        qfile = self.work / f"queries-{corpus.key}.json"
        qfile.write_text(json.dumps(queries))
        samples = {"codeseek": Samples(), "semble": Samples()}
        for rep in range(self.reps):
            order = ("codeseek", "semble") if rep % 2 == 0 else ("semble", "codeseek")
            scratch = {tool: self._scratch(f"{corpus.key}-{tool}") for tool in order}
            try:
                for tool in order:
                    print(f"  {corpus.key} rep {rep + 1}/{self.reps}: {tool} cold index + warm queries",
                          file=sys.stderr, flush=True)
                    self._worker(tool, root, qfile, samples[tool], scratch[tool])
                if self.cold_cli:
                    for tool in order:
                        fresh = self._scratch(f"{corpus.key}-{tool}-cli")
                        wall, rss = self._cli(tool, root, queries[0], fresh)
                        samples[tool].add("cold_cli_s", wall)
                        samples[tool].add("cold_cli_rss_mib", rss)
                        shutil.rmtree(fresh, ignore_errors=True)
                self._cli("semble", root, queries[0], scratch["semble"])  # fills semble's cache (untimed)
                for i, query in enumerate(queries):
                    pair = order if i % 2 == 0 else order[::-1]
                    for tool in pair:
                        wall, _ = self._cli(tool, root, query, scratch[tool])
                        samples[tool].add("warm_cli_s", wall)
            finally:
                for path in scratch.values():
                    shutil.rmtree(path, ignore_errors=True)
        return samples


ROWS = [  # (key, label, unit scale, format)
    ("cold_s", "cold index incl. vectors, spawn to ready (s)", 1.0, "{:.2f}"),
    ("build_s", "  of which the build after imports (s)", 1.0, "{:.2f}"),
    ("rss_mib", "peak RSS of the cold-index process (MiB)", 1.0, "{:.0f}"),
    ("tree_rss_mib", "  with its worker processes, summed (MiB)", 1.0, "{:.0f}"),
    ("p50_ms", "warm query in process p50 (ms)", 1.0, "{:.2f}"),
    ("p95_ms", "warm query in process p95 (ms)", 1.0, "{:.2f}"),
    ("cold_cli_s", "cold CLI search, new index (s)", 1.0, "{:.2f}"),
    ("cold_cli_rss_mib", "peak RSS of the cold CLI search (MiB)", 1.0, "{:.0f}"),
    ("warm_cli_s", "warm CLI search process, median over queries (s)", 1.0, "{:.2f}"),
]


QUERY_P50 = "query_p50_ms:"  # + the query's index: its own in-process p50


def per_query_table(corpus: Corpus, cs: Samples, sb: Samples) -> tuple[Any, list[dict[str, Any]]]:
    """Each query's in-process p50 for both tools (medians over the runs): where the overall p50
    falls depends on how each tool's fast and slow queries split."""
    from rich.table import Table

    table = Table(title=f"{corpus.key}: warm query in process, p50 per query (ms)", title_justify="left")
    for name in ("query", "codeseek", "semble", "codeseek/semble"):
        table.add_column(name, justify="left" if name == "query" else "right")
    rows = []
    for i, query in enumerate(QUERIES[corpus.key]):
        a, b = cs.median(f"{QUERY_P50}{i}"), sb.median(f"{QUERY_P50}{i}")
        if a is None or b is None:
            continue
        table.add_row(query, f"{a:.2f}", f"{b:.2f}", f"{a / b:.2f}x" if b else "-")
        rows.append({"query": query, "codeseek": a, "semble": b})
    return table, rows


def report(corpus: Corpus, samples: dict[str, Samples], model_note: str) -> dict[str, Any]:
    from rich.console import Console
    from rich.table import Table

    cs, sb = samples["codeseek"], samples["semble"]
    title = (f"{corpus.package} {corpus.version}{'/' + corpus.sub if corpus.sub else ' (whole sdist)'}: "
             f"codeseek {cs.notes.get('chunks')} chunks ({cs.notes.get('embedded')} embedded), semble "
             f"{sb.notes.get('chunks')} chunks; medians; {model_note}")
    table = Table(title=title, title_justify="left")
    for name in ("what", "codeseek", "semble", "codeseek/semble"):
        table.add_column(name, justify="left" if name == "what" else "right")
    out: dict[str, Any] = {"corpus": corpus.key, "chunks": {"codeseek": cs.notes.get("chunks"),
                                                            "semble": sb.notes.get("chunks")}}
    for key, label, _, fmt in ROWS:
        a, b = cs.median(key), sb.median(key)
        if a is None or b is None:
            continue
        ratio = a / b if b else float("inf")
        table.add_row(label, fmt.format(a), fmt.format(b), f"{ratio:.2f}x")
        out[key] = {"codeseek": a, "semble": b, "ratio": ratio, "codeseek_all": cs.values[key],
                    "semble_all": sb.values[key]}
    console = Console(width=150)
    console.print(table)
    queries, out["per_query_p50_ms"] = per_query_table(corpus, cs, sb)
    console.print(queries)
    checks = []
    for key, kind, limit in TARGETS[corpus.key]:
        if key not in out:
            continue
        value = out[key]["codeseek"] if kind == "abs" else out[key]["ratio"]
        shown = f"{key} {value:.2f}" if kind == "abs" else f"{key} ratio {value:.2f}x"
        checks.append(f"{shown} (target <= {limit:g}): {'met' if value <= limit else 'MISSED'}")
    out["targets"] = checks
    console.print("targets (issue 8): " + "; ".join(checks))
    out["top"] = {"codeseek": cs.notes.get("top"), "semble": sb.notes.get("top")}
    out["model"] = {"codeseek": cs.notes.get("model"), "semble": sb.notes.get("model")}
    console.print(f"models: codeseek {out['model']['codeseek']}; semble {out['model']['semble']}")
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", action="append", choices=sorted(CORPORA), default=[],
                        help="repeatable; default: requests, flask, django")
    parser.add_argument("--django-sdist", action="store_true", help="also the whole Django sdist")
    parser.add_argument("--reps", type=int, default=3, help="cold repetitions per tool (default 3)")
    parser.add_argument("--repeat", type=int, default=5, help="timed passes over the queries in process")
    parser.add_argument("--cold-cli", action="store_true", help="also time a cold `search` process")
    parser.add_argument("--json", metavar="FILE")
    args = parser.parse_args(argv)
    keys = args.corpus or ["requests", "flask", "django"]
    if args.django_sdist and "django-sdist" not in keys:
        keys.append("django-sdist")
    bench = Bench(args.reps, args.repeat, args.cold_cli)
    print(f"model: {bench.model} ({bench.model_source}); semble venv: {bench.semble_python.parent.parent}",
          file=sys.stderr, flush=True)
    note = "same static model" if bench.model_source != "distilled here" else (
        "semble: a model distilled here; codeseek: its default model (no static tier in this checkout)")
    reports = []
    for key in keys:
        reports.append(report(CORPORA[key], bench.run_corpus(CORPORA[key]), note))
    print("machine: 2 shared cores, other jobs running: figures are noisy; compare ratios from one run.")
    if args.json:
        Path(args.json).write_text(json.dumps({"model": str(bench.model), "model_source": bench.model_source,
                                               "reports": reports}, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
