"""The text index's layout: its fields and their analyzers, a chunk's document, its fingerprint, the
BM25 query over the fields (`bm25_query`, `STOPWORDS`) and the tuning of the index (`TextOptions`, the
writer's memory budget). `sources.text` searches it.

Fields (nothing but `chunk_id` is stored: the index never holds source text):
- `chunk_id` (u64, indexed, fast, stored) and `fp` (u64, fast): a fingerprint of the chunk's
  coordinates and content hash, so `index()` after a restart or a killed indexer re-adds only what
  differs from the store.
- `path`, `symbol`, `idents`: identifier terms (`retrievers.sources.tokenize`), whole and split, lowercased.
- `body`: ordinary words (simple tokenizer, lowercase, English stemmer).

- `trigram_runs`: ngram(3, 3) of the chunk's joined runs of adjacent string literals, lowercased
  (`retrievers.sources.literals`: `"abc " "def"` adds `abc def`), so a message split over literals is
  found chunk by chunk.

A second kind of document, one per file (`file_document`, built by `sources.text_files`), holds what
exact strings written out are found by: `path_key` (u64, indexed, fast: `path_key(path)`), `fp` (the
file's fingerprint over its chunks', `file_fingerprint`) and `trigram`, ngram(3, 3) of the lowercased
text (`trigram_text`) of the file (`text_files.file_texts`). A file's document has no `chunk_id` and a
chunk's no `path_key`. One document a file instead of a trigram field a chunk: the Django sdist's
45,000 chunks in 3,400 files, 1.46 -> 0.93 s of CPU for the same trigrams (tantivy records each
distinct trigram once a document); and documents of their own can be written after the chunks'
(`TextRetriever.defer_files`: a one-shot command's cold build writes them after its answer).
"""

from __future__ import annotations

import hashlib
import time
from dataclasses import dataclass, field

import tantivy

from indexing.records import Chunk
from retrievers.sources.literals import joined_strings
from retrievers.sources.text_prepare import Prepared
from retrievers.sources.tokenize import identifier_text, identifiers, terms_for_identifier

SCHEMA_VERSION = 4  # 2: joined string literals in the trigram field; 3: trigram text lowercased whole;
# 4: trigrams in one document a file
MIN_THREAD_HEAP = 15_000_000  # tantivy's least memory budget for one indexing thread
WRITER_WAIT_S = 30.0  # how long a write waits for the writer another codeseek process holds (`open_writer`)
# Words that carry no meaning in a question; dropped from BM25 queries unless nothing else is left.
STOPWORDS = frozenset(
    "a an and are as at be by can code do does for from function get has have how i in is it its "
    "me my of on or our that the their there this to use used uses using we what when where which "
    "who why will with you your".split()
)


@dataclass
class TextOptions:
    """Tuning of the text index; the defaults suit a workspace of up to a few hundred thousand chunks."""

    # IndexWriter memory budget: heap_per_chunk x the chunks of its first write, within these bounds
    # (tantivy flushes a segment each time it fills, and every segment is searched on every query)
    heap_size: int = MIN_THREAD_HEAP
    max_heap_size: int = 64_000_000
    heap_per_chunk: int = 4_000
    boosts: dict[str, float] = field(
        default_factory=lambda: {"symbol": 4.0, "path": 2.0, "idents": 1.5, "body": 1.0}
    )
    max_verify: int = 2000  # exact strings: candidates verified against the chunk text
    max_trigrams: int = 24  # exact strings: the rarest N trigrams form the candidate query
    max_query_terms: int = 48  # BM25: distinct query terms kept
    max_index_chars: int = 500_000  # chunk text beyond this is not indexed


def writer_heap(options: TextOptions, adding: int) -> int:
    """The writer's memory budget for a first write of `adding` chunks (`TextOptions.heap_per_chunk`)."""
    ceiling = max(options.max_heap_size, options.heap_size)
    return min(max(options.heap_size, options.heap_per_chunk * adding), ceiling)


def open_writer(index: tantivy.Index, heap_size: int, wait_s: float | None = None,
                threads: int = 1) -> tantivy.IndexWriter:
    """`index`'s writer (`threads` indexing threads, each given at least tantivy's minimum budget of
    `MIN_THREAD_HEAP`: one, but for the file documents of a command with nothing else left to write,
    `sources.text_deferred`). One writer at a time may hold a folder; another codeseek process holds it
    only while it commits, or while a one-shot command writes its file documents after its answer
    (`sources.text_deferred`: seconds on a large tree) outside the store's writer lock that orders the
    rest, so a busy lock is waited for, up to `wait_s` (`WRITER_WAIT_S` when None).
    ValueError when it stays busy, or when the writer cannot be made for another reason."""
    deadline = time.monotonic() + (WRITER_WAIT_S if wait_s is None else wait_s)
    while True:
        try:
            return index.writer(heap_size=max(heap_size, threads * MIN_THREAD_HEAP), num_threads=threads)
        except ValueError as exc:
            if "LockBusy" not in str(exc) or time.monotonic() >= deadline:
                raise
        time.sleep(0.05)


def analyzers() -> dict[str, tantivy.TextAnalyzer]:
    """The fields' analyzers by name (tokenizers are not persisted: registered on every open)."""
    return {
        "cs_terms": tantivy.TextAnalyzerBuilder(tantivy.Tokenizer.whitespace())
        .filter(tantivy.Filter.remove_long(80))
        .filter(tantivy.Filter.lowercase())
        .build(),
        "cs_body": tantivy.TextAnalyzerBuilder(tantivy.Tokenizer.simple())
        .filter(tantivy.Filter.remove_long(40))
        .filter(tantivy.Filter.lowercase())
        .filter(tantivy.Filter.stemmer("english"))
        .build(),
        # (trigram text is lowercased whole before it reaches the index: `trigram_text`; a lowercase
        # filter on each of its ~30M grams cost the sdist's cold index ~10% of tantivy's time)
        "cs_tri": tantivy.TextAnalyzerBuilder(tantivy.Tokenizer.ngram(3, 3)).build(),
    }


