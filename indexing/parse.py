"""Parse one file into chunks, definitions, call sites and imports (one tree-sitter parse).

`parse_file` never raises on bad input: invalid UTF-8 is parsed as raw bytes (offsets stay those of
the raw bytes; text is decoded with replacement only for headers and signatures), syntax errors keep
what parses, a tree that is mostly errors and files without a grammar fall back to line chunks. Each
such case is reported in `ParseResult.status` and `ParseResult.error`.
"""

from __future__ import annotations

import hashlib

from tree_sitter import Node

from indexing.chunker import ChunkOptions, DefInfo, Span, chunk_tree
from indexing.languages import GRAMMARS, get_parser, grammar_for_source, source_for_grammar, spec_for
from indexing.records import Chunk, ParseResult
from indexing.symbols import CLASS_KINDS, DefNode, extract, to_definitions
from indexing.textchunks import line_spans, markdown_spans

DEFAULT_OPTIONS = ChunkOptions()
# Above this share of bytes inside ERROR nodes the tree is not trusted for chunking.
MAX_ERROR_SHARE = 0.5


def parse_file(
    path: str,
    source: bytes,
    language: str | None,
    labels: tuple[str, ...],
    options: ChunkOptions | None = None,
) -> ParseResult:
    """Chunks, definitions, call sites and imports of one file. Never raises on bad input."""
    opts = options or DEFAULT_OPTIONS
    try:
        result = _parse(path, source, language, opts)
    except Exception as exc:  # a grammar/query failure must not lose the file: index its lines
        result = ParseResult(status="fallback", error=f"parser failure: {type(exc).__name__}: {exc}")
        result.chunks = _spans(line_spans(source, opts), path, source, language)
    result.chunks = _to_chunks(result.chunks, path, source, language, labels)
    bad = _invalid_utf8(source)
    if bad is not None:
        message = f"invalid UTF-8 at byte {bad}"
        result.error = f"{result.error}; {message}" if result.error else message
        if result.status == "ok":
            result.status = "partial"
    return result


def _parse(path: str, source: bytes, language: str | None, opts: ChunkOptions) -> ParseResult:
    if language not in GRAMMARS:
        if language is None:
            spans = line_spans(source, opts)
            return ParseResult(chunks=_spans(spans, path, source, language), status="fallback",
                               error="no grammar for this file type")
        spans = markdown_spans(source, opts) if language == "markdown" else line_spans(source, opts)
        return ParseResult(chunks=_spans(spans, path, source, language))
    language = grammar_for_source(language, path, source) or language
    source = source_for_grammar(language, source)  # same length: chunk hashes come from the file's bytes
    tree = get_parser(language).parse(source)
    root = tree.root_node
    symbols = extract(root, source, language, path)
    result = ParseResult(
        definitions=to_definitions(symbols.defs, path), calls=symbols.calls, imports=symbols.imports
    )
    if root.has_error:
        error_bytes, first = _errors(root)
        share = error_bytes / max(1, len(source))
        where = f"syntax errors from line {first}" if first else "syntax errors"
        if share > MAX_ERROR_SHARE:
            result.status = "fallback"
            result.error = f"{where} ({share:.0%} of the file unparsed)"
            result.chunks = _spans(line_spans(source, opts), path, source, language)
            return result
        result.status = "partial"
        result.error = where
    infos = {(d.outer.start_byte, d.outer.end_byte): _info(d) for d in symbols.scopes + symbols.defs}
    spans = chunk_tree(root, source, spec_for(language), infos, opts)
    result.chunks = _spans(spans, path, source, language)
    return result


def _info(d: DefNode) -> DefInfo:
    if d.kind in ("function", "method"):
        kind = d.kind
    elif d.kind in CLASS_KINDS:
        kind = "class"
    else:
        kind = "block"
    return DefInfo(kind=kind, symbol=d.qualified, header=d.header, sig_start=d.node.start_byte)


def _errors(root: Node) -> tuple[int, int | None]:
    """Unparsed bytes and the first line with an error (walks only erroneous subtrees).

    Unparsed = the tokens an ERROR node holds directly and MISSING nodes; a well-formed named subtree
    inside an ERROR node parsed (tree-sitter wraps a whole C file in ERROR when one `#if` branch
    leaves a brace open, while every function in it is intact), so it is not counted.
    """
    total = 0
    first: int | None = None
    stack = [root]
    while stack:
        node = stack.pop()
        if node.is_error or node.is_missing:
            line = node.start_point.row + 1
            first = line if first is None else min(first, line)
            if node.is_missing:
                continue
            for child in node.children:
                if child.has_error:
                    stack.append(child)
                elif child.is_error or not child.is_named or not child.child_count:
                    total += child.end_byte - child.start_byte
            continue
        if node.has_error:
            stack.extend(node.children)
    return total, first


def _invalid_utf8(source: bytes) -> int | None:
    try:
        source.decode("utf-8")
    except UnicodeDecodeError as exc:
        return exc.start
    return None


def _spans(spans: list[Span], path: str, source: bytes, language: str | None) -> list[Chunk]:
    """Spans as provisional chunks (lines and hashes are filled in by _to_chunks)."""
    return [
        Chunk(path=path, language=language, start_line=0, end_line=0, start_byte=s.start, end_byte=s.end,
              kind=s.kind, symbol=s.symbol, labels=(), content_hash="", header=s.header)
        for s in spans
        if s.end > s.start
    ]


def _to_chunks(
    chunks: list[Chunk], path: str, source: bytes, language: str | None, labels: tuple[str, ...]
) -> list[Chunk]:
    lines = _LineCounter(source)
    for chunk in chunks:
        chunk.start_line = lines.line_of(chunk.start_byte)
        chunk.end_line = max(chunk.start_line, lines.line_of(max(chunk.start_byte, chunk.end_byte - 1)))
        chunk.labels = labels
        chunk.language = language
        chunk.path = path
        chunk.content_hash = content_hash(source[chunk.start_byte : chunk.end_byte])
    return chunks


class _LineCounter:
    """1-based line of a byte offset; counts incrementally for increasing offsets."""

    def __init__(self, source: bytes) -> None:
        self.source = source
        self.offset = 0
        self.line = 1

    def line_of(self, offset: int) -> int:
        if offset < self.offset:
            self.offset, self.line = 0, 1
        self.line += self.source.count(b"\n", self.offset, offset)
        self.offset = offset
        return self.line


def content_hash(data: bytes) -> str:
    """The chunk content hash: blake2b, 16-byte digest, hex."""
    return hashlib.blake2b(data, digest_size=16).hexdigest()
