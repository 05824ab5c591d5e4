"""retrievers.sources.literals: runs of adjacent string literals, joined, and the lines a message covers."""

from __future__ import annotations

from retrievers.sources.literals import joined_lines, joined_strings, line_groups

PY = '''def f():
    raise ValueError("the voucher has expired "
                     "and cannot be used "
                     'for shipping')
    msg = "a" + "b"
    doc = """one docstring"""
    url = "Invalid URL " + \\
        "scheme"
    pair = ("left", "right")
'''


def test_runs_join_adjacent_literals_only() -> None:
    assert joined_strings(PY) == ["the voucher has expired and cannot be used for shipping", "ab",
                                  "Invalid URL scheme"]
    assert joined_strings('call("one", "two")') == []  # a comma separates arguments
    assert joined_strings('x = "only one"') == []


def test_joined_lines_are_the_lines_of_the_covered_literals() -> None:
    assert joined_lines(PY, "expired and cannot", 10) == ([11, 12], True)
    assert joined_lines(PY, "VOUCHER HAS EXPIRED AND CANNOT BE USED FOR", 1) == ([2, 3, 4], False)
    assert joined_lines(PY, "URL scheme", 1) == ([7, 8], True)
    assert joined_lines(PY, "not there", 1) == ([], False)


def test_line_groups() -> None:
    assert line_groups([4, 2, 3, 9]) == [(2, 4), (9, 9)]
