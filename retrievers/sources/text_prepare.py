"""The costly part of a chunk's text-index document, made where its file is parsed.

Two of a document's fields (`sources.text_schema`) are derived from the chunk text in Python: its
identifier terms (`sources.tokenize.identifier_text`) and the joined runs of its string literals
(`sources.literals.joined_strings`). On a cold index of a large tree they are most of the text
index's time on the main thread. `prepare_chunks` makes them for a file's chunks in the parse worker
that parsed it (`indexing.file_feed`: this module imports no tantivy, so a worker loads little);
`sources.text_feed` builds the documents from them as the file is stored.
"""

from __future__ import annotations

from indexing.records import Chunk
from retrievers.sources.literals import joined_strings
from retrievers.sources.tokenize import identifier_text

__all__ = ["Prepared", "chunk_text", "prepare_chunks", "prepared_fields"]

Prepared = tuple[str, tuple[str, ...]]  # a chunk text's identifier terms and joined literal runs


def prepared_fields(text: str) -> Prepared:
    """The identifier terms and joined literal runs of a chunk text (already cut to its limit)."""
    return identifier_text(text), tuple(joined_strings(text))


def chunk_text(chunk: Chunk, data: bytes, max_chars: int) -> str:
    """A chunk's text as the index reads it from its file's bytes, cut at `max_chars`."""
    return data[chunk.start_byte : chunk.end_byte].decode("utf-8", "replace")[:max_chars]


def prepare_chunks(max_chars: int, chunks: list[Chunk], data: bytes) -> list[Prepared]:
    """`prepared_fields` of each chunk of a file (`indexing.file_feed.Prepare`, with `max_chars`
    bound by `functools.partial`), in the chunks' order."""
    return [prepared_fields(chunk_text(c, data, max_chars)) for c in chunks]
