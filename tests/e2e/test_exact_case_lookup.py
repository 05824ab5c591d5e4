"""Exact-case identifier preference end to end (issue 9): `codeseek search HELP_OPTION` answers with the
constant `HELP_OPTION` (in a test file) before the source function `help_option`, and the other way round."""

from __future__ import annotations

from pathlib import Path

from tests.e2e.cli_support import search_json

DECORATORS = '''"""Decorators for commands."""


def help_option(*param_decls, **kwargs):
    """Add a ``--help`` option which immediately prints the help page and exits the program."""

    def show_help(ctx, param, value):
        if value:
            ctx.exit()

    return param_decls, show_help
'''
TEST_INFO = '''HELP_OPTION = ("help", {"name": "help", "flags": ["--help"], "is_flag": True})


def test_help_option_info():
    assert HELP_OPTION[0] == "help"
'''


def search(root: Path, index: Path, query: str) -> list[tuple[str, int, str]]:
    results = search_json(root, index, query, "--limit", "2")["results"]
    return [(r["path"], r["start_line"], r["symbol"]) for r in results]


def test_the_exact_case_name_ranks_first(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    (root / "src/cli").mkdir(parents=True)
    (root / "tests").mkdir()
    (root / "src/cli/decorators.py").write_text(DECORATORS)
    (root / "tests/test_info.py").write_text(TEST_INFO)
    index = tmp_path / "index"
    assert search(root, index, "HELP_OPTION") == [
        ("tests/test_info.py", 1, "HELP_OPTION"), ("src/cli/decorators.py", 4, "help_option")]
    assert search(root, index, "help_option") == [
        ("src/cli/decorators.py", 4, "help_option"), ("tests/test_info.py", 1, "HELP_OPTION")]
