"""Query sets for retrieval evaluation: loading the three JSON formats and scoring a ranked list.

Formats read:
- the public seed set (`{"corpus": "requests-2.32.3", "queries": [{"id", "query", "target": {"path",
  "symbol", "line"}}]}`): a hit at rank r when the r-th result's path equals the target path and its
  line range contains the target line; hit@1/5/10 and MRR.
- the dev sets in the semble benchmark style (a list of `{"query", "relevant": [...], "secondary": [...],
  "category"}`, the corpus named by the file name `dev-<name>-<version>.json`): NDCG@10 exactly as
  /work/shared/eval/README.md describes (each relevant or secondary target marks the rank of the first
  result whose path ends with it, and whose lines overlap it for a `path:start-end` target; ideal DCG of
  min(10, targets) ones).
- one repository of the 43-repository semble-dev set (`load_semble_repo`: an annotation file of the
  same format, its corpus a git checkout laid out by shared/eval/semble-dev/checkout.sh); NDCG@10.
- our own sets (`bench/queries/*.json`): `{"name", "corpus": {"kind": "sdist"|"npm"|"deb"|"self", "name",
  "version", "root": subfolder or ""}, "prefix": "", "queries": [{"id", "query", "category", "targets":
  [{"path", "line"} | {"path", "symbol"} | {"path", "start", "end"} | {"path"}]}]}`; scored like the
  seed set (any target counts), plus NDCG@10 over the targets.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

_DEV_NAME = re.compile(r"^dev-(?P<name>[A-Za-z0-9_.]+?)-(?P<version>\d[\w.]*)\.json$")
_RANGE = re.compile(r"^(?P<path>.+?):(?P<start>\d+)-(?P<end>\d+)$")


@dataclass(frozen=True)
class Target:
    """A place that answers a query: a file, a line in it, or a line range."""

    path: str
    line: int | None = None
    start: int | None = None
    end: int | None = None
    symbol: str | None = None  # a definition's qualified name: the evaluator fills in its line

    def matches(self, path: str, start_line: int, end_line: int, suffix: bool = False) -> bool:
        """Does a result at path:start_line-end_line hit this target?"""
        if suffix:
            if not (path == self.path or path.endswith("/" + self.path)):
                return False
        elif path != self.path:
            return False
        if self.line is not None:
            return start_line <= self.line <= end_line
        if self.start is not None and self.end is not None:
            return start_line <= self.end and self.start <= end_line
        return True


@dataclass
class EvalQuery:
    id: str
    query: str
    targets: list[Target]
    secondary: list[Target] = field(default_factory=list)
    category: str = ""


@dataclass
class QuerySet:
    """A named set of queries over one corpus."""

    name: str
    corpus: dict[str, str]  # kind (sdist | npm | deb | self), name, version, root (subfolder searched)
    queries: list[EvalQuery]
    metric: str = "rank"  # "rank": hit@k + MRR (line targets); "ndcg": NDCG@10 (file targets)
    prefix: str = ""  # prepended to result paths before matching (when searching a subfolder)
    published: dict[str, float] = field(default_factory=dict)
    source: str = ""
    language: str = ""  # the corpus's main language (the semble-dev set's per-language tables)


def _target(raw: Any) -> Target:
    if isinstance(raw, str):
        m = _RANGE.match(raw)
        if m:
            return Target(m["path"], start=int(m["start"]), end=int(m["end"]))
        return Target(raw)
    start, end = raw.get("start", raw.get("start_line")), raw.get("end", raw.get("end_line"))
    return Target(raw["path"], raw.get("line"), start, end, raw.get("symbol"))


# semble's published NDCG@10 per repository (shared/eval/README.md).
PUBLISHED = {
    "pydantic": {"semble": 0.7918, "CodeRankEmbed hybrid": 0.7596, "CodeRankEmbed dense": 0.6944},
    "model2vec": {"semble": 0.6926, "CodeRankEmbed hybrid": 0.7298, "CodeRankEmbed dense": 0.6624},
}


def semble_queries(name: str, data: Sequence[Mapping[str, Any]]) -> list[EvalQuery]:
    """The queries of one annotation file of the semble benchmark (`relevant`, `secondary`, `category`)."""
    return [EvalQuery(f"{name}-{i + 1:02d}", q["query"], [_target(t) for t in q.get("relevant", [])],
                      [_target(t) for t in q.get("secondary", [])], q.get("category", ""))
            for i, q in enumerate(data)]


def load_semble_repo(annotations: Path, name: str, language: str, root: str, revision: str,
                     published: float | None = None) -> QuerySet:
    """One repository of the semble-dev set: its sources are searched under `root` (a subfolder of the
    checkout, "" for the whole tree); targets are relative to the checkout, so results get `root/`."""
    data = json.loads(Path(annotations).read_text(encoding="utf-8"))
    corpus = {"kind": "semble-dev", "name": name, "version": revision[:12], "root": root}
    return QuerySet(name, corpus, semble_queries(name, data), "ndcg", prefix=f"{root}/" if root else "",
                    published={"semble": published} if published is not None else {},
                    source=str(annotations), language=language)


def load_set(path: Path) -> QuerySet:
    """Read any of the three formats."""
    data = json.loads(Path(path).read_text(encoding="utf-8"))
    if isinstance(data, list):
        m = _DEV_NAME.match(Path(path).name)
        if not m:
            raise ValueError(f"{path}: a dev set must be named dev-<package>-<version>.json")
        name, version = m["name"], m["version"]
        queries = semble_queries(name, data)
        corpus = {"kind": "sdist", "name": name, "version": version, "root": name}
        return QuerySet(f"dev-{name}", corpus, queries, "ndcg", prefix=f"{name}/",
                        published=PUBLISHED.get(name, {}), source=str(path))
    if isinstance(data.get("corpus"), str):  # the public seed format
        name, _, version = data["corpus"].rpartition("-")
        queries = [EvalQuery(q["id"], q["query"], [_target(q["target"])],
                             category=q.get("category", ""))
                   for q in data["queries"]]
        return QuerySet(Path(path).stem, {"kind": "sdist", "name": name, "version": version, "root": ""},
                        queries, "rank", source=str(path))
    corpus = dict(data["corpus"])
    corpus.setdefault("root", "")
    queries = [EvalQuery(q["id"], q["query"], [_target(t) for t in q["targets"]],
                         [_target(t) for t in q.get("secondary", [])], q.get("category", ""))
               for q in data["queries"]]
    return QuerySet(data.get("name", Path(path).stem), corpus, queries, data.get("metric", "rank"),
                    prefix=data.get("prefix", ""), source=str(path))


# ---------------------------------------------------------------------------------------------------
# Scoring over results: sequences of mappings with path, start_line, end_line.


def _located(result: Mapping[str, Any], prefix: str) -> tuple[str, int, int]:
    """A result's path and lines: the whole definition it stands for (`full_start_line`..), not just
    the window of a long one it shows (issue 9: the header names it, the window is for reading)."""
    start = result.get("full_start_line", result["start_line"])
    end = result.get("full_end_line", result["end_line"])
    return prefix + str(result["path"]), int(start), int(end)


def first_rank(results: Sequence[Mapping[str, Any]], targets: Sequence[Target], prefix: str = "",
               suffix: bool = False) -> int | None:
    """1-based rank of the first result hitting any target, or None."""
    for rank, result in enumerate(results, 1):
        path, start, end = _located(result, prefix)
        if any(t.matches(path, start, end, suffix) for t in targets):
            return rank
    return None


def ndcg_at_10(results: Sequence[Mapping[str, Any]], targets: Sequence[Target], prefix: str = "") -> float:
    """NDCG@10 as the semble benchmark computes it (binary gains, suffix path match)."""
    top = [_located(r, prefix) for r in results[:10]]
    ranks: set[int] = set()
    for target in targets:
        for rank, (path, start, end) in enumerate(top, 1):
            if target.matches(path, start, end, suffix=True):
                ranks.add(rank)
                break
    if not targets:
        return 0.0
    dcg = sum(1.0 / math.log2(rank + 1) for rank in ranks)
    ideal = sum(1.0 / math.log2(i + 1) for i in range(1, min(10, len(targets)) + 1))
    return dcg / ideal


@dataclass
class Totals:
    """hit@1/5/10 counts and MRR (over the top 10) for one column."""

    n: int = 0
    hit1: int = 0
    hit5: int = 0
    hit10: int = 0
    rr: float = 0.0

    def add(self, rank: int | None) -> None:
        self.n += 1
        if rank is None:
            return
        self.hit1 += rank <= 1
        self.hit5 += rank <= 5
        self.hit10 += rank <= 10
        self.rr += 1.0 / rank if rank <= 10 else 0.0

    @property
    def mrr(self) -> float:
        return self.rr / self.n if self.n else 0.0

    def as_dict(self) -> dict[str, float]:
        return {"n": self.n, "hit@1": self.hit1, "hit@5": self.hit5, "hit@10": self.hit10,
                "mrr": round(self.mrr, 4)}
