"""Result documents' shared helpers (retrievers.engine.results): source lines and file URIs."""

from __future__ import annotations

from pathlib import Path

from retrievers.engine.results import SourceCache, file_uri


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

    from retrievers.engine.results import dedent_lines

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


def test_round_rounds_every_float_and_keeps_the_shape() -> None:
    import numpy as np

    from retrievers.engine.results import _round

    value = {"rank": 3, "ok": True, "none": None, "name": "x", "score": 0.0153846153846,
             "nested": {"raw": 51.469299317, "parts": (929, 930.1234567), "deep": [{"f": -1e-9}]},
             "numpy": np.float64(0.1234567891), "count": np.int64(4)}
    rounded = _round(value)
    assert rounded == {"rank": 3, "ok": True, "none": None, "name": "x", "score": 0.015385,
                       "nested": {"raw": 51.469299, "parts": [929, 930.123457], "deep": [{"f": -0.0}]},
                       "numpy": 0.123457, "count": np.int64(4)}
    assert str(rounded["nested"]["deep"][0]["f"]) == "-0.0"  # round()'s own result, sign kept
    assert isinstance(rounded["numpy"], float) and _round(2.5) == 2.5 and _round((1.0000004,)) == [1.0]
