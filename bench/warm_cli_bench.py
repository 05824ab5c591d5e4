"""Warm command-line calls, this checkout against another (issue 29): wall time and peak RSS per call.

    python bench/warm_cli_bench.py --base /tmp/wt-before --tree django-sdist
    python bench/warm_cli_bench.py --base /tmp/wt-before --tree transformers --runs 3
    python bench/warm_cli_bench.py --base /tmp/wt-before --root DIR --runs 5   # Django's names asked

`--base` is another checkout of codeseek (`git worktree add /tmp/wt-before REV`); both run with this
checkout's virtual environment, each on its own copy of one index of the tree (built here first, then
copied), so neither rebuilds what the other saved. Each call runs once per side to warm up (a code
change rebuilds the saved structures), then `--runs` times, interleaved; medians of wall seconds and
peak RSS (`/usr/bin/time`) are printed with the ratio now/base, and whether both sides answered the
same (the locations of a search's results, a graph command's output). Both checkouts are byte-compiled
first and the calls may write bytecode (`PYTHONDONTWRITEBYTECODE` is dropped): a fresh worktree would
otherwise compile every module on every call (~0.25 s).
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
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from bench.corpora import fetch_sdist  # noqa: E402

TREES = {"django": ("Django", "5.1.4", "django"), "django-sdist": ("Django", "5.1.4", ""),
         "requests": ("requests", "2.32.3", ""), "transformers": ("transformers", "4.46.3", "")}
PACKAGES = ("indexing", "graph", "retrievers", "lsp_server")


def calls_for(symbol: str, method: str, question: str, foreign: str = "Session.request") -> list[list[str]]:
    """The calls made on a tree: `symbol`'s graph, `method`'s callees, searches for both, a question
    and `foreign`, a dotted name the tree does not define (another library's: `graph.flat_names`)."""
    return [["graph", symbol, "--callers"], ["graph", symbol, "--impact", "2"],
            ["graph", symbol, "--callees"], ["graph", method, "--callees", "--json"],
            ["search", method, "--no-server", "--json"],
            ["search", f"who calls {symbol}", "--no-server", "--json"],
            ["search", f"what breaks if I change {symbol}", "--no-server", "--json"],
            ["search", symbol, "--no-server", "--json"],
            ["search", question, "--no-server", "--json"],
            ["search", foreign, "--no-server", "--json"]]


DJANGO_CALLS = calls_for("get_or_create", "QuerySet.filter",
                         "where do we tell listeners that a row was written")
# transformers: a name 46 model files define (its callers are many definitions' sites) and a class method
CALLS = {"transformers": calls_for("apply_rotary_pos_emb", "PreTrainedModel.from_pretrained",
                                   "where are the weights of a checkpoint loaded into a model")}


def call(tree: Path, index: Path, root: Path, args: list[str]) -> tuple[float, float, str]:
    """(wall seconds, peak RSS MiB, the answer: `answer`) of one `codeseek ARGS` run from checkout
    `tree`."""
    env = dict(os.environ, HF_HUB_OFFLINE="1", PYTHONPATH=str(tree))
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # both sides run compiled, as an installed package does
    proc = subprocess.run(["/usr/bin/time", "-f", "%e %M", sys.executable, "-m", "lsp_server.cli", *args,
                           "--root", str(root), "--index-dir", str(index)],
                          cwd=tree, env=env, capture_output=True, text=True, check=False)
    wall, kib = proc.stderr.strip().splitlines()[-1].split()
    return float(wall), int(kib) / 1024, answer(proc.stdout)


def answer(stdout: str) -> str:
    """What a call answered: a JSON search's result locations and scores, else its whole output."""
    try:
        results = json.loads(stdout)["results"]
    except (ValueError, KeyError, TypeError):
        return stdout
    return json.dumps([(r.get("path"), r.get("line"), r.get("score")) for r in results])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--base", required=True, help="the other checkout (a git worktree)")
    parser.add_argument("--tree", choices=sorted(TREES), default="django-sdist")
    parser.add_argument("--root", help="a tree of your own instead of --tree")
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args(argv)
    if args.root:
        root = Path(args.root).resolve()
    else:
        name, version, sub = TREES[args.tree]
        root = fetch_sdist(name, version) / sub if sub else fetch_sdist(name, version)
    sides = {"base": Path(args.base).resolve(), "now": REPO}
    with tempfile.TemporaryDirectory(prefix="cs-warm-") as tmp:
        built = Path(tmp) / "built"
        subprocess.run([sys.executable, "-m", "lsp_server.cli", "index", "--root", str(root),
                        "--index-dir", str(built), "--quiet"],
                       cwd=REPO, env=dict(os.environ, HF_HUB_OFFLINE="1"), check=True)
        indexes = {side: Path(tmp) / side for side in sides}
        for index in indexes.values():
            shutil.copytree(built, index)
        for tree in sides.values():  # without this a checkout never run before compiles on every call
            subprocess.run([sys.executable, "-m", "compileall", "-q", *(str(tree / p) for p in PACKAGES)],
                           check=False, capture_output=True)
        print(f"{root}: base {sides['base']}, now {REPO}; medians of {args.runs}")
        for cargs in CALLS.get("" if args.root else args.tree, DJANGO_CALLS):
            answers = {side: call(tree, indexes[side], root, cargs)[2] for side, tree in sides.items()}
            got: dict[str, list[tuple[float, float, str]]] = {side: [] for side in sides}
            for _ in range(args.runs):
                for side, tree in sides.items():
                    got[side].append(call(tree, indexes[side], root, cargs))
            wall = {s: statistics.median(w for w, _, _ in v) for s, v in got.items()}
            rss = {s: statistics.median(m for _, m, _ in v) for s, v in got.items()}
            same = answers["base"] == answers["now"] and all(a == answers["now"] for v in got.values()
                                                             for _, _, a in v)
            label = " ".join(cargs[:2]) + (" " + cargs[2] if cargs[0] == "graph" else "")
            print(f"{label:50s} base {wall['base']:5.2f} s {rss['base']:5.0f} MiB | now {wall['now']:5.2f} s "
                  f"{rss['now']:5.0f} MiB | x{wall['now'] / wall['base']:.2f} wall, "
                  f"x{rss['now'] / rss['base']:.2f} RSS | {'same answers' if same else 'ANSWERS DIFFER'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
