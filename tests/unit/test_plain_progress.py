"""Plain progress lines for a run whose stderr is not a terminal (lsp_server.cli.embed.PlainProgress)."""

from __future__ import annotations

import io

from lsp_server.cli.embed import PlainProgress, progress_bar


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_quiet_at_first_then_a_line_per_phase_and_at_most_one_every_two_seconds() -> None:
    clock, out = Clock(), io.StringIO()
    lines = PlainProgress(out, quiet_s=3.0, every_s=2.0, clock=clock)
    lines("indexing", 10, 100)
    clock.now += 2.9
    lines("indexing", 20, 100)
    assert out.getvalue() == ""  # a quick run prints nothing
    clock.now += 0.2
    lines("indexing", 1200, 14896)
    lines("indexing", 1300, 14896)  # within two seconds of the last line
    clock.now += 2.0
    lines("indexing", 5000, 14896)
    lines("graph", 0, 0)  # a new phase prints at once
    assert out.getvalue().splitlines() == [
        "codeseek: parse 1,200/14,896 (8%)", "codeseek: parse 5,000/14,896 (33%)", "codeseek: call graph 0"]


def test_the_bar_off_and_plain_off_is_silent() -> None:
    with progress_bar(False) as progress:
        progress("indexing", 1, 2)  # no output, no error
    with progress_bar(False, plain=True) as progress:
        assert isinstance(progress, PlainProgress)
