"""Corpus-level chunking check over the requests 2.32.3 sdist (fetched from PyPI once, then cached)."""

from __future__ import annotations

from pathlib import Path

import pytest

from bench.corpora import fetch_sdist
from indexing.chunker import ChunkOptions, NonWhitespace
from indexing.languages import language_for_path
from indexing.parse import parse_file

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def requests_src() -> Path:
    return fetch_sdist("requests", "2.32.3") / "src" / "requests"


def test_every_function_that_fits_lies_whole_in_one_chunk(requests_src: Path) -> None:
    options = ChunkOptions()
    files = sorted(requests_src.rglob("*.py"))
    assert len(files) >= 17
    fitting = 0
    split = 0
    for path in files:
        source = path.read_bytes()
        rel = path.relative_to(requests_src.parent).as_posix()
        result = parse_file(rel, source, language_for_path(rel), ("source",), options)
        assert result.status == "ok", (rel, result.error)
        size = NonWhitespace(source)
        for d in result.definitions:
            if d.kind not in ("function", "method"):
                continue
            if size(d.start_byte, d.end_byte) > options.max_chars:
                split += 1
                continue
            fitting += 1
            holders = [c for c in result.chunks if c.start_byte <= d.start_byte and d.end_byte <= c.end_byte]
            assert holders, f"{rel}: {d.qualified_name} (lines {d.start_line}-{d.end_line}) is cut"
        for before, after in zip(result.chunks, result.chunks[1:], strict=False):
            assert after.start_line > before.end_line, f"{rel}: chunks share line {after.start_line}"
        covered = bytearray(len(source))
        for chunk in result.chunks:
            covered[chunk.start_byte : chunk.end_byte] = b"\x01" * (chunk.end_byte - chunk.start_byte)
        lost = [i for i, b in enumerate(source) if not covered[i] and not chr(b).isspace()]
        assert not lost, f"{rel}: byte {lost[0]} is in no chunk"
    assert fitting > 150 and split > 5  # requests has both kinds


def test_methods_of_split_classes_carry_the_class_header(requests_src: Path) -> None:
    source = (requests_src / "sessions.py").read_bytes()
    result = parse_file("requests/sessions.py", source, "python", ("source",))
    methods = [
        c for c in result.chunks if c.kind == "method" and c.symbol and c.symbol.startswith("Session.")
    ]
    assert {"Session.request", "Session.send", "Session.get", "Session.merge_environment_settings"} <= {
        c.symbol for c in methods
    }
    for chunk in methods:
        assert chunk.header.splitlines()[0] == "class Session(SessionRedirectMixin):"
    redirect = [c for c in result.chunks if c.symbol == "SessionRedirectMixin.rebuild_auth"]
    assert redirect and redirect[0].header == "class SessionRedirectMixin:"
