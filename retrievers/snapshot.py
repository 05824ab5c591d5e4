"""An immutable view of the index that one search reads from start to end.

`SearchEngine.refresh` builds a new `Snapshot` after each update (chunks by id and by path,
definitions by id, the call graph and the PageRank of each chunk's definition) and swaps it in under
a lock, so a search running on another thread keeps a consistent view while the next one is built.

What ranking derives from a snapshot's definitions and paths (copy trees, contract files, interface
headers, file cards) is kept on the snapshot itself (`Snapshot.memo`), built once on first use: each
workspace root has its own snapshot, so roots searched in turn never rebuild each other's structures,
and a refresh's new snapshot starts empty. A builder that can start from the previous generation's
work (the file cards' term counts) finds it with `handed_down`.
"""

from __future__ import annotations

import bisect
import threading
from collections.abc import Callable, Hashable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol, TypeVar, cast

import numpy as np

from indexing.chunk_table import ChunkTable
from indexing.records import Chunk, Definition
from retrievers.chunk_ranks import ChunkPageRank, first_by_name, ranks_of

if TYPE_CHECKING:
    from graph.callgraph import CallGraph


class MemoStore(Protocol):
    """Memos saved beside the index for one revision (`Snapshot.keep_memos_in`)."""

    def get(self, key: Hashable, default: Any) -> Any: ...

    def put(self, key: Hashable, value: Any) -> None: ...

BOILERPLATE_KINDS = frozenset({"block", "text", "section"})  # never a definition's own chunk
T = TypeVar("T")
_MISSING = object()


