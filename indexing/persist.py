"""Derived structures saved beside the index, so a new process does not rebuild them.

`SignedCache(index_dir).load(name, key)` / `.save(name, key, obj)` keep one pickled object per name
(the call graph with its PageRank) in `<index dir>/derived/<name>.pickle`, valid for one `key` (the
index revision and a fingerprint of the code that builds it). Given a `later` list, `save` only queues
the write there (write-behind: a one-shot command answers first, `WriteBehind.flush` writes after).
A pickle can run code when loaded, and an index directory may sit inside a workspace a stranger
wrote: every file carries an HMAC-SHA256 under a per-user secret kept in the user cache dir (mode
0600, outside any workspace), and a file whose tag or key does not match is ignored (and rebuilt by
the caller). Nothing here holds source text: the objects are built from the store's records (names,
coordinates, hashes).
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import io
import logging
import os
import pickle
import secrets
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any, BinaryIO, TypeVar

import platformdirs

from indexing.gc_pause import paused_collection

log = logging.getLogger(__name__)
MAGIC = b"codeseek-derived-1\n"
TAG_BYTES = 32


def _secret_path() -> Path:
    xdg = os.environ.get("XDG_CACHE_HOME")
    base = Path(xdg) / "codeseek" if xdg else Path(platformdirs.user_cache_dir("codeseek"))
    return base / "derived.key"


def user_secret() -> bytes:
    """The per-user signing key, created on first use (0600)."""
    path = _secret_path()
    try:
        data = path.read_bytes()
        if len(data) >= 32:
            return data
    except OSError:
        pass
    path.parent.mkdir(parents=True, exist_ok=True)
    key = secrets.token_bytes(32)
    tmp = path.with_name(f".{path.name}.{os.getpid()}")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        os.write(fd, key)
    finally:
        os.close(fd)
    try:
        os.link(tmp, path)  # the first writer wins; a concurrent one reads the winner's key
    except FileExistsError:
        pass
    finally:
        tmp.unlink(missing_ok=True)
    return path.read_bytes()


def code_fingerprint(*modules: Any) -> str:
    """blake2b over the source files of `modules` (a change to the builder invalidates its output)."""
    digest = hashlib.blake2b(digest_size=8)
    for module in modules:
        source = getattr(module, "__file__", None)
        if source:
            try:
                digest.update(Path(source).read_bytes())
            except OSError:
                digest.update(str(source).encode())
    return digest.hexdigest()


_Write = TypeVar("_Write", bound=Callable[..., Any])


def uses_other_cores(write: _Write) -> _Write:
    """Mark a held-back write whose work runs on threads of its own (tantivy's indexing of the text
    index's file documents): `WriteBehind.flush_alone` leaves it queued."""
    write.uses_other_cores = True  # type: ignore[attr-defined]
    return write


def holds_memory(write: _Write) -> _Write:
    """Mark a held-back write that makes large arrays before it writes them (the call graph's caller
    arrays and flat form): `WriteBehind.flush_alone` leaves it queued too. In the wait for the
    embedding, the worker process is alive and the main one near its highest point: there the graph's
    save was a cold command's peak (Django sdist ~591 MiB against ~565 without; sympy's peak over
    semble's)."""
    write.holds_memory = True  # type: ignore[attr-defined]
    return write


class WriteBehind:
    """Saves queued by `SignedCache.save` (a cache given `later=queue.writes`), written by `flush`."""

    def __init__(self) -> None:
        self.writes: list[Callable[[], object]] = []

    def flush(self) -> int:
        """Write what is queued, oldest first (a save that fails is logged and skipped, as `save` does);
        how many writes ran. Safe beside a thread queueing more: each write is taken off once."""
        done = 0
        while self.flush_one():
            done += 1
        return done

    def flush_one(self) -> bool:
        """Write the oldest queued save; False when none was queued."""
        try:
            write = self.writes.pop(0)
        except IndexError:  # none, or another thread flushed the last one
            return False
        write()
        return True

    def flush_alone(self) -> bool:
        """Write the oldest queued save that runs on this thread alone and holds little memory (not one
        marked `uses_other_cores` or `holds_memory`); False when there is none. What a command does
        while it waits for work on the other cores that its answer needs (the embedding): more threads
        would slow that work."""
        for write in list(self.writes):
            if getattr(write, "uses_other_cores", False) or getattr(write, "holds_memory", False):
                continue
            try:
                self.writes.remove(write)
            except ValueError:  # another thread took it
                continue
            write()
            return True
        return False


class SignedCache:
    """Signed pickles of derived structures in `<index_dir>/derived/`."""

    def __init__(self, index_dir: Path, later: list[Callable[[], object]] | None = None) -> None:
        self.folder = index_dir / "derived"
        self.later = later

    def _path(self, name: str) -> Path:
        return self.folder / f"{name}.pickle"

    def load(self, name: str, key: str, refs: Callable[[Any], Any] | None = None) -> Any | None:
        """The object saved under `name` for `key`; None when absent, stale, unsigned or unreadable.
        `refs`: what the names a `save(refs=...)` wrote stand for (objects the caller already holds,
        shared instead of read again)."""
        try:
            data = self._path(name).read_bytes()
        except OSError:
            return None
        head = MAGIC + key.encode() + b"\n"
        if not data.startswith(head) or len(data) < len(head) + TAG_BYTES:
            return None
        tag = data[len(head): len(head) + TAG_BYTES]
        body = memoryview(data)[len(head) + TAG_BYTES:]  # (a view: the graph's ~40 MB is not copied)
        signer = hmac.new(user_secret(), head, hashlib.sha256)
        signer.update(body)
        if not hmac.compare_digest(tag, signer.digest()):
            log.warning("ignoring %s: its signature does not match (written by another user?)",
                        self._path(name))
            return None
        try:
            with paused_collection():  # hundreds of thousands of small objects: collections cost ~30%
                if refs is None:
                    return pickle.loads(body)
                source = io.BytesIO(data)  # (it shares the bytes object, where a view would be copied)
                source.seek(len(head) + TAG_BYTES)
                unpickler = pickle.Unpickler(source)
                unpickler.persistent_load = refs  # type: ignore[assignment]  # (files of earlier versions)
                outer, _loading.refs = getattr(_loading, "refs", None), refs
                try:
                    return unpickler.load()
                finally:
                    _loading.refs = outer
        except Exception as exc:  # a class changed shape: rebuild
            log.info("ignoring %s: %s", self._path(name), exc)
            return None

    def holds(self, name: str, key: str) -> bool:
        """Whether a file saved under `name` for `key` is there (its head only: `load` checks the rest)."""
        head = MAGIC + key.encode() + b"\n"
        try:
            with self._path(name).open("rb") as saved:
                return saved.read(len(head)) == head
        except OSError:
            return False

    def save(self, name: str, key: str, obj: Any, refs: Callable[[Any], Any] | None = None) -> bool:
        """Write atomically; False (logged) when the folder is not writable or the object not picklable.
        With `later`, queue the write there and say True (a reader checks what is on disk anyway).
        `refs`: the name of an object to write as that name (None: pickle it), which `load`'s `refs`
        gives back (`_RefPickler`)."""
        if self.later is not None:
            self.later.append(lambda: self._write(name, key, obj, refs))
            return True
        return self._write(name, key, obj, refs)

    def _write(self, name: str, key: str, obj: Any, refs: Callable[[Any], Any] | None = None) -> bool:
        head = MAGIC + key.encode() + b"\n"
        tmp = self.folder / f".{name}.{os.getpid()}.tmp"
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            with tmp.open("wb") as out:
                out.write(head)
                out.write(bytes(TAG_BYTES))  # the tag's place: filled in once the body is signed
                signed = _SigningWriter(out, hmac.new(user_secret(), head, hashlib.sha256))
                pickler = (pickle.Pickler(signed, protocol=pickle.HIGHEST_PROTOCOL) if refs is None
                           else _RefPickler(signed, refs))
                pickler.dump(obj)
                out.seek(len(head))
                out.write(signed.signer.digest())
            tmp.replace(self._path(name))
            return True
        except (OSError, pickle.PicklingError, TypeError, AttributeError, RecursionError,
                RuntimeError) as exc:  # (RuntimeError: a structure changed while it was pickled)
            log.info("not saving %s: %s", name, exc)
            with contextlib.suppress(OSError):
                tmp.unlink(missing_ok=True)  # a half-written file is not left behind
            return False


_loading = threading.local()  # .refs: the `refs` of the `load` running on this thread


def _saved_ref(ref: Any) -> Any:
    """What a reference written by `_RefPickler` stands for: the running load's `refs(ref)`."""
    refs = getattr(_loading, "refs", None)
    if refs is None:
        raise pickle.UnpicklingError("a saved reference outside a load given refs")
    return refs(ref)


class _RefPickler(pickle.Pickler):
    """A pickler that writes each object `refs` names (not None) as that name, read back by `load`'s
    `refs`. Not pickle's `persistent_id`, which the pickler calls for every object, each int and
    string included: on the Django sdist's call graph (millions of objects, 43k named definitions)
    that doubled its save (1.5 s against 0.6 s). `reducer_override` is asked only about objects of
    other than the built-in container and scalar types, once each (the memo answers repeats)."""

    def __init__(self, out: Any, refs: Callable[[Any], Any]) -> None:
        super().__init__(out, protocol=pickle.HIGHEST_PROTOCOL)
        self._refs = refs

    def reducer_override(self, obj: Any) -> Any:
        ref = self._refs(obj)
        return NotImplemented if ref is None else (_saved_ref, (ref,))


class _SigningWriter:
    """A file the pickler streams into, signing what passes: the body is never held whole in memory
    (the call graph's is ~40 MB, and an in-memory pickle of it needs about twice that at its peak)."""

    def __init__(self, out: BinaryIO, signer: hmac.HMAC) -> None:
        self.out = out
        self.signer = signer

    def write(self, data: Any) -> int:
        self.signer.update(data)
        return self.out.write(data)
