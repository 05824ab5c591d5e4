"""parse_file on good and bad input: statuses, line fallback, offsets, hashes; it never raises."""

from __future__ import annotations

import hashlib
import time

import pytest

from indexing.chunker import ChunkOptions
from indexing.parse import DEFAULT_OPTIONS, parse_file
from tests.unit.broken_query import broken_python_query

GOOD = b'''import os


def read(path):
    """Read a file."""
    with open(path) as handle:
        return handle.read()


class Store:
    def get(self, key):
        return os.environ.get(key)
'''


def test_records_carry_path_language_labels_lines_and_hashes() -> None:
    result = parse_file("pkg/io.py", GOOD, "python", ("source", "test"))
    assert result.status == "ok" and result.error is None
    assert result.chunks, "a parsed file has chunks"
    for chunk in result.chunks:
        data = GOOD[chunk.start_byte : chunk.end_byte]
        assert chunk.path == "pkg/io.py"
        assert chunk.language == "python"
        assert chunk.labels == ("source", "test")
        assert chunk.content_hash == hashlib.blake2b(data, digest_size=16).hexdigest()
        assert chunk.start_line == GOOD.count(b"\n", 0, chunk.start_byte) + 1
        assert chunk.end_line == GOOD.count(b"\n", 0, chunk.end_byte - 1) + 1
    names = {d.qualified_name for d in result.definitions}
    assert names == {"read", "Store", "Store.get"}
    assert {(c.receiver, c.callee) for c in result.calls} == {
        (None, "open"),
        ("handle", "read"),
        ("os.environ", "get"),
    }
    assert [(i.module, i.name) for i in result.imports] == [("os", None)]
    assert all(d.path == "pkg/io.py" for d in result.definitions)
    assert all(c.path == "pkg/io.py" for c in result.calls)


@pytest.mark.parametrize("source", [b"", b"\n\n   \n", b"# only a comment\n"])
def test_empty_and_trivial_files(source: bytes) -> None:
    result = parse_file("empty.py", source, "python", ("source",))
    assert result.status == "ok"
    assert result.definitions == [] and result.calls == []
    assert len(result.chunks) == (1 if source.strip() else 0)


def test_syntax_errors_keep_what_parses() -> None:
    source = GOOD + b"\ndef broken(:\n    return\n"
    result = parse_file("broken.py", source, "python", (), ChunkOptions(max_chars=60))
    assert result.status == "partial"
    assert result.error == "syntax errors from line 14"
    assert {"read", "Store", "Store.get"} <= {d.qualified_name for d in result.definitions}
    assert any(c.symbol == "read" for c in result.chunks)


def test_a_tree_that_is_mostly_errors_falls_back_to_line_chunks() -> None:
    source = b"this is not ( python { at ] all\n" * 10 + b"}}}} ((((\n" * 10
    result = parse_file("prose.py", source, "python", ())
    assert result.status == "fallback"
    assert result.error is not None and "unparsed" in result.error
    assert [c.kind for c in result.chunks] == ["text"]
    assert (result.chunks[0].start_byte, result.chunks[0].end_byte) == (0, len(source))


C_OPEN_BRACE_IN_IF = b"""#include <stdio.h>
#ifdef A
int f(void) {
#else
int f(int x) {
#endif
  return 0;
}

static int add(int a, int b)
{
  return a + b;
}

static int twice(int a)
{
  return add(a, a);
}
"""


def test_intact_definitions_inside_an_error_node_are_chunked_as_definitions() -> None:
    # Each `#if` branch opens the brace: tree-sitter wraps the rest of the file in one ERROR node,
    # while the functions inside it parse. Only the ERROR node's own tokens count as unparsed.
    result = parse_file("f.c", C_OPEN_BRACE_IN_IF, "c", (), ChunkOptions(max_chars=60))
    assert result.status == "partial"
    assert result.error == "syntax errors from line 2"
    assert {"add", "twice"} <= {c.symbol for c in result.chunks if c.kind == "function"}


def test_invalid_utf8_keeps_raw_byte_offsets() -> None:
    prefix = b"# caf\xe9 \xff\xfe latin-1 bytes\n"
    source = prefix + GOOD
    result = parse_file("latin.py", source, "python", (), ChunkOptions(max_chars=60))
    assert result.status == "partial"
    assert result.error == "invalid UTF-8 at byte 5"  # the \xe9 of "caf\xe9"
    read = next(d for d in result.definitions if d.name == "read")
    assert source[read.start_byte : read.end_byte].startswith(b"def read(path):")
    assert read.start_line == 5
    store_get = next(c for c in result.chunks if c.symbol and "Store" in c.symbol)
    assert source[store_get.start_byte : store_get.end_byte].lstrip().startswith(b"class Store")


def test_invalid_utf8_inside_a_signature_is_replaced_in_text_only() -> None:
    body = b"".join(b"    part_%d = name.upper() + str(%d)\n" % (i, i) for i in range(30))
    source = b'def greet(name="caf\xe9"):\n' + body + b"    return name\n"
    result = parse_file("x.py", source, "python", (), ChunkOptions(max_chars=100))
    assert result.definitions[0].signature == 'def greet(name="caf\ufffd"):'
    assert len(result.chunks) > 3
    assert all(c.header == 'def greet(name="caf\ufffd"):' for c in result.chunks[1:])
    assert result.chunks[-1].end_byte == len(source) - 1


