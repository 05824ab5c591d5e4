"""Check the vocabulary-gap query sets (`bench/queries/gap-*.json`) against the rules they are written to.

A vocabulary-gap question is one grep cannot answer because the code uses other words. Each query of such a
set carries `obvious_phrase` (the words a user would grep for first) and targets `{"path", "symbol"}`.
Rules, checked on the unpacked corpus (fetched through `bench/corpora.py`, as `bench/eval_public.py` does):

  (a) the obvious phrase occurs nowhere under the set's root (a case-insensitive substring search over every
      text file: the effect of `grep -rniF`);
  (b) the query contains no target identifier: not the full symbol, not its last component (whole words,
      any case), and not the camelCase/snake_case pieces of either joined by spaces when it has 2+ pieces;
  (c) the query shares no 4 consecutive words (lowercased, punctuation stripped) with a target's doc text:
      its whole docstring and the comments directly above it, found with codeseek's own parser (only the
      doc text; a definition without one has nothing to copy);
  (d) every target symbol is defined in its file (the real tree-sitter grammars, as the index sees it).

    python bench/vocab_gap_check.py [FILES...]     # default: every bench/queries/gap-*.json

Exit status 1 with one line per violation; 0 and a count when every query passes.
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from tree_sitter import Node  # noqa: E402

from indexing.doc_text import leading_comment_nodes, node_text  # noqa: E402
from indexing.languages import (  # noqa: E402
    LangSpec,
    get_parser,
    grammar_for_source,
    language_for_path,
    source_for_grammar,
    spec_for,
)
from indexing.symbols import DefNode, body_of, extract  # noqa: E402

NGRAM = 4
_BINARY_SNIFF = 8192
_PIECE = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+")


@dataclass(frozen=True)
class Violation:
    """One broken rule: which set and query, which rule, and what broke it."""

    source: str
    query_id: str
    rule: str
    detail: str

    def __str__(self) -> str:
        return f"{self.source}: {self.query_id}: ({self.rule}) {self.detail}"


# ---------------------------------------------------------------------------------------------------
# (a) the obvious phrase is nowhere in the corpus


def text_files(root: Path) -> Iterator[Path]:
    """Every file under root that is text (no NUL byte in its first 8 KiB), in a stable order."""
    for path in sorted(root.rglob("*")):
        if not path.is_file() or path.is_symlink():
            continue
        try:
            with path.open("rb") as fh:
                head = fh.read(_BINARY_SNIFF)
        except OSError:
            continue
        if b"\0" not in head:
            yield path


class CorpusText:
    """The lowercased text of every text file under a root, read once, for phrase look-ups."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.files: list[tuple[str, str]] = []
        for path in text_files(root):
            text = path.read_bytes().decode("utf-8", errors="replace").lower()
            self.files.append((path.relative_to(root).as_posix(), text))

    @classmethod
    def from_texts(cls, texts: dict[str, str]) -> CorpusText:
        """A corpus held in memory (the checker's own tests)."""
        corpus = cls.__new__(cls)
        corpus.root = Path(".")
        corpus.files = [(name, text.lower()) for name, text in sorted(texts.items())]
        return corpus

    def where(self, phrase: str, limit: int = 3) -> list[str]:
        """Files containing phrase, any case (at most limit of them)."""
        needle = phrase.lower()
        found = []
        for name, text in self.files:
            if needle in text:
                found.append(name)
                if len(found) >= limit:
                    break
        return found


def check_phrase(phrase: str, corpus: CorpusText) -> str | None:
    if not phrase.strip():
        return "no obvious_phrase"
    hits = corpus.where(phrase)
    return f"obvious phrase {phrase!r} occurs in {', '.join(hits)}" if hits else None


# ---------------------------------------------------------------------------------------------------
# (b) no target identifier in the query


def pieces(identifier: str) -> list[str]:
    """camelCase / snake_case / dotted pieces, lowercased: `isURLSameOrigin` -> is, url, same, origin."""
    return [p.lower() for p in _PIECE.findall(identifier)]


def _word(text: str) -> str:
    return r"(?<![A-Za-z0-9_])" + text + r"(?![A-Za-z0-9_])"