def schema() -> tantivy.Schema:
    """The index's fields (see the module docstring)."""
    sb = tantivy.SchemaBuilder()
    sb.add_unsigned_field("chunk_id", stored=True, indexed=True, fast=True)
    sb.add_unsigned_field("fp", fast=True)
    sb.add_unsigned_field("path_key", indexed=True, fast=True)
    sb.add_text_field("path", tokenizer_name="cs_terms", index_option="freq")
    sb.add_text_field("symbol", tokenizer_name="cs_terms", index_option="freq")
    sb.add_text_field("idents", tokenizer_name="cs_terms", index_option="freq")
    sb.add_text_field("body", tokenizer_name="cs_body", index_option="freq")
    sb.add_text_field("trigram", tokenizer_name="cs_tri", index_option="basic")
    sb.add_text_field("trigram_runs", tokenizer_name="cs_tri", index_option="basic")
    return sb.build()


def _digest(key: str) -> int:
    return int.from_bytes(hashlib.blake2b(key.encode("utf-8", "replace"), digest_size=8).digest(), "big")


def fingerprint(chunk: Chunk) -> int:
    """A u64 naming this exact chunk version (id, coordinates, content), for reconciliation."""
    return _digest("\0".join(
        str(x)
        for x in (chunk.id, chunk.path, chunk.start_line, chunk.end_line, chunk.content_hash, chunk.symbol)
    ))


def path_key(path: str) -> int:
    """The u64 a file's document is found by (its `path_key` field)."""
    return _digest(path)


def file_fingerprint(fps: list[int]) -> int:
    """A u64 naming a file's document: its chunks' fingerprints, in the chunks' order."""
    return _digest("file\0" + ",".join(map(str, fps)))


def symbol_text(symbol: str) -> str:
    """The terms of a (qualified) symbol, joined by spaces: the whole lowercased name, then each
    component's terms (`identifier_text`: each distinct identifier split once)."""
    idents = identifier_text(symbol)
    return f"{symbol.lower()} {idents}" if "." in symbol else idents


def document(chunk: Chunk, fp: int, text: str | None, max_index_chars: int,
             prepared: Prepared | None = None, path_terms: str | None = None) -> tantivy.Document:
    """The index's document for a chunk with fingerprint `fp` and source `text` (None: unreadable; its
    path and symbol are still indexed), the text cut at `max_index_chars`. `prepared`: the text's
    `text_prepare.prepared_fields`, when made elsewhere;
    `path_terms`: `identifier_text(chunk.path)`."""
    doc = tantivy.Document()
    doc.add_unsigned("chunk_id", chunk.id)
    doc.add_unsigned("fp", fp)
    doc.add_text("path", identifier_text(chunk.path) if path_terms is None else path_terms)
    if chunk.symbol:
        doc.add_text("symbol", symbol_text(chunk.symbol))
    if text:
        text = text[:max_index_chars]
        idents, joined = prepared if prepared is not None else (identifier_text(text), joined_strings(text))
        doc.add_text("idents", idents)
        doc.add_text("body", text)
        if joined:
            doc.add_text("trigram_runs", trigram_text("\n".join(joined)))
    return doc


def file_document(key: int, fp: int, texts: list[str]) -> tantivy.Document:
    """A file's document (module docstring): `texts`, its chunks' texts."""
    doc = tantivy.Document()
    doc.add_unsigned("path_key", key)
    doc.add_unsigned("fp", fp)
    doc.add_text("trigram", trigram_text("\n".join(texts)))
    return doc


def trigram_text(text: str) -> str:
    """What the `trigram` field indexes of a text, and what a needle's trigrams are taken from."""
    return text.lower()


def bm25_query(schema: tantivy.Schema, body: tantivy.TextAnalyzer, options: TextOptions, text: str,
               symbol: str | None = None) -> tantivy.Query | None:
    """The boosted BM25 query for free text (None when the text has no searchable term): whole and
    split identifier terms on `symbol`, `path` and `idents`, the same through the `body` analyzer on
    `body`, and a `symbol` named whole at twice the symbol boost."""
    words = [w for w in identifiers(text) if w.lower() not in STOPWORDS] or list(identifiers(text))
    ident_terms = list(dict.fromkeys(t for w in words for t in terms_for_identifier(w)))
    ident_terms = ident_terms[: options.max_query_terms]
    body_terms = list(dict.fromkeys(body.analyze(" ".join(ident_terms))))
    boosts = options.boosts

    def term(field_name: str, value: str, boost: float) -> tuple[tantivy.Occur, tantivy.Query]:
        q = tantivy.Query.term_query(schema, field_name, value)
        return tantivy.Occur.Should, tantivy.Query.boost_query(q, boost)

    clauses = [term(field_name, t, boosts[field_name]) for t in ident_terms
               for field_name in ("symbol", "path", "idents")]
    clauses += [term("body", t, boosts["body"]) for t in body_terms[: options.max_query_terms]]
    if symbol and symbol.strip():
        clauses.append(term("symbol", symbol.strip().lower(), boosts["symbol"] * 2))
    if not clauses:
        return None
    return tantivy.Query.boolean_query(clauses)
