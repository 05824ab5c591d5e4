"""Language detection, parsers and the per-language query files."""

from __future__ import annotations

import pytest

from indexing import languages
from indexing.languages import GRAMMARS, QueryError, get_parser, language_for_path, load_query


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


def test_get_parser_rejects_text_kinds() -> None:
    with pytest.raises(KeyError):
        get_parser("markdown")


def test_broken_query_file_is_a_named_error(tmp_path, monkeypatch) -> None:
    (tmp_path / "python.scm").write_text(
        "(function_definition name: (no_such_node) @name) @definition.function"
    )
    monkeypatch.setattr(languages, "QUERY_DIR", tmp_path)
    languages.load_query.cache_clear()
    try:
        with pytest.raises(QueryError, match="python.scm"):
            languages.load_query("python")
    finally:
        monkeypatch.undo()
        languages.load_query.cache_clear()


def test_inherited_query_is_the_parent_query() -> None:
    assert load_query("tsx") is not None
    assert load_query("tsx").pattern_count == load_query("typescript").pattern_count
