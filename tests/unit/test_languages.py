"""Language detection, parsers and the per-language query files."""

from __future__ import annotations

import pytest
from tree_sitter import QueryCursor

from indexing import languages
from indexing.languages import (
    GRAMMARS,
    QueryError,
    get_parser,
    grammar_for_source,
    language_for_path,
    load_query,
    source_for_grammar,
)
from tests.unit.broken_query import broken_python_query


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("src/requests/sessions.py", "python"),
        ("types.pyi", "python"),
        ("lib/router/index.js", "javascript"),
        ("esm/app.mjs", "javascript"),
        ("App.jsx", "javascript"),
        ("src/app.ts", "typescript"),
        ("src/App.tsx", "tsx"),
        ("cmd/main.go", "go"),
        ("src/lib.rs", "rust"),
        ("Foo.java", "java"),
        ("x.c", "c"),
        ("x.h", "c"),
        ("x.cpp", "cpp"),
        ("x.hpp", "cpp"),
        ("Program.cs", "csharp"),
        ("app.rb", "ruby"),
        ("Rakefile", "ruby"),
        ("index.php", "php"),
        ("Main.kt", "kotlin"),
        ("init.lua", "lua"),
        ("build.sh", "bash"),
        ("Main.scala", "scala"),
        ("View.swift", "swift"),
        ("src/Text/Pandoc/App.hs", "haskell"),
        ("Main.lhs", "text"),
        ("lib/std/mem.zig", "zig"),
        ("README.md", "markdown"),
        ("docs/index.rst", "rst"),
        (".github/workflows/ci.yml", "yaml"),
        ("pyproject.toml", "toml"),
        ("package.json", "json"),
        ("requirements.txt", "text"),
        ("setup.cfg", "text"),
        ("tox.ini", "text"),
        ("Makefile", "text"),
        ("Dockerfile", "text"),
        ("C:\\win\\path\\mod.PY", "python"),
    ],
)
def test_language_for_path(path: str, expected: str) -> None:
    assert language_for_path(path) == expected


@pytest.mark.parametrize("path", ["image.png", "archive.tar.gz", "data.bin", "noext", "x.pyc", "font.woff2"])
def test_unindexed_files_have_no_language(path: str) -> None:
    assert language_for_path(path) is None


def test_every_grammar_parses_and_has_a_compiling_query() -> None:
    for lang in sorted(GRAMMARS):
        tree = get_parser(lang).parse(b"x")
        assert tree.root_node is not None
        query = load_query(lang)
        assert query is not None, f"queries/{lang}.scm is missing"
        assert query.pattern_count > 0
        assert load_query(lang) is query  # cached


def test_parsers_are_cached_per_thread() -> None:
    import threading

    mine = get_parser("python")
    assert get_parser("python") is mine
    theirs: list[object] = []
    worker = threading.Thread(target=lambda: theirs.extend([get_parser("python"), get_parser("python")]))
    worker.start()
    worker.join()
    assert theirs[0] is theirs[1]  # cached within a thread
    assert theirs[0] is not mine  # never shared between threads


def test_get_parser_rejects_text_kinds() -> None:
    with pytest.raises(KeyError):
        get_parser("markdown")


def test_broken_query_file_is_a_named_error(tmp_path) -> None:
    with broken_python_query(tmp_path), pytest.raises(QueryError, match="python.scm"):
        languages.load_query("python")


def test_inherited_query_is_the_parent_query() -> None:
    assert load_query("tsx") is not None
    assert load_query("tsx").pattern_count == load_query("typescript").pattern_count


@pytest.fixture
def query_dir(tmp_path, monkeypatch):
    """A scratch queries/ folder; load_query's cache is cleared on the way in and out."""
    monkeypatch.setattr(languages, "QUERY_DIR", tmp_path)
    languages.load_query.cache_clear()
    yield tmp_path
    monkeypatch.undo()
    languages.load_query.cache_clear()


def test_inherits_prepends_the_named_files_once(query_dir) -> None:
    (query_dir / "base.scm").write_text("(identifier) @base.one\n")
    (query_dir / "mid.scm").write_text("; inherits: base\n(string) @mid.two\n")
    (query_dir / "python.scm").write_text("; inherits: mid, base\n(integer) @own.three\n")
    assert languages.query_source("python").split() == [
        "(identifier)", "@base.one", "(string)", "@mid.two", "(integer)", "@own.three"
    ]
    query = languages.load_query("python")
    assert query is not None and query.pattern_count == 3
    tree = get_parser("python").parse(b"x = 'a' + 1\n")
    names = set(QueryCursor(query).captures(tree.root_node))
    assert names == {"base.one", "mid.two", "own.three"}


def test_inherits_from_an_unknown_query_is_a_named_error(query_dir) -> None:
    (query_dir / "python.scm").write_text("; inherits: nosuch\n(identifier) @x\n")
    with pytest.raises(QueryError, match=r"python\.scm inherits unknown query 'nosuch'"):
        languages.load_query("python")


def test_inheritance_cycle_is_a_named_error(query_dir) -> None:
    (query_dir / "python.scm").write_text("; inherits: a\n(identifier) @x\n")
    (query_dir / "a.scm").write_text("; inherits: b\n")
    (query_dir / "b.scm").write_text("; inherits: python\n")
    with pytest.raises(QueryError, match=r"cycle python -> a -> b -> python"):
        languages.load_query("python")


def test_inherits_is_read_on_the_first_line_only(query_dir) -> None:
    (query_dir / "python.scm").write_text("(identifier) @x\n; inherits: nosuch\n")
    query = languages.load_query("python")
    assert query is not None and query.pattern_count == 1


def test_shared_fragments_are_no_grammar_but_are_inherited() -> None:
    for lang, fragment in [("javascript", "ecma"), ("typescript", "ecma"), ("c", "c_family"),
                           ("cpp", "c_family")]:
        assert fragment not in GRAMMARS
        assert languages.query_source(fragment) in languages.query_source(lang)
    assert languages.query_source("typescript") in languages.query_source("tsx")


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        (b"namespace absl {\nclass Span;\n}\n", "cpp"),
        (b"template <typename T>\nT max(T a, T b);\n", "cpp"),
        (b"#include <vector>\nint f(void);\n", "cpp"),
        (b"inline std::string name();\n", "cpp"),
        (b"#ifdef __cplusplus\nextern \"C\" {\n#endif\nint curl_easy_init(void);\n", "c"),
        (b"#include <stdio.h>\nstruct conn { int fd; };\n", "c"),
    ],
)
def test_a_header_holding_cpp_is_parsed_as_cpp(source: bytes, expected: str) -> None:
    assert grammar_for_source("c", "include/x.h", source) == expected
    assert grammar_for_source("c", "src/x.c", source) == "c"  # only headers are sniffed


def test_class_head_macros_are_blanked_for_the_parser_only_in_c_and_cpp() -> None:
    source = b"class FMT_API file {\n};\nstruct CURL_EXTERN x;\nclass Plain : Base {};\n"
    blanked = source_for_grammar("cpp", source)
    assert len(blanked) == len(source)
    assert blanked.startswith(b"class         file {") and b"CURL_EXTERN x;" in blanked
    assert source_for_grammar("python", source) is source