def identifier_forms(symbol: str) -> list[tuple[str, re.Pattern[str]]]:
    """The forms of a symbol a query must not contain, each with its whole-word pattern (any case)."""
    last = symbol.rsplit(".", 1)[-1]
    forms: list[tuple[str, re.Pattern[str]]] = []
    for name in dict.fromkeys(n for n in (symbol, last, last.strip("_")) if n):
        forms.append((name, re.compile(_word(re.escape(name)), re.IGNORECASE)))
        parts = pieces(name)
        if len(parts) >= 2:
            joined = r"[\s\-]+".join(re.escape(p) for p in parts)
            forms.append((" ".join(parts), re.compile(_word(joined), re.IGNORECASE)))
    return forms


def check_identifiers(query: str, symbols: Iterable[str]) -> list[str]:
    problems = []
    for symbol in symbols:
        for form, pattern in identifier_forms(symbol):
            if pattern.search(query):
                problems.append(f"query names target {symbol} ({form!r})")
                break
    return problems


# ---------------------------------------------------------------------------------------------------
# (c) no 4 words in a row from a target's doc text


def words(text: str) -> list[str]:
    """Lowercased words with punctuation stripped (`don't,` -> `dont`); empty tokens dropped."""
    out = []
    for token in text.lower().split():
        token = re.sub(r"[^\w]|_", "", token)
        if token:
            out.append(token)
    return out


def shared_run(query: str, doc: str, n: int = NGRAM) -> str | None:
    """The first n consecutive words of the query that also occur consecutively in doc, or None."""
    q, d = words(query), words(doc)
    grams = {tuple(d[i : i + n]) for i in range(len(d) - n + 1)}
    for i in range(len(q) - n + 1):
        if tuple(q[i : i + n]) in grams:
            return " ".join(q[i : i + n])
    return None


def _docstring(body: Node, source: bytes) -> str:
    """A Python body's docstring, whole (indexing.doc_text.docstring keeps only its first line)."""
    first = body.named_children[0] if body.named_child_count else None
    if first is not None and first.type == "expression_statement" and first.named_child_count:
        first = first.named_children[0]
    return node_text(source, first) if first is not None and first.type == "string" else ""


def _leading_comments(outer: Node, source: bytes, spec: LangSpec) -> str:
    """Every comment directly above a declaration, whole (indexing.doc_text reads the first line)."""
    return "\n".join(node_text(source, c) for c in leading_comment_nodes(outer, source, spec))


def _declaration(outer: Node) -> Node:
    """The statement a definition stands in when it is a value (`const f = function () {}`,
    `X.prototype.f = ...`): comments sit above that statement, not above the inner node."""
    node = outer
    while (node.parent is not None and node.parent.parent is not None
           and node.parent.start_point.row == node.start_point.row
           and node.parent.type in ("lexical_declaration", "variable_declaration", "expression_statement",
                                    "assignment_expression", "variable_declarator", "pair",
                                    "export_statement")):
        node = node.parent
    return node


@dataclass
class FileDefs:
    """The definitions the real parser finds in one file, with the doc text of each."""

    names: set[str]
    docs: dict[str, str]


def parse_definitions(path: str, source: bytes) -> FileDefs:
    """Qualified names defined in a file (as indexing.parse.parse_file records them) and their doc text."""
    language = language_for_path(path)
    if language is None:
        return FileDefs(set(), {})
    language = grammar_for_source(language, path, source) or language
    source = source_for_grammar(language, source)
    try:
        tree = get_parser(language).parse(source)
    except (KeyError, ValueError, LookupError):
        return FileDefs(set(), {})
    spec = spec_for(language)
    defs: list[DefNode] = [d for d in extract(tree.root_node, source, language, path).defs if not d.continues]
    docs: dict[str, str] = {}
    for d in defs:
        parts = []
        body = body_of(d.node)
        if spec.docstrings and body is not None:
            parts.append(_docstring(body, source))
        parts.append(_leading_comments(d.outer, source, spec))
        outer = _declaration(d.outer)
        if outer is not d.outer:
            parts.append(_leading_comments(outer, source, spec))
        text = "\n".join(p for p in parts if p)
        docs[d.qualified] = (docs.get(d.qualified, "") + "\n" + text).strip()
    return FileDefs({d.qualified for d in defs}, docs)


