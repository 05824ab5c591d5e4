"""IndexStore round-trips on a real SQLite file: files, records, ids, embeddings, meta, concurrency."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from indexing.records import CallSite, Chunk, Definition, FileInfo, Import, ParseResult
from indexing.store import SCHEMA_VERSION, IndexStore, StoreClosed


def make_result(path: str, n_chunks: int = 2, tag: str = "a") -> ParseResult:
    chunks = [Chunk(path, "python", 1 + 10 * i, 9 + 10 * i, 100 * i, 100 * i + 90, "function", f"f{i}",
                    ("source",), f"{tag}{i}", header="class K:") for i in range(n_chunks)]
    defs = [Definition("f0", "K.f0", "method", path, 1, 9, 0, 90, 1, 4, "def f0(self):", doc="Do it.",
                       parent="K", bases=("Base", "Mixin"))]
    calls = [CallSite(path, 3, 8, 12, "g", "self", "K.f0"), CallSite(path, 4, 0, 3, "h", None, None)]
    imports = [Import(path, 1, "os.path", "join", "j"), Import(path, 2, "sys", None, None)]
    return ParseResult(chunks, defs, calls, imports, status="ok")


def info(path: str, size: int = 10, mtime: int = 5) -> FileInfo:
    return FileInfo(path, "python", size, mtime, ("source",))


def test_replace_file_round_trips_every_record(tmp_path: Path) -> None:
    store = IndexStore(tmp_path)
    chunks = store.replace_file(info("a.py"), "h1", make_result("a.py"))
    assert [c.id for c in chunks] and all(c.id > 0 for c in chunks)
    assert store.chunks() == chunks
    assert store.chunk(chunks[1].id) == chunks[1] and store.chunk(10**9) is None
    assert store.chunks_for_path("a.py") == chunks
    assert chunks[0].header == "class K:" and chunks[0].labels == ("source",)
    (d,) = store.definitions()
    assert d.id > 0 and d.bases == ("Base", "Mixin") and d.parent == "K" and d.doc == "Do it."
    assert d.path == "a.py" and d.signature == "def f0(self):" and (d.name_line, d.name_column) == (1, 4)
    assert store.calls() == make_result("a.py").calls
    assert store.imports() == make_result("a.py").imports
    row = store.files()["a.py"]
    assert (row.size, row.mtime_ns, row.hash, row.language, row.labels, row.status) == (
        10, 5, "h1", "python", ("source",), "ok")
    assert store.counts() == {"files": 1, "chunks": 2, "definitions": 1, "calls": 2, "imports": 2,
                              "embeddings": 0}
    store.close()


def test_recurring_values_are_read_as_one_string_each(tmp_path: Path) -> None:
    """Records read back share their file's path, kind, parent and header (a qualified name equal to the
    name is that name): one string per value, which pickle then also writes once."""
    store = IndexStore(tmp_path)
    result = make_result("pkg/a.py", n_chunks=3)
    result.definitions.append(Definition("f1", "K.f1", "method", "pkg/a.py", 11, 19, 100, 190, 11, 4,
                                         "def f1(self):", parent="K"))
    result.definitions.append(Definition("top", "top", "function", "pkg/a.py", 21, 29, 200, 290, 21, 4,
                                         "def top():"))
    store.replace_file(info("pkg/a.py"), "h1", result)
    first, second, top = store.definitions()
    assert first.path is second.path is top.path and first.kind is second.kind
    assert first.parent is second.parent and top.qualified_name is top.name
    chunks = store.chunks()
    assert chunks[0].kind is chunks[1].kind and chunks[0].header is chunks[2].header
    assert [d.qualified_name for d in (first, second, top)] == ["K.f0", "K.f1", "top"]
    store.close()


def test_call_sites_and_imports_share_their_recurring_strings(tmp_path: Path) -> None:
    """Call sites and imports read back share their path and recurring names (the call graph holds
    every call site; its saves pickle a shared string once)."""
    store = IndexStore(tmp_path)
    result = make_result("pkg/a.py")
    result.calls += [CallSite("pkg/a.py", 7, 8, 12, "g", "self", "K.f0", "S"),
                     CallSite("pkg/a.py", 8, 8, 12, "g", "self", "K.f0", "S")]
    result.imports.append(Import("pkg/a.py", 3, "os.path", "exists", None))
    store.replace_file(info("pkg/a.py"), "h1", result)
    store.replace_file(info("pkg/b.py"), "h2", make_result("pkg/b.py"))
    calls = store.calls()
    assert calls == result.calls + make_result("pkg/b.py").calls  # (by row, as written)
    first, _, third, fourth = calls[:4]
    assert first.path is third.path is fourth.path and first.callee is third.callee is fourth.callee
    assert first.receiver is third.receiver and first.caller is third.caller
    assert third.receiver_type is fourth.receiver_type
    imports = store.imports()
    assert imports == result.imports + make_result("pkg/b.py").imports
    assert imports[0].module is imports[2].module and imports[0].path is imports[2].path
    store.close()


def test_replace_gives_fresh_ids_and_reports_removed(tmp_path: Path) -> None:
    store = IndexStore(tmp_path)
    old = store.replace_file(info("a.py"), "h1", make_result("a.py", 3))
    other = store.replace_file(info("b.py"), "h2", make_result("b.py", 1))
    new, removed = store.replace_file_diff(info("a.py", 20, 6), "h3", make_result("a.py", 2, "b"))
    assert sorted(removed) == sorted(c.id for c in old)
    assert not {c.id for c in new} & {c.id for c in old}  # ids are never reused
    assert [c.id for c in store.chunks_for_path("a.py")] == [c.id for c in new]
    assert store.chunks_for_path("b.py") == other
    assert len(store.definitions()) == 2 and len(store.calls()) == 4  # old records replaced, not added
    assert store.files()["a.py"].hash == "h3"
    assert store.remove_file("a.py") == [c.id for c in new]
    assert store.remove_file("a.py") == []
    assert set(store.files()) == {"b.py"} and len(store.chunks()) == 1
    # Removing the newest rows must not let the next file reuse their ids.
    again = store.replace_file(info("c.py"), "h4", make_result("c.py", 1))
    assert again[0].id > max(c.id for c in new)
    store.close()


def test_persisted_across_reopen_and_schema_version(tmp_path: Path) -> None:
    store = IndexStore(tmp_path)
    store.replace_file(info("a.py"), "h1", make_result("a.py"))
    store.set_meta("model", "m1")
    generation = store.get_meta("generation")
    store.close()
    store = IndexStore(tmp_path)
    assert store.get_meta("schema_version") == SCHEMA_VERSION and store.get_meta("model") == "m1"
    assert store.get_meta("generation") == generation and store.get_meta("nope") is None
    assert len(store.chunks()) == 2
    assert store.integrity_check() == "ok"
    store.close()
    db = sqlite3.connect(tmp_path / "index.sqlite3")
    assert db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    db.execute("UPDATE meta SET value='0' WHERE key='schema_version'")
    db.commit()
    db.close()
    store = IndexStore(tmp_path)  # a different layout is rebuilt empty
    assert store.files() == {} and store.get_meta("generation") != generation
    store.close()


def test_corrupt_database_is_set_aside(tmp_path: Path) -> None:
    (tmp_path / "index.sqlite3").write_bytes(b"this is not a database" * 100)
    store = IndexStore(tmp_path)
    assert store.files() == {}
    assert (tmp_path / "index.sqlite3.corrupt").exists()
    store.close()


def test_failed_transaction_leaves_file_fully_old(tmp_path: Path) -> None:
    store = IndexStore(tmp_path)
    old = store.replace_file(info("a.py"), "h1", make_result("a.py", 2))
    try:
        with store.transaction():
            store.replace_file(info("a.py"), "h2", make_result("a.py", 5))
            raise RuntimeError("killed")
    except RuntimeError:
        pass
    assert store.chunks_for_path("a.py") == old and store.files()["a.py"].hash == "h1"
    store.close()


def test_no_source_text_is_stored(tmp_path: Path) -> None:
    store = IndexStore(tmp_path)
    store.replace_file(info("a.py"), "h1", make_result("a.py"))
    store.close()
    db = sqlite3.connect(tmp_path / "index.sqlite3")
    columns = {row[1] for table in ("chunks", "files") for row in db.execute(f"PRAGMA table_info({table})")}
    assert not columns & {"text", "source", "content", "body", "snippet"}
    db.close()


def test_embeddings_cache(tmp_path: Path) -> None:
    store = IndexStore(tmp_path)
    items = {f"k{i}": i.to_bytes(4, "little") * 2 for i in range(1200)}
    store.put_embeddings("m1", items)
    got = store.get_embeddings("m1", [*items, "missing", "k1"])
    assert got == items
    assert store.get_embeddings("m2", ["k1"]) == {}
    store.put_embeddings("m1", {"k1": b"new"})
    assert store.get_embeddings("m1", ["k1"]) == {"k1": b"new"}
    store.close()


def test_cached_vectors_are_written_hundreds_of_rows_a_statement(tmp_path: Path) -> None:
    """`executemany` releases the GIL around each row's step, and a busy main thread then makes the
    embedding thread wait once a row: 1,200 vectors go in four statements, all read back."""
    from indexing import store_embeddings

    store = IndexStore(tmp_path)
    statements: list[str] = []
    store._db.set_trace_callback(statements.append)
    items = {f"k{i}": bytes([i % 256]) * 8 for i in range(1200)}
    store.put_embeddings("m1", items)
    store._db.set_trace_callback(None)
    inserts = [s for s in statements if s.lstrip().upper().startswith("INSERT OR REPLACE INTO EMBEDDINGS")]
    assert len(inserts) == -(-len(items) // store_embeddings._ROWS) == 4
    assert store.get_embeddings("m1", list(items)) == items
    store.close()


def test_cache_keys_are_kept_as_their_bytes_and_read_back_as_hex(tmp_path: Path) -> None:
    store = IndexStore(tmp_path)
    hex_key, other = "0123456789abcdef" * 2, "0123456789ABCDEF" * 2  # (only lowercase hex is packed)
    store.put_embeddings("static:m", {hex_key: b"a", other: b"b", "k1": b"c"})
    got = store.get_embeddings("static:m", [hex_key, other, "k1"])
    assert got == {hex_key: b"a", other: b"b", "k1": b"c"}
    rows = dict(store._db.execute("SELECT vector, key FROM embeddings"))
    assert rows[b"a"] == bytes.fromhex(hex_key) and rows[b"b"] == other and rows[b"c"] == "k1"
    assert store.count_embeddings("static:m") == 3 and store.count_embeddings("other") == 0
    assert store.has_embeddings("static:m") and not store.has_embeddings("other")
    store.close()


def test_a_schema_3_cache_is_converted_in_place_and_the_records_kept(tmp_path: Path) -> None:
    store = IndexStore(tmp_path)
    store.replace_file(info("a.py"), "h1", make_result("a.py", 2))
    generation = store.get_meta("generation")
    store.close()
    db = sqlite3.connect(tmp_path / "index.sqlite3")  # the layout of schema 3, two models' vectors in it
    db.executescript("""DROP TABLE embeddings; DROP TABLE models;
        CREATE TABLE embeddings (model TEXT NOT NULL, key TEXT NOT NULL, vector BLOB NOT NULL,
                                 PRIMARY KEY (model, key));
        UPDATE meta SET value='3' WHERE key='schema_version';""")
    hex_key = "ff" * 16
    db.executemany("INSERT INTO embeddings VALUES (?, ?, ?)",
                   [("m1", hex_key, b"v1"), ("m1", "k2", b"v2"), ("m2", hex_key, b"v3")])
    db.commit()
    db.close()
    store = IndexStore(tmp_path)
    assert store.get_meta("schema_version") == SCHEMA_VERSION and store.get_meta("generation") == generation
    assert store.get_embeddings("m1", [hex_key, "k2"]) == {hex_key: b"v1", "k2": b"v2"}
    assert store.get_embeddings("m2", [hex_key]) == {hex_key: b"v3"} and store.count_embeddings("m1") == 2
    assert len(store.chunks()) == 2  # the records stay: no rebuild
    store.close()


def test_a_schema_3_store_without_its_cache_gets_an_empty_one_and_keeps_its_records(tmp_path: Path) -> None:
    store = IndexStore(tmp_path)
    store.replace_file(info("a.py"), "h1", make_result("a.py", 2))
    store.close()
    db = sqlite3.connect(tmp_path / "index.sqlite3")
    db.executescript("DROP TABLE embeddings; DROP TABLE models; "
                     "UPDATE meta SET value='3' WHERE key='schema_version';")
    db.close()
    store = IndexStore(tmp_path)
    assert store.get_meta("schema_version") == SCHEMA_VERSION and not store.take_notices()
    assert len(store.chunks()) == 2 and store.count_embeddings("m1") == 0
    store.put_embeddings("m1", {"k": b"v"})
    assert store.get_embeddings("m1", ["k"]) == {"k": b"v"}
    store.close()


def test_reader_thread_sees_committed_state_while_writer_holds_a_transaction(tmp_path: Path) -> None:
    store = IndexStore(tmp_path)
    store.replace_file(info("a.py"), "h1", make_result("a.py", 2))
    seen: list[int] = []
    with store.transaction():
        store.replace_file(info("b.py"), "h2", make_result("b.py", 3))
        worker = threading.Thread(target=lambda: seen.append(len(store.chunks())))
        worker.start()
        worker.join(timeout=10)
    assert seen == [2]  # not blocked, and no uncommitted rows
    assert len(store.chunks()) == 5
    store.close()


def test_reads_and_writes_after_close_raise_store_closed(tmp_path: Path) -> None:
    store = IndexStore(tmp_path)
    store.replace_file(info("a.py"), "h1", make_result("a.py"))
    assert store.counts()["files"] == 1  # this thread has a reader connection now
    store.close()
    with pytest.raises(StoreClosed, match="is closed"):
        store.counts()
    with pytest.raises(StoreClosed):
        store.set_meta("k", "v")


_CLOSE_UNDER_READERS = """
import sys, threading, time
from pathlib import Path
from indexing.store import IndexStore, StoreClosed
closed = 0
lock = threading.Lock()
for round in range(40):
    store = IndexStore(Path(sys.argv[1]))
    done = threading.Event()
    def read() -> None:
        global closed
        while not done.is_set():
            try:
                store.counts(); store.files(); store.languages()
            except StoreClosed:
                with lock:
                    closed += 1
                return
    threads = [threading.Thread(target=read) for _ in range(3)]
    for t in threads:
        t.start()
    time.sleep(0.004)
    store.close()
    done.set()
    for t in threads:
        t.join()
print("closed reads", closed)
"""


def test_closing_while_other_threads_read_does_not_crash(tmp_path: Path) -> None:
    # A restart (options changed) closes a root's store while query threads may be mid-statement on
    # their reader connections; closing those under them crashed the server (SIGSEGV). Run in a child
    # process so a crash fails this test instead of killing the test run.
    repo = Path(__file__).resolve().parents[2]
    run = subprocess.run([sys.executable, "-c", _CLOSE_UNDER_READERS, str(tmp_path / "index")], cwd=repo,
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr[-2000:]
    assert int(run.stdout.split()[-1]) > 0  # readers met the closed store and were told so
