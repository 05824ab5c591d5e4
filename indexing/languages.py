"""Language detection and per-language parsing resources.

Maps a path to a tree-sitter-language-pack grammar name or to a text kind (files that are chunked by
lines), hands out cached parsers and the per-language queries kept in `indexing/queries/<lang>.scm`,
and describes the few node-type facts the chunker needs for each grammar (comments, attached
attributes, nodes that wrap a declaration).
"""

from __future__ import annotations

import functools
import posixpath
import re
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the grammars load on first use: a warm search that parses nothing skips ~17 ms
    from tree_sitter import Language, Parser, Query

QUERY_DIR = Path(__file__).with_name("queries")

GRAMMARS: frozenset[str] = frozenset(
    {
        "python", "javascript", "typescript", "tsx", "go", "rust", "java", "c", "cpp", "csharp",
        "ruby", "php", "kotlin", "lua", "bash", "scala", "swift", "haskell", "zig",
    }
)

_EXTENSIONS: dict[str, str] = {
    ".py": "python", ".pyi": "python", ".pyw": "python",
    ".js": "javascript", ".mjs": "javascript", ".cjs": "javascript", ".jsx": "javascript",
    ".ts": "typescript", ".mts": "typescript", ".cts": "typescript",
    ".tsx": "tsx",
    ".go": "go",
    ".rs": "rust",
    ".java": "java",
    ".c": "c", ".h": "c",
    ".cc": "cpp", ".cpp": "cpp", ".cxx": "cpp", ".c++": "cpp", ".hpp": "cpp", ".hh": "cpp",
    ".hxx": "cpp", ".h++": "cpp", ".ipp": "cpp", ".inl": "cpp",
    ".cs": "csharp",
    ".rb": "ruby", ".rake": "ruby", ".gemspec": "ruby",
    ".php": "php", ".phtml": "php",
    ".kt": "kotlin", ".kts": "kotlin",
    ".lua": "lua",
    ".sh": "bash", ".bash": "bash", ".zsh": "bash", ".ksh": "bash",
    ".scala": "scala", ".sc": "scala",
    ".swift": "swift",
    ".hs": "haskell",
    ".zig": "zig",
    ".md": "markdown", ".markdown": "markdown", ".mdx": "markdown",
    ".rst": "rst",
    ".yaml": "yaml", ".yml": "yaml",
    ".toml": "toml",
    ".json": "json", ".jsonc": "json", ".json5": "json",
    ".txt": "text", ".cfg": "text", ".ini": "text", ".conf": "text", ".properties": "text",
    ".in": "text", ".sql": "text", ".proto": "text", ".graphql": "text", ".gql": "text",
    ".css": "text", ".scss": "text", ".less": "text", ".html": "text", ".htm": "text",
    ".xml": "text", ".vue": "text", ".svelte": "text", ".gradle": "text", ".cmake": "text",
    # Templates are line-chunked (Jinja, Django, Handlebars, ERB, Go templates, ...).
    ".jinja": "text", ".jinja2": "text", ".j2": "text", ".djhtml": "text", ".tmpl": "text", ".tpl": "text",
    ".hbs": "text", ".handlebars": "text", ".mustache": "text", ".njk": "text", ".liquid": "text",
    ".erb": "text", ".ejs": "text", ".xhtml": "text", ".astro": "text",
    ".mk": "text", ".tf": "text", ".env": "text",
    # Source in languages without wired definitions and call sites: indexed by line chunks, so text
    # and semantic search still reach them (before, every file was skipped as unsupported).
    ".ex": "text", ".exs": "text", ".lhs": "text", ".dart": "text",
    ".erl": "text", ".hrl": "text", ".clj": "text", ".cljs": "text", ".ml": "text", ".mli": "text",
    ".fs": "text", ".fsx": "text", ".jl": "text", ".nim": "text", ".pl": "text", ".pm": "text",
    ".groovy": "text", ".elm": "text", ".r": "text", ".vim": "text", ".fish": "text", ".ps1": "text",
}
_NAMES: dict[str, str] = {
    "Rakefile": "ruby", "Gemfile": "ruby", ".bashrc": "bash", ".bash_profile": "bash", ".profile": "bash",
    "Makefile": "text", "GNUmakefile": "text", "Dockerfile": "text", "LICENSE": "text", "README": "text",
    "CHANGELOG": "text", "AUTHORS": "text", "NOTICE": "text", "CMakeLists.txt": "text",
}