# ---------------------------------------------------------------------------------------------------
# The set


def corpus_root(source: Path) -> Path:
    """The folder a set searches (bench/eval_public.py's corpus_root: fetched once, then cached)."""
    from bench.eval_public import corpus_root as eval_root
    from bench.evalsets import load_set

    return eval_root(load_set(source))


def check_query(source: str, query: dict[str, Any], corpus: CorpusText,
                files: dict[str, FileDefs | None]) -> list[Violation]:
    """Every rule on one query; `files` maps a target path to its parsed definitions (None: missing)."""
    qid = str(query.get("id", "?"))
    text = str(query.get("query", ""))
    out: list[Violation] = []
    if query.get("category") != "vocab-gap":
        category = query.get("category")
        out.append(Violation(source, qid, "schema", f"category is {category!r}, not 'vocab-gap'"))
    targets = query.get("targets") or []
    if not targets:
        out.append(Violation(source, qid, "schema", "no targets"))
    problem = check_phrase(str(query.get("obvious_phrase", "")), corpus)
    if problem:
        out.append(Violation(source, qid, "a", problem))
    symbols = [str(t.get("symbol")) for t in targets if t.get("symbol")]
    if len(symbols) != len(targets):
        out.append(Violation(source, qid, "schema", "every target needs a path and a symbol"))
    out += [Violation(source, qid, "b", p) for p in check_identifiers(text, symbols)]
    for target in targets:
        path, symbol = str(target.get("path", "")), target.get("symbol")
        if not symbol:
            continue
        parsed = files.get(path)
        if parsed is None:
            out.append(Violation(source, qid, "d", f"no file {path}"))
            continue
        if symbol not in parsed.names:
            out.append(Violation(source, qid, "d", f"{path} defines no {symbol}"))
            continue
        run = shared_run(text, parsed.docs.get(symbol, ""))
        if run:
            out.append(Violation(source, qid, "c", f"query shares {run!r} with the doc of {symbol}"))
    return out


def check_set(path: Path, root: Path | None = None) -> list[Violation]:
    """Every rule on every query of one gap set; root overrides the corpus folder (tests)."""
    source = path.name
    data = json.loads(path.read_text(encoding="utf-8"))
    out: list[Violation] = []
    if not data.get("note"):
        out.append(Violation(source, "-", "schema", "the set has no note saying how it was written"))
    base = root if root is not None else corpus_root(path)
    prefix = str(data.get("prefix", ""))
    corpus = CorpusText(base)
    files: dict[str, FileDefs | None] = {}
    seen: set[str] = set()
    for query in data.get("queries", []):
        qid = str(query.get("id", "?"))
        if qid in seen:
            out.append(Violation(source, qid, "schema", "duplicate id"))
        seen.add(qid)
        for target in query.get("targets") or []:
            tpath = str(target.get("path", ""))
            if tpath in files:
                continue
            rel = tpath[len(prefix):] if prefix and tpath.startswith(prefix) else tpath
            file = base / rel
            files[tpath] = parse_definitions(rel, file.read_bytes()) if file.is_file() else None
        out += check_query(source, query, corpus, files)
    return out


def default_files() -> list[Path]:
    return sorted((HERE / "queries").glob("gap-*.json"))


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if any(a in ("-h", "--help") for a in args):
        print(__doc__)
        return 0
    paths = [Path(a) for a in args] or default_files()
    if not paths:
        print("no gap sets found (bench/queries/gap-*.json)", file=sys.stderr)
        return 1
    violations: list[Violation] = []
    queries = 0
    for path in paths:
        if not path.is_file():
            violations.append(Violation(str(path), "-", "schema", "no such file"))
            continue
        queries += len(json.loads(path.read_text(encoding="utf-8")).get("queries", []))
        violations += check_set(path)
    for v in violations:
        print(v)
    if violations:
        print(f"{len(violations)} violation(s) in {len(paths)} set(s)", file=sys.stderr)
        return 1
    print(f"{queries} queries in {len(paths)} set(s): every rule holds")
    return 0


if __name__ == "__main__":
    sys.exit(main())
