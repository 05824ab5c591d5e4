"""Exact strings in the text index: `ExactStrings.exact`, a mixin of `sources.text.TextRetriever`.

Every distinct trigram of the lowercased string (the rarest `max_trigrams`) must be in a file's
document (`sources.text_files`): the chunks of those files an occurrence lies in (`_may_hold`), in
trigram-BM25 order of their files, are verified against their text (`sources.literals.match_lines`),
then the chunks whose joined literal runs hold every trigram (`trigram_runs`: a message split over
literals, `joined_lines`), at most `max_verify` chunks. Strings under three characters take their
candidates from BM25.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Callable, Iterator, Mapping
from itertools import accumulate
from typing import TYPE_CHECKING

import tantivy

from retrievers.base import Hit, TextDetail
from retrievers.scope import EVERYWHERE, Scope
from retrievers.sources.literals import joined_lines, match_lines
from retrievers.sources.text_schema import trigram_text

if TYPE_CHECKING:
    from indexing.records import Chunk
    from retrievers.sources.text_files import FileChunks
    from retrievers.sources.text_schema import TextOptions

__all__ = ["ExactStrings"]


class ExactStrings:
    """`exact` over the retriever's index and chunks (module docstring)."""

    options: TextOptions
    _analyzers: dict[str, tantivy.TextAnalyzer]
    _schema: tantivy.Schema
    _chunks: Mapping[int, Chunk]
    _read_file: Callable[[str], bytes] | None

    if TYPE_CHECKING:
        def _complete_files(self) -> None: ...
        def _searcher(self) -> tantivy.Searcher: ...
        def _by_file(self) -> FileChunks: ...
        def _text_of(self, chunk: Chunk) -> str | None: ...
        def _run(self, query: tantivy.Query, limit: int, field_name: str = "chunk_id"
                 ) -> list[tuple[int, float]]: ...
        def bm25_query(self, text: str, symbol: str | None = None) -> tantivy.Query | None: ...

    def _exact_candidates(self, needle: str) -> Iterator[int]:
        """Chunks to verify for `needle`, made as they are asked for (`exact` stops once it has
        enough): those of the files whose documents hold all its rarest trigrams, the files in
        trigram-BM25 order, then those whose literal runs do; `max_verify` at most."""
        self._complete_files()
        limit = self.options.max_verify
        grams = list(dict.fromkeys(self._analyzers["cs_tri"].analyze(trigram_text(needle))))
        if len(needle) < 3 or not grams:
            # Too short for a trigram: candidates from BM25 on its words, else every chunk (bounded).
            q = self.bm25_query(needle)
            if q is not None:
                found = [cid for cid, _ in self._run(q, limit)]
                if found:
                    yield from found
                    return
            yield from sorted(self._chunks)[:limit]
            return
        searcher = self._searcher()
        if len(grams) > self.options.max_trigrams:
            freq = {g: searcher.doc_freq("trigram", g) for g in grams}
            grams = sorted(grams, key=lambda g: freq[g])[: self.options.max_trigrams]

        def holding(field_name: str, named: str) -> list[int]:  # (those whose `field_name` has all)
            term = tantivy.Query.term_query
            musts = [(tantivy.Occur.Must, term(self._schema, field_name, g)) for g in grams]
            return [key for key, _ in self._run(tantivy.Query.boolean_query(musts), limit, named)]
        files, listed = self._by_file(), set()
        for key in holding("trigram", "path_key"):  # (files holding it written out, in any case)
            path = files.path_of(key)
            for chunk in self._may_hold(path, files.chunks_of(path), needle) if path is not None else ():
                yield chunk.id
                listed.add(chunk.id)
                if len(listed) >= limit:
                    return
        for cid in holding("trigram_runs", "chunk_id"):  # (a message split over literals)
            if cid not in listed:
                yield cid
                listed.add(cid)
                if len(listed) >= limit:
                    return

    def _may_hold(self, path: str, chunks: list[Chunk], needle: str) -> list[Chunk]:
        """The chunks of `path` worth verifying for an ASCII `needle`: those an occurrence of it in any
        (ASCII) case lies in, the file read whole once; every one for another needle, or a file that
        cannot be read. (One trigram document a file: its other chunks would each be read and
        searched in turn.)"""
        pattern = needle.lower()
        if self._read_file is None or len(chunks) < 2 or not pattern or not pattern.isascii():
            return chunks
        try:
            data = self._read_file(path)
        except Exception:  # (whatever the reader raises: each chunk verified as it is)
            return chunks
        order = sorted(range(len(chunks)), key=lambda k: chunks[k].start_byte)
        starts = [chunks[k].start_byte for k in order]
        reach = list(accumulate((chunks[k].end_byte for k in order), max))  # (the furthest end so far)
        picked: set[int] = set()
        found, lowered = pattern.encode("ascii"), data.lower()  # (bytes: ASCII letters lowered)
        pos = lowered.find(found)
        while pos >= 0:
            at = bisect_right(starts, pos) - 1
            while at >= 0 and reach[at] >= pos + len(found):
                if chunks[order[at]].end_byte >= pos + len(found):
                    picked.add(order[at])
                at -= 1
            pos = lowered.find(found, pos + 1)
        return [chunks[k] for k in sorted(picked)]

    def exact(self, text: str, limit: int, scope: Scope = EVERYWHERE) -> list[Hit]:
        """Chunks within `scope` containing `text` verbatim, `detail.lines` the absolute matching lines.

        Case-sensitive matches score 2, case-insensitive 1 (plus a small bonus per occurrence line);
        ties go to the shorter chunk. A string found nowhere gives []. Candidates are verified in
        trigram-BM25 order; a string so common that `4 * limit` (at least 40) chunks match it
        case-sensitively stops the scan there.
        """
        if not text or not text.strip() or limit <= 0:
            return []
        hits: list[tuple[float, int, Hit]] = []
        enough, sensitive_hits = max(4 * limit, 40), 0
        for cid in self._exact_candidates(text):
            if sensitive_hits >= enough:
                break
            chunk = self._chunks.get(cid)
            if chunk is None or not scope.admits(chunk.path):
                continue
            body = self._text_of(chunk)
            if not body:
                continue
            lines, sensitive = match_lines(body, text, chunk.start_line)
            split = False
            if not lines and len(text) >= 3:  # a message split over literals (not a 2-letter scan)
                lines, sensitive = joined_lines(body, text, chunk.start_line)
                split = bool(lines)
            if not lines:
                continue
            sensitive_hits += sensitive
            score = (2.0 if sensitive else 1.0) + min(len(lines), 20) * 0.001
            detail = TextDetail("exact", tuple(lines), sensitive, split)
            hits.append((score, chunk.end_line - chunk.start_line, Hit(cid, score, detail)))
        hits.sort(key=lambda t: (-t[0], t[1], t[2].chunk_id))
        return [h for _, _, h in hits[:limit]]