def language_for_path(path: str) -> str | None:
    """The grammar name or text kind for `path`, or None when such files are not indexed."""
    return language_for_name(posixpath.basename(path.replace("\\", "/")))


def language_for_name(name: str) -> str | None:
    """`language_for_path` for a bare file name (no folder part)."""
    if name in _NAMES:
        return _NAMES[name]
    ext = posixpath.splitext(name)[1].lower()
    if not ext and name.startswith("Dockerfile"):
        return "text"
    return _EXTENSIONS.get(ext)


# C++ written in a `.h` header: namespaces, templates, access labels, classes, `std::`, extensionless
# standard headers (`#include <vector>`). C headers guard their C++ callers with `extern "C"` only.
_CPP_IN_HEADER = re.compile(
    rb"^[ \t]*(?:namespace[ \t]+[\w:]*[ \t]*\{|template[ \t]*<|(?:public|private|protected)[ \t]*:"
    rb"|class[ \t]+\w+[^;\n]*$|\#[ \t]*include[ \t]*<[a-z_]+>)|\bstd::\w",
    re.M,
)


def grammar_for_source(language: str | None, path: str, source: bytes) -> str | None:
    """The grammar to parse `source` with: a `.h` file holding C++ is parsed as C++ (abseil, fmt and
    most C++ projects name their headers `.h`; the C grammar leaves much of them in ERROR nodes); the
    file keeps its path-derived language."""
    if language == "c" and path.endswith(".h") and _CPP_IN_HEADER.search(source):
        return "cpp"
    return language


# A C/C++ class head with export or attribute macros before the name (`class FMT_API file {`, `class
# ABSL_LOCKABLE ABSL_ATTRIBUTE_WARN_UNUSED Mutex {`): tree-sitter takes the first macro for the name.
# A class has one name, so ALL-CAPS words between the keyword and a name followed by `:`, `{`, `<` or
# `final` are macros.
_CLASS_HEAD_MACROS = re.compile(
    rb"\b(?:class|struct|union)((?:[ \t]+[A-Z][A-Z0-9_]*[A-Z0-9](?:[ \t]*\([^()\n]*\))?)+)"
    rb"[ \t]+(?=[A-Za-z_]\w*[ \t]*(?:[:{<]|final\b))"
)


def source_for_grammar(grammar: str, source: bytes) -> bytes:
    """The bytes to hand the parser: C/C++ class-head macros blanked to spaces (same length, so every
    offset still points into the file as it is); other grammars get the source unchanged."""
    if grammar not in ("c", "cpp") or b"class" not in source and b"struct" not in source:
        return source
    return _CLASS_HEAD_MACROS.sub(lambda m: m.group(0).replace(m.group(1), b" " * len(m.group(1))), source)


@dataclass(frozen=True)
class LangSpec:
    """Node-type facts the chunker and symbol extractor need for one grammar."""

    comments: frozenset[str] = frozenset({"comment"})
    # Sibling nodes that belong to the declaration that follows them (decorators, attributes).
    attach_next: frozenset[str] = frozenset()
    # Parents that wrap a declaration and belong to it (export, decorators, templates).
    wrappers: frozenset[str] = frozenset()
    # Whether the first string statement of a body is a docstring (Python).
    docstrings: bool = False
    # Whether a definition may be written as several sibling equations of one name (Haskell's
    # `f 0 = ...` / `f n = ...`, a class method's signature and its default): the first is the
    # definition, the others continue it (`indexing.symbols`).
    equations: bool = False


_JS_WRAPPERS = frozenset({"export_statement"})
_C_COMMENT = frozenset({"comment"})
_LINE_BLOCK = frozenset({"line_comment", "block_comment"})