def test_minified_single_line_terminates_with_forward_progress() -> None:
    unit = b"var a" + b"=function(b){return b+1};"
    source = unit * (200_000 // len(unit) + 1)
    assert len(source) > 200_000 and b"\n" not in source
    start = time.perf_counter()
    result = parse_file("dist/app.min.js", source, "javascript", ("generated",))
    elapsed = time.perf_counter() - start
    assert elapsed < 30  # generous bound: this guards against a hang, not a speed target
    assert result.chunks
    last = 0
    for chunk in result.chunks:
        assert chunk.start_byte >= last and chunk.end_byte > chunk.start_byte
        last = chunk.end_byte
        assert chunk.start_line == chunk.end_line == 1
    assert result.chunks[-1].end_byte == len(source)


def test_minified_line_without_a_grammar_is_cut_by_bytes() -> None:
    source = b"x" * 200_000
    result = parse_file("blob.dat", source, None, ())
    assert result.status == "fallback" and result.error == "no grammar for this file type"
    assert 70 <= len(result.chunks) <= 80
    assert result.chunks[-1].end_byte == len(source)
    assert all(b.start_byte > a.start_byte for a, b in zip(result.chunks, result.chunks[1:], strict=False))


@pytest.mark.parametrize(
    ("language", "kind"), [("yaml", "text"), ("toml", "text"), ("rst", "text"), ("text", "text")]
)
def test_text_kinds_are_line_chunked(language: str, kind: str) -> None:
    source = "".join(f"key_{i}: value number {i}\n" for i in range(400)).encode()
    result = parse_file(f"conf.{language}", source, language, ("config",))
    assert result.status == "ok"
    assert {c.kind for c in result.chunks} == {kind}
    assert len(result.chunks) > 3
    assert result.chunks[0].start_line == 1 and result.chunks[-1].end_line == 400
    assert all(c.labels == ("config",) for c in result.chunks)


def test_markdown_is_chunked_by_sections() -> None:
    source = b"# Title\n\nIntro.\n\n## Install\n\n" + b"Step.\n" * 600 + b"## Usage\n\nRun it.\n"
    result = parse_file("README.md", source, "markdown", ("doc",))
    assert result.status == "ok"
    assert result.chunks[0].symbol == "Title"
    assert result.chunks[-1].symbol == "Usage" or result.chunks[-1].symbol == "Install"
    assert {c.kind for c in result.chunks} == {"section"}


def test_crlf_line_endings() -> None:
    source = GOOD.replace(b"\n", b"\r\n")
    result = parse_file("win.py", source, "python", ())
    assert result.status == "ok"
    read = next(d for d in result.definitions if d.name == "read")
    assert (read.start_line, read.end_line) == (4, 7)
    assert read.signature == "def read(path):"


def test_a_broken_query_file_is_reported_not_raised(tmp_path) -> None:
    with broken_python_query(tmp_path):
        result = parse_file("q.py", GOOD, "python", ())
    assert result.status == "fallback"
    assert result.error is not None and result.error.startswith("parser failure: QueryError")
    assert result.chunks and result.chunks[0].content_hash


def test_bundled_javascript_with_long_lines_between_modules_does_not_recurse_deeply() -> None:
    modules = []
    for i in range(1, 400):
        deps = ",".join(f'"@babel/runtime-corejs3/core-js-stable/module/{i}-{j}":{j}' for j in range(12))
        body = "".join(f"var value{j} = compute{j}(require('./dep{i}-{j}'), {j});\n" for j in range(15))
        modules.append(
            f"{i}:[function(require,module,exports){{\n{body}module.exports = value1;\n}},{{{deps}}}]"
        )
    source = ("(function(){ return 1; })()({" + ",".join(modules) + "},{},[1]);\n").encode()
    result = parse_file("vendor/bundle.js", source, "javascript", ("vendor",))
    assert result.status == "ok", result.error
    assert len(result.chunks) > 400


def test_a_cpp_header_named_dot_h_gets_cpp_definitions() -> None:
    source = b"""#include <string>
namespace absl {
class Cord {
 public:
  std::string Flatten() const;
  template <typename T>
  void Append(T value) { data_ += value; }
 private:
  std::string data_;
};
}  // namespace absl
"""
    result = parse_file("absl/strings/cord.h", source, "c", ())
    assert result.status == "ok"
    assert {"Cord", "Cord.Append"} <= {d.qualified_name for d in result.definitions}


def test_hundreds_of_comment_lines_before_a_definition_are_chunked_without_recursion() -> None:
    doc = b"".join(b"/// line %d of a long macro manual, with an example or two.\n" % i for i in range(1500))
    source = doc + b"macro_rules! select { () => {} }\n\nfn after() -> u32 {\n    1\n}\n"
    result = parse_file("src/macros/select.rs", source, "rust", ())
    assert result.status == "ok" and result.error is None
    assert len(result.chunks) > 10
    assert all(c.end_byte - c.start_byte <= 2 * DEFAULT_OPTIONS.max_chars for c in result.chunks)
    assert any(c.symbol == "after" for c in result.chunks)


def test_macros_in_a_cpp_class_head_do_not_take_the_class_name() -> None:
    source = b"""namespace absl {
class ABSL_LOCKABLE ABSL_ATTRIBUTE_WARN_UNUSED Mutex {
 public:
  void Lock();
};
class FMT_SO_VISIBILITY("default") format_error : public std::runtime_error {};
struct FOO bar;
}
"""
    result = parse_file("absl/synchronization/mutex.h", source, "cpp", (), ChunkOptions(max_chars=40))
    names = {d.qualified_name: d.kind for d in result.definitions}
    assert names == {"Mutex": "class", "Mutex.Lock": "method", "format_error": "class"}
    for chunk in result.chunks:  # hashes are of the file's own bytes, macros included
        assert chunk.content_hash == hashlib.blake2b(source[chunk.start_byte:chunk.end_byte],
                                                     digest_size=16).hexdigest()
    assert any(b"ABSL_LOCKABLE" in source[c.start_byte:c.end_byte] for c in result.chunks)