@dataclass
class Snapshot:
    """Chunks, definitions and graph of one index generation."""

    # by id: a dict, or the saved table whose chunks are made as read (indexing.chunk_table)
    chunks: Mapping[int, Chunk] = field(default_factory=dict)
    by_path: Mapping[str, list[Chunk]] = field(default_factory=dict)  # sorted by (start_line, -end_line)
    # by id: a dict, or a saved graph's table whose definitions are made as read (indexing.definition_table)
    definitions: Mapping[int, Definition] = field(default_factory=dict)
    graph: CallGraph | None = None
    pagerank: Mapping[int, float] = field(default_factory=dict)  # chunk id -> PageRank (mean 1)
    files: int = 0
    _named: dict[str, dict[str, Definition]] = field(default_factory=dict, repr=False)  # per file, as asked
    _starts: dict[str, list[int]] = field(default_factory=dict, repr=False)  # per file, made as asked
    _defs_by_path: dict[str, list[Definition]] | None = field(default=None, repr=False)
    _id_at: dict[tuple[str, int], int | None] = field(default_factory=dict, repr=False)
    # chunk id -> the chunk that speaks for its definition (grouping.collapse_definitions), filled as
    # searches meet the chunks: the snapshot never changes, so the answer holds for its lifetime
    head_of: dict[int, int] = field(default_factory=dict, repr=False)
    # (builder, arguments) -> the structure it derived from this snapshot (`memo`); one lock per key
    _memo: dict[Hashable, Any] = field(default_factory=dict, repr=False, compare=False)
    _memo_locks: dict[Hashable, threading.Lock] = field(default_factory=dict, repr=False, compare=False)
    _memo_guard: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)
    # values a builder of the next generation may start from (`hand_down`, `handed_down`)
    _heirlooms: dict[Hashable, Any] = field(default_factory=dict, repr=False, compare=False)
    # where memos built with `saved=True` are kept beside the index (`keep_memos_in`); None: nowhere
    _saved: MemoStore | None = field(default=None, repr=False, compare=False)

    @classmethod
    def build(cls, chunks: Iterable[Chunk] | ChunkTable,
              definitions: Mapping[int, Definition] | Iterable[Definition], graph: CallGraph | None,
              files: int, previous: Snapshot | None = None) -> Snapshot:
        """The snapshot of one index generation (`chunks`: a list, or the saved table, whose files are
        sorted as they are asked for; `definitions`: by id, or a list); `previous` (the one it replaces,
        of the same index) hands down what its builders left for the next one (`hand_down`), never its
        structures."""
        defs = definitions if isinstance(definitions, Mapping) else {d.id: d for d in definitions}
        if isinstance(chunks, ChunkTable):
            return cls._made(chunks, _FilesOf(chunks), defs, graph, files, previous)
        by_id = {c.id: c for c in chunks}
        by_path: dict[str, list[Chunk]] = {}
        for c in by_id.values():
            by_path.setdefault(c.path, []).append(c)
        for items in by_path.values():
            items.sort(key=lambda c: (c.start_line, -c.end_line))
        return cls._made(by_id, by_path, defs, graph, files, previous)

    @classmethod
    def _made(cls, by_id: Mapping[int, Chunk], by_path: Mapping[str, list[Chunk]],
              defs: Mapping[int, Definition], graph: CallGraph | None, files: int,
              previous: Snapshot | None) -> Snapshot:
        snap = cls(by_id, by_path, defs, graph, {}, files)
        snap.pagerank = ChunkPageRank(snap)
        if previous is not None:
            snap._heirlooms = dict(previous._heirlooms)
        return snap

    def keep_memos_in(self, store: MemoStore) -> None:
        """Read and write the memos built with `saved=True` through `store` (the structures saved beside
        the index for this snapshot's revision, `retrievers.engine.derived.SavedMemos`)."""
        self._saved = store

    def memo(self, key: Hashable, build: Callable[[], T], saved: bool = False) -> T:
        """The structure `build` derives from this snapshot, built on the first call for `key` (name the
        builder and its arguments: `("copies.copy_trees", 0.5)`) and kept as long as the snapshot: the
        snapshot never changes, so neither does the answer. Threads asking at once build it once (one
        lock per key: a long build does not hold up another key's). With `saved` (a small, picklable
        value), it is also read from and kept in the snapshot's memo store, when it has one
        (`keep_memos_in`): a warm CLI process then never builds it."""
        found = self._memo.get(key, _MISSING)
        if found is _MISSING:
            with self._memo_guard:
                lock = self._memo_locks.setdefault(key, threading.Lock())
            with lock:
                found = self._memo.get(key, _MISSING)
                if found is _MISSING:
                    store = self._saved if saved else None
                    found = store.get(key, _MISSING) if store is not None else _MISSING
                    if found is _MISSING:
                        found = build()
                        if store is not None:
                            store.put(key, found)
                    self._memo[key] = found
        return cast(T, found)

    def hand_down(self, key: Hashable, value: object) -> None:
        """Leave `value` for the snapshots built after this one (`build(previous=...)`) to start from:
        work that stays valid across generations, such as term counts keyed by what they count."""
        self._heirlooms[key] = value

    def handed_down(self, key: Hashable) -> Any:
        """What this snapshot, else the one it replaced (and so on back), left under `key`; None when
        none did."""
        return self._heirlooms.get(key)

    def boilerplate(self, min_files: int) -> frozenset[int]:
        """Ids of the non-definition chunks (blocks, text, sections) whose exact content recurs in
        `min_files` files or more: licence headers, generated banners. They say nothing about their
        file; a question's nearest neighbours used to be a repository's 37 identical headers. Kept
        with the memos saved beside the index (`memo(saved=True)`)."""
        if min_files <= 0:
            return frozenset()
        return self.memo(("snapshot.boilerplate", min_files), lambda: self._boilerplate_of(min_files),
                         saved=True)

    def _boilerplate_of(self, min_files: int) -> frozenset[int]:
        files: dict[str, set[str]] = {}
        for c in self.chunks.values():
            if c.kind in BOILERPLATE_KINDS:
                files.setdefault(c.content_hash, set()).add(c.path)
        common = {h for h, paths in files.items() if len(paths) >= min_files}
        return frozenset(c.id for c in self.chunks.values()
                         if c.kind in BOILERPLATE_KINDS and c.content_hash in common)

    def chunk_at(self, path: str, line: int) -> Chunk | None:
        """The smallest chunk of `path` containing `line` (None when no chunk does)."""
        if isinstance(self.by_path, _FilesOf):
            return self.by_path.chunk_at(path, line)
        items = self.by_path.get(path)
        if not items:
            return None
        starts = self._starts.get(path)
        if starts is None:
            starts = self._starts[path] = [c.start_line for c in items]
        stop = bisect.bisect_right(starts, line)
        best: Chunk | None = None
        # Backwards from the last chunk starting at or before `line`: once a containing chunk of size
        # s is known, a chunk starting before line - s cannot be smaller and still contain the line.
        for k in range(stop - 1, -1, -1):
            c = items[k]
            if best is not None and c.start_line < line - (best.end_line - best.start_line):
                break
            if c.end_line >= line and (
                    best is None or c.end_line - c.start_line <= best.end_line - best.start_line):
                best = c
        return best

    def chunk_id_at(self, path: str, line: int) -> int | None:
        """`chunk_at`'s id, remembered per (path, line): graph expansion asks for the same definitions'
        chunks query after query."""
        key = (path, line)
        if key in self._id_at:
            return self._id_at[key]
        if isinstance(self.by_path, _FilesOf):
            found = self._id_at[key] = self.by_path.chunk_id_at(path, line)
            return found
        c = self.chunk_at(path, line)
        found = self._id_at[key] = c.id if c is not None else None
        return found

    def chunk_for_definition(self, d: Definition) -> int | None:
        return self.chunk_id_at(d.path, d.name_line)

    def named_definition(self, chunk: Chunk) -> Definition | None:
        """The definition whose qualified name is the chunk's symbol, in the same file."""
        return self.named_in(chunk.path, chunk.symbol) if chunk.symbol else None

    def named_in(self, path: str, qualified: str) -> Definition | None:
        """The definition of `path` with this qualified name; of several, the first by start line (then
        the last listed: `first_by_name`). A table of saved definitions looks in the file's; otherwise
        the file's definitions are keyed once, when first asked for (keying all of them cost the first
        search on a new snapshot ~0.1 s on the Django sdist)."""
        named = getattr(self.definitions, "named", None)
        if named is not None:
            return named(path, qualified)  # type: ignore[no-any-return]
        return self._named_in_file(path).get(qualified)

    def _named_in_file(self, path: str) -> dict[str, Definition]:
        named = self._named.get(path)
        if named is None:
            keyed = first_by_name(self.definitions_in(path))
            named = self._named[path] = {qualified: d for (_, qualified), d in keyed.items()}
        return named

    def definition_rows(self) -> Sequence[Definition]:
        """The definitions in id order, by position (the structural retriever's provider): a table's
        are made as they are read."""
        rows = getattr(self.definitions, "rows", None)
        return rows() if rows is not None else list(self.definitions.values())  # type: ignore[no-any-return]

    def definitions_in(self, path: str) -> list[Definition]:
        """The definitions of `path`, in id order."""
        in_file = getattr(self.definitions, "in_file", None)
        if in_file is not None:
            return in_file(path)  # type: ignore[no-any-return]
        if self._defs_by_path is None:
            by_path: dict[str, list[Definition]] = {}
            for definition in self.definitions.values():
                by_path.setdefault(definition.path, []).append(definition)
            self._defs_by_path = by_path
        return self._defs_by_path.get(path, [])

    def definition_for_chunk(self, chunk: Chunk) -> Definition | None:
        """The definition a chunk stands for: same path and qualified name, else the innermost one
        starting inside the chunk."""
        if self.graph is None:
            return None
        around = self.graph.definitions_at(chunk.path, chunk.end_line)
        if chunk.symbol:
            for d in around:
                if d.qualified_name == chunk.symbol:
                    return d
        inside = [d for d in around if d.start_line >= chunk.start_line]
        return inside[0] if inside else None

    def chunk_pagerank(self, chunk: Chunk) -> float | None:
        """The PageRank of the definition a chunk stands for (None when it has none or there is no
        graph): its named definition, else the most central one declared in it (small definitions
        merged into one block)."""
        rank = self._definition_ranks()
        if rank is None:
            return None
        held = self.named_in(chunk.path, chunk.symbol) if chunk.symbol else None
        if held is not None:  # `ranks_of`'s first case, looked up alone (no other definition is made)
            return rank.get(held.id)
        return ranks_of([chunk], self.definitions_in(chunk.path), {}, rank)[chunk.id]

    def chunk_ranks_in(self, path: str) -> dict[int, float | None]:
        """`chunk_pagerank` of every chunk of `path`, the file's definitions keyed once: what the file
        cards (all files) and `ChunkPageRank` (a candidate's file) work out."""
        rank = self._definition_ranks()
        chunks = self.by_path.get(path) or []
        if rank is None:
            return dict.fromkeys((c.id for c in chunks), None)
        return ranks_of(chunks, self.definitions_in(path), self._named_in_file(path), rank)

    def _definition_ranks(self) -> Mapping[int, float] | None:
        if self.graph is None:
            return None
        try:
            return self.graph.pagerank
        except Exception:  # centrality is a prior: a failure must not stop search
            return None


