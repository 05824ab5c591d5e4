"""Result documents' shared helpers (retrievers.results): source lines and file URIs."""

from __future__ import annotations

from pathlib import Path

from retrievers.results import SourceCache, file_uri


def test_source_lines_follow_the_content_not_the_path() -> None:
    contents = {"a.py": b"one\ntwo\n"}
    first = SourceCache(lambda path: contents[path]).lines("a.py")
    contents["a.py"] = b"one\nTWO\nthree\n"  # edited between two searches
    second = SourceCache(lambda path: contents[path]).lines("a.py")
    assert first == ["one", "two"] and second == ["one", "TWO", "three"]
    assert SourceCache(lambda path: b"x\xff\n").lines("b.py") == ["x\ufffd"]


def test_unreadable_file_has_no_lines() -> None:
    def fail(path: str) -> bytes:
        raise OSError("gone")

    assert SourceCache(fail).lines("gone.py") is None


def test_file_uri_is_pathlibs() -> None:
    root = Path("/tmp/work space")
    assert file_uri(root, "pkg/mod ü.py") == (root / "pkg/mod ü.py").as_uri()


def test_dedent_lines_is_textwrap_dedent() -> None:
    import textwrap

    from retrievers.results import dedent_lines

    cases = [
        ["    def f():", "        return 1", "", "    x = 2"],
        ["\t a", "\t  b", "", "  \t", "\tc"],  # tabs and spaces mixed: only a shared prefix goes
        [" \t x", " \t"],
        ["  a", "\t b"],  # no common prefix
        ["\xa0 x", "  y"],  # a no-break space is not indentation to textwrap
        ["   ", "  "],  # whitespace only
        [],
    ]
    for lines in cases:
        assert dedent_lines(lines) == textwrap.dedent("\n".join(lines))