SPECS: dict[str, LangSpec] = {
    "python": LangSpec(wrappers=frozenset({"decorated_definition"}), docstrings=True),
    "javascript": LangSpec(attach_next=frozenset({"decorator"}), wrappers=_JS_WRAPPERS),
    "typescript": LangSpec(
        attach_next=frozenset({"decorator"}), wrappers=_JS_WRAPPERS | {"ambient_declaration"}
    ),
    "tsx": LangSpec(attach_next=frozenset({"decorator"}), wrappers=_JS_WRAPPERS | {"ambient_declaration"}),
    "go": LangSpec(),
    "rust": LangSpec(comments=_LINE_BLOCK, attach_next=frozenset({"attribute_item"})),
    "java": LangSpec(comments=_LINE_BLOCK),
    "c": LangSpec(comments=_C_COMMENT),
    "cpp": LangSpec(comments=_C_COMMENT, wrappers=frozenset({"template_declaration"})),
    "csharp": LangSpec(),
    "ruby": LangSpec(),
    "php": LangSpec(attach_next=frozenset({"attribute_list"})),
    "kotlin": LangSpec(comments=frozenset({"line_comment", "multiline_comment"})),
    "lua": LangSpec(),
    "bash": LangSpec(),
    "scala": LangSpec(
        comments=frozenset({"comment", "block_comment"}), attach_next=frozenset({"annotation"})
    ),
    "swift": LangSpec(comments=frozenset({"comment", "multiline_comment"})),
    # A top-level type signature belongs to the equations below it.
    "haskell": LangSpec(
        comments=frozenset({"comment", "haddock"}), attach_next=frozenset({"signature"}), equations=True
    ),
    "zig": LangSpec(comments=frozenset({"line_comment", "doc_comment", "container_doc_comment"})),
}


class QueryError(RuntimeError):
    """A query file in indexing/queries does not compile against its grammar."""


@functools.cache
def get_language(lang: str) -> Language:
    """The tree-sitter Language for a grammar name in GRAMMARS."""
    if lang not in GRAMMARS:
        raise KeyError(f"no grammar for {lang!r}")
    from tree_sitter_language_pack import get_language as pack_language

    return pack_language(lang)  # type: ignore[arg-type]


_thread_parsers = threading.local()


def get_parser(lang: str) -> Parser:
    """A parser for a grammar name in GRAMMARS, cached per thread: a tree-sitter parser holds its
    parse state and must not be used by two threads at once (the language server's indexer threads,
    an old root still stopping beside its replacement, and query threads all parse)."""
    if lang not in GRAMMARS:
        raise KeyError(f"no grammar for {lang!r}")
    cache: dict[str, Parser] | None = getattr(_thread_parsers, "parsers", None)
    if cache is None:
        cache = _thread_parsers.parsers = {}
    parser = cache.get(lang)
    if parser is None:
        from tree_sitter_language_pack import get_parser as pack_parser

        parser = cache[lang] = pack_parser(lang)  # type: ignore[arg-type]
    return parser


@functools.cache
def load_query(lang: str) -> Query | None:
    """The compiled query in indexing/queries/<lang>.scm, or None when there is none.

    A query file may start with `; inherits: a, b` (as in nvim-treesitter): the named query files
    (grammars, or shared fragments such as `ecma`) are expanded and prepended in that order, each once.
    An unknown name or an inheritance cycle raises QueryError.
    """
    if not (QUERY_DIR / f"{lang}.scm").is_file():
        return None
    from tree_sitter import Query

    source = query_source(lang)
    try:
        return Query(get_language(lang), source)
    except Exception as exc:  # tree_sitter raises QueryError/ValueError subclasses
        raise QueryError(f"queries/{lang}.scm: {exc}") from exc


INHERITS = "; inherits:"


def query_source(name: str) -> str:
    """The text of queries/<name>.scm with its `; inherits:` directive expanded (QueryError when
    the file, or a file it inherits, is missing, or when inheritance loops)."""
    parts: list[str] = []
    _expand(name, (), set(), parts)
    return "\n".join(parts)


def _expand(name: str, chain: tuple[str, ...], done: set[str], parts: list[str]) -> None:
    if name in chain:
        loop = " -> ".join((*chain, name))
        raise QueryError(f"queries/{chain[0]}.scm: inheritance cycle {loop}")
    if name in done:
        return
    path = QUERY_DIR / f"{name}.scm"
    if not path.is_file():
        where = f"queries/{chain[-1]}.scm inherits" if chain else "no query file for"
        raise QueryError(f"{where} unknown query {name!r} (no queries/{name}.scm)")
    text = path.read_text(encoding="utf-8")
    first, _, rest = text.partition("\n")
    if first.startswith(INHERITS):
        parents = [p.strip() for p in first[len(INHERITS):].split(",") if p.strip()]
        if not parents:
            raise QueryError(f"queries/{name}.scm: empty `{INHERITS}` directive")
        for parent in parents:
            _expand(parent, (*chain, name), done, parts)
        text = rest
    done.add(name)
    parts.append(text)


def spec_for(lang: str) -> LangSpec:
    """The LangSpec for a grammar (a plain default for grammars without one)."""
    return SPECS.get(lang, LangSpec())