class _FilesOf(Mapping[str, list[Chunk]]):
    """A chunk table's chunks by file, each file's sorted by (start_line, -end_line) when first asked
    for (`Snapshot.by_path` of a saved table: no file is sorted that no search reads)."""

    def __init__(self, table: ChunkTable) -> None:
        self._table = table
        self._sorted: dict[str, list[Chunk]] = {}
        self._paths: list[str] | None = None
        self._lines: dict[str, tuple[list[int], np.ndarray, np.ndarray]] = {}  # path -> rows, starts, ends

    def chunk_at(self, path: str, line: int) -> Chunk | None:
        """`Snapshot.chunk_at` from the table's line columns: of the file's chunks in (start_line,
        -end_line) order that contain `line`, the smallest, the first of equals; only it is made."""
        row = self._row_at(path, line)
        return self._table.at(row) if row is not None else None

    def chunk_id_at(self, path: str, line: int) -> int | None:
        """`chunk_at`'s id, read from the id column (no chunk is made)."""
        row = self._row_at(path, line)
        return int(self._table.ids[row]) if row is not None else None

    def _row_at(self, path: str, line: int) -> int | None:
        known = self._lines.get(path)
        if known is None:
            rows = self._table.file_rows(path)
            starts, ends = self._table.lines(rows) if rows else (np.zeros(0, np.int64), np.zeros(0, np.int64))
            order = np.lexsort((-ends, starts))
            known = self._lines[path] = ([rows[k] for k in order.tolist()], starts[order], ends[order])
        rows, starts, ends = known
        holding = np.flatnonzero((starts <= line) & (ends >= line))
        if not len(holding):
            return None
        sizes = ends[holding] - starts[holding]
        return rows[int(holding[int(np.argmin(sizes))])]  # type: ignore[no-any-return]

    def __getitem__(self, path: str) -> list[Chunk]:
        items = self._sorted.get(path)
        if items is None:
            items = sorted(self._table.in_file(path), key=lambda c: (c.start_line, -c.end_line))
            if not items:
                raise KeyError(path)
            self._sorted[path] = items
        return items

    def __iter__(self) -> Iterator[str]:
        if self._paths is None:
            self._paths = self._table.paths()
        return iter(self._paths)

    def __len__(self) -> int:
        return sum(1 for _ in self)
