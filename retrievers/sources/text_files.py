"""The text index's file documents: which files' trigram documents an index lacks or holds stale,
their text, and a file's chunks for the exact-string search that finds the file.

An exact string is found by one document a file (`text_schema.file_document`: the file's text,
lowercased, as trigrams); the search then verifies the chunks of the files whose documents hold every
trigram of the string (`sources.text_exact`). `FileChunks` groups a retriever's chunks by
file (made when first needed; an update patches the files it touched) and names each file's document:
its `path_key` and its fingerprint over its chunks' (`text_schema.file_fingerprint`);
`file_documents` makes the documents. `FileWrites` is what a retriever that writes its file documents
later (`TextRetriever.defer_files`) still has to write.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field

import tantivy

from indexing.chunk_table import ChunkTable
from indexing.records import Chunk
from retrievers.sources.text_schema import file_document, file_fingerprint, fingerprint, path_key

__all__ = ["FileChunks", "FileWrites", "file_documents", "file_texts"]

# A file document's name: its path and its fingerprint
Wanted = tuple[str, int]


class FileChunks:
    """The chunks of a mapping by file (each file's in id order), and each file's document's name.
    Over a saved `ChunkTable` a file's chunks are made when it is asked for (`in_file`), not all."""

    def __init__(self, by_path: dict[str, list[Chunk]], table: ChunkTable | None = None) -> None:
        self._by_path = by_path  # (over a table: the files an update touched; [] for a file gone)
        self._table = table
        self._paths: dict[int, str] | None = None  # path_key -> path, made on first use

    @classmethod
    def of(cls, chunks: Mapping[int, Chunk]) -> FileChunks:
        if isinstance(chunks, ChunkTable):
            return cls({}, chunks)
        by_path: dict[str, list[Chunk]] = {}
        for chunk in chunks.values():
            by_path.setdefault(chunk.path, []).append(chunk)
        for listed in by_path.values():
            listed.sort(key=lambda c: c.id)
        return cls(by_path)

    def patched(self, added: Sequence[Chunk], removed: Iterable[Chunk]) -> tuple[FileChunks, set[str]]:
        """The grouping after an update (a new one: searches may hold this), and the files it touched."""
        removed = list(removed)
        touched = {c.path for c in added} | {c.path for c in removed}
        gone = {c.id for c in removed} | {c.id for c in added}
        by_path = dict(self._by_path)
        for path in touched:
            kept = [c for c in self.chunks_of(path) if c.id not in gone]
            kept.extend(c for c in added if c.path == path)
            kept.sort(key=lambda c: c.id)
            if kept or self._table is not None:
                by_path[path] = kept
            else:
                by_path.pop(path, None)
        return FileChunks(by_path, self._table), touched

    def paths(self) -> list[str]:
        if self._table is None:
            return list(self._by_path)
        listed = [p for p in self._table.paths() if p not in self._by_path]
        return listed + [p for p, chunks in self._by_path.items() if chunks]

    def chunks_of(self, path: str) -> list[Chunk]:
        found = self._by_path.get(path)
        if found is not None or self._table is None:
            return found or []
        return sorted(self._table.in_file(path), key=lambda c: c.id)

    def path_of(self, key: int) -> str | None:
        if self._paths is None:
            self._paths = {path_key(p): p for p in self.paths()}
        return self._paths.get(key)

    def wanted(self, paths: Iterable[str] | None = None, fps: Mapping[int, int] | None = None
               ) -> dict[int, Wanted]:
        """path_key -> (path, the fingerprint its document must have), for `paths` (default: all);
        `fps`: the chunks' fingerprints where already computed."""
        out: dict[int, Wanted] = {}
        for path in self.paths() if paths is None else paths:
            chunks = self.chunks_of(path)
            if chunks:
                prints = [fps[c.id] if fps is not None and c.id in fps else fingerprint(c) for c in chunks]
                out[path_key(path)] = (path, file_fingerprint(prints))
        return out


def file_texts(chunks: Sequence[Chunk], data: bytes | None, max_chars: int,
               read_text: Callable[[Chunk], str | None] | None = None) -> list[str]:
    """What a file's document indexes: the file's text (`data`: decoded once, not sliced a chunk at a
    time, up to `max_chars` a chunk; what lies between chunks only adds candidates, which verifying
    drops), else each chunk's (`read_text`)."""
    if data is not None:
        return [data.decode("utf-8", "replace")[: max_chars * max(1, len(chunks))]] if chunks else []
    texts: list[str] = []
    for chunk in chunks:
        text = ((read_text(chunk) if read_text is not None else None) or "")[:max_chars]
        if text:
            texts.append(text)
    return texts


def file_documents(wanted: Mapping[int, Wanted], files: FileChunks, read_file: Callable[[str], bytes] | None,
                   read_text: Callable[[Chunk], str | None], max_chars: int
                   ) -> Iterator[tuple[tantivy.Document, int]]:
    """The documents of the files `wanted` names, each with its characters (each file read once; one
    that cannot be read is indexed empty, as an unreadable chunk is: its chunks are then found by no
    exact string)."""
    for key, (path, fp) in wanted.items():
        chunks = files.chunks_of(path)
        data = None
        if read_file is not None:
            try:
                data = read_file(path)
            except Exception:  # (gone, unreadable: whatever the reader raises, indexed empty)
                data = b""
        texts = file_texts(chunks, data, max_chars, read_text)
        yield file_document(key, fp, texts), sum(map(len, texts))


@dataclass
class FileWrites:
    """A deferred write of file documents (`sources.text_deferred`): those still to write, the thread
    handing them to the writer and what failed there, and the mark to write once they are committed."""

    pending: dict[int, Wanted] = field(default_factory=dict)
    feeding: threading.Thread | None = None
    failed: Exception | None = None
    committed: bool = False  # the feeding thread committed them itself (`text_deferred._feed`)
    mark: tuple[str, str] | None = None  # (owner, synced) for `TextRetriever.mark` once committed
