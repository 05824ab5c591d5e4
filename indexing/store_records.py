"""The record reads of the index store: chunks, definitions, call sites, imports, and row counts.

`RecordReads` is the part of `indexing.store.IndexStore` that turns the rows of the record tables
(schema in `indexing.store`) back into `indexing.records` values, over the store's per-thread reader
connection (it sees the last committed state without waiting for a writer).
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Collection
from typing import Any

from indexing.records import CallSite, Chunk, Definition, Import

__all__ = ["RecordReads", "labels_of"]


def labels_of(text: str) -> tuple[str, ...]:
    """A row's labels column (comma-separated) as a tuple."""
    return tuple(text.split(",")) if text else ()


class RecordReads:
    """chunks, definitions, calls, imports, counts and languages over the store's reader connection."""

    @property
    def _reader(self) -> sqlite3.Connection:
        raise NotImplementedError

    _CHUNK_SQL = ("SELECT f.path, f.language, c.start_line, c.end_line, c.start_byte, c.end_byte, c.kind, "
                  "c.symbol, f.labels, c.content_hash, c.header, c.id FROM chunks c JOIN files f "
                  "ON f.id = c.file_id")

    @staticmethod
    def _chunk(r: Any) -> Chunk:
        return Chunk(r[0], r[1], r[2], r[3], r[4], r[5], r[6], r[7], labels_of(r[8]), r[9], r[10], r[11])

    def chunks(self) -> list[Chunk]:
        """Every chunk, by id. Each file's path, language and labels are read once and shared by its
        chunks (not one copy per row: 45k chunks of the Django sdist, 6.8k files); a chunk whose file
        was not in the first read (a writer committed between the two, outside a `snapshot()`) makes
        it read them joined."""
        files = {fid: (path, language, labels_of(labels)) for fid, path, language, labels
                 in self._reader.execute("SELECT id, path, language, labels FROM files")}
        rows = self._reader.execute("SELECT file_id, start_line, end_line, start_byte, end_byte, kind, "
                                    "symbol, content_hash, header, id FROM chunks ORDER BY id")
        shared: dict[str, str] = {}  # kinds and headers: one string each (a class's methods share one)
        try:
            return [Chunk(files[f][0], files[f][1], a, b, c, d, shared.setdefault(kind, kind), symbol,
                          files[f][2], digest, shared.setdefault(header, header), i)
                    for f, a, b, c, d, kind, symbol, digest, header, i in rows]
        except KeyError:
            return [self._chunk(r) for r in self._reader.execute(self._CHUNK_SQL + " ORDER BY c.id")]

    def chunks_in(self, paths: Collection[str]) -> list[Chunk]:
        """The chunks of `paths`, by id, as `chunks()` makes them (a refresh re-reads the changed files')."""
        if not paths:
            return []
        marks = ",".join("?" * len(paths))
        return [self._chunk(r) for r in self._reader.execute(
            self._CHUNK_SQL + f" WHERE f.path IN ({marks}) ORDER BY c.id", tuple(paths))]

    def chunk(self, chunk_id: int) -> Chunk | None:
        r = self._reader.execute(self._CHUNK_SQL + " WHERE c.id=?", (chunk_id,)).fetchone()
        return None if r is None else self._chunk(r)

    def chunks_for_path(self, path: str) -> list[Chunk]:
        rows = self._reader.execute(self._CHUNK_SQL + " WHERE f.path=? ORDER BY c.start_byte, c.id", (path,))
        return [self._chunk(r) for r in rows]

    _DEF_SQL = ("SELECT d.name, d.qualified_name, d.kind, f.path, d.start_line, d.end_line, d.start_byte, "
                "d.end_byte, d.name_line, d.name_column, d.signature, d.doc, d.parent, d.bases, d.id "
                "FROM definitions d JOIN files f ON f.id = d.file_id")

    @staticmethod
    def _definition(r: Any) -> Definition:
        bases = tuple(json.loads(r[13])) if r[13] else ()
        return Definition(r[0], r[1], r[2], r[3], r[4], r[5], r[6], r[7], r[8], r[9], r[10], r[11], r[12],
                          bases, r[14])

    def definitions(self) -> list[Definition]:
        """Every definition, by id. Values that recur (paths, kinds, parents; a qualified name that is the
        name) are one shared string each,
        not one copy per row: the definitions are pickled beside the index (`graph_state`), and pickle
        writes, and every warm process then reads, a shared object once (42k definitions of the Django
        sdist in 3.2k files)."""
        shared: dict[str, str] = {}
        one = shared.setdefault
        out = []
        for r in self._reader.execute(self._DEF_SQL + " ORDER BY d.id"):
            name, qualified, kind, path, parent = r[0], r[1], r[2], r[3], r[12]
            out.append(Definition(name, name if qualified == name else qualified, one(kind, kind),
                                  one(path, path), r[4], r[5], r[6], r[7], r[8], r[9], r[10], r[11],
                                  None if parent is None else one(parent, parent),
                                  tuple(json.loads(r[13])) if r[13] else (), r[14]))
        return out

    def definitions_for_path(self, path: str) -> list[Definition]:
        rows = self._reader.execute(self._DEF_SQL + " WHERE f.path=? ORDER BY d.start_byte, d.id", (path,))
        return [self._definition(r) for r in rows]

    _CALL_SQL = ("SELECT f.path, c.line, c.col, c.end_col, c.callee, c.receiver, c.caller, c.receiver_type "
                 "FROM calls c JOIN files f ON f.id = c.file_id")
    _IMPORT_SQL = ("SELECT f.path, i.line, i.module, i.name, i.alias "
                   "FROM imports i JOIN files f ON f.id = i.file_id")

    def calls(self) -> list[CallSite]:
        """Every call site, by row. Paths and the names that recur (callees, receivers, callers, receiver
        evidence) are one shared string each, as in `definitions()`: the Django sdist's 183k call sites
        name 3k files and far fewer names than sites; the call graph holds them and its saves pickle
        each shared string once."""
        paths = dict(self._reader.execute("SELECT id, path FROM files"))
        rows = self._reader.execute("SELECT file_id, line, col, end_col, callee, receiver, caller, "
                                    "receiver_type FROM calls ORDER BY rowid")
        shared: dict[Any, Any] = {None: None}
        one = shared.setdefault
        try:
            return [CallSite(paths[f], line, col, end, one(callee, callee), one(receiver, receiver),
                             one(caller, caller), one(evidence, evidence))
                    for f, line, col, end, callee, receiver, caller, evidence in rows]
        except KeyError:  # (a file written between the two reads, outside a `snapshot()`)
            return [CallSite(*r) for r in self._reader.execute(self._CALL_SQL + " ORDER BY c.rowid")]

    def imports(self) -> list[Import]:
        """Every import, by row, paths and modules shared as in `calls()`."""
        paths = dict(self._reader.execute("SELECT id, path FROM files"))
        rows = self._reader.execute("SELECT file_id, line, module, name, alias FROM imports ORDER BY rowid")
        shared: dict[Any, Any] = {None: None}
        one = shared.setdefault
        try:
            return [Import(paths[f], line, one(module, module), one(name, name), alias)
                    for f, line, module, name, alias in rows]
        except KeyError:
            return [Import(*r) for r in self._reader.execute(self._IMPORT_SQL + " ORDER BY i.rowid")]

    def file_stamps(self) -> dict[str, tuple[int, str, int | None]]:
        """Each file's (row id, content hash, highest definition id): a file whose stamp changed had
        its records written again (a re-parse writes every definition anew, with new ids)."""
        rows = self._reader.execute("SELECT f.path, f.id, f.hash, (SELECT max(d.id) FROM definitions d "
                                    "WHERE d.file_id = f.id) FROM files f")
        return {path: (fid, digest, top) for path, fid, digest, top in rows}

    def records_for(self, paths: Collection[str]) -> tuple[list[Definition], list[CallSite], list[Import]]:
        """The definitions, call sites and imports of `paths`, each in the order of `definitions()`,
        `calls()` and `imports()` (by id / row id), as those would list them."""
        if not paths:
            return [], [], []
        marks = ",".join("?" * len(paths))
        args = tuple(paths)
        defs = [self._definition(r) for r in self._reader.execute(
            self._DEF_SQL + f" WHERE f.path IN ({marks}) ORDER BY d.id", args)]
        calls = [CallSite(*r) for r in self._reader.execute(
            self._CALL_SQL + f" WHERE f.path IN ({marks}) ORDER BY c.rowid", args)]
        imports = [Import(*r) for r in self._reader.execute(
            self._IMPORT_SQL + f" WHERE f.path IN ({marks}) ORDER BY i.rowid", args)]
        return defs, calls, imports

    def counts(self) -> dict[str, int]:
        """Row counts: files, chunks, definitions, calls, imports, embeddings."""
        out = {}
        for table in ("files", "chunks", "definitions", "calls", "imports", "embeddings"):
            out[table] = int(self._reader.execute(f"SELECT count(*) FROM {table}").fetchone()[0])
        return out

    def languages(self) -> dict[str, int]:
        """Indexed files per language (None counted as "unknown")."""
        rows = self._reader.execute("SELECT coalesce(language, 'unknown'), count(*) FROM files GROUP BY 1")
        return {str(r[0]): int(r[1]) for r in rows}
