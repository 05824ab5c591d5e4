"""A folder of numpy arrays saved whole and opened memory-mapped: the flat call graph and the saved
vectors beside the index (`graph.flat`, `retrievers.semantic.retriever`) and the question encoder's
converted weights (`retrievers.semantic.bert_numpy`).

`save_arrays(folder, arrays)` writes each array as `NAME.npy` (`allow_pickle=False`: no code can run
from them) into a temporary folder beside `folder`, then renames it into place, so a reader never sees
half a folder and a killed writer leaves none; when another process got there first, its folder stays.
`map_arrays(folder, names)` opens them read-only with `mmap_mode="r"` (pages load when read; "c",
copy-on-write, with `private`), or None when one is missing or unreadable. `RowReader.of(array)` reads
chosen rows of such a mapped array from its file (`pread`), without touching the mapping; `rows_of`
falls back to indexing.

`save_keyed(parent, prefix, key, arrays)` and `open_keyed(parent, prefix, key, names)` keep one such
folder per key beside the index (`<prefix><digest of key>/`, the key itself in its `key` file): saving
one removes the folders of other keys (a reader that mapped their files keeps them), opening one
checks its key.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import tempfile
import weakref
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Literal

import numpy as np

__all__ = ["RowReader", "keyed_folder", "map_arrays", "open_keyed", "rows_of", "save_arrays", "save_keyed"]


def save_arrays(folder: Path, arrays: Mapping[str, np.ndarray], texts: Mapping[str, str] | None = None,
                durable: bool = False) -> bool:
    """Write `arrays` (and small `texts` files) as the folder `folder` (module docstring); with
    `durable`, each file is synced before the rename. True when `folder` now holds a complete folder
    (this one, or one another process renamed first); False when it could not be written."""
    try:
        folder.parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=f".{folder.name}.", dir=folder.parent))
    except OSError:
        return False
    try:
        for name, array in arrays.items():
            with (tmp / f"{name}.npy").open("wb") as fh:
                np.save(fh, array, allow_pickle=False)
                if durable:
                    fh.flush()
                    os.fsync(fh.fileno())
        for name, text in (texts or {}).items():
            (tmp / name).write_text(text, encoding="utf-8")
        if not folder.exists():
            os.rename(tmp, folder)
        return True
    except OSError:
        return folder.exists()  # another process's rename won the race, or the disk refused
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def map_arrays(folder: Path, names: Iterable[str], private: bool = False) -> dict[str, np.ndarray] | None:
    """The arrays `names` of `folder`, memory-mapped read-only (`private`: copy-on-write, so an owner may
    change them in memory, never on disk); None when one is missing or broken."""
    mode: Literal["c", "r"] = "c" if private else "r"
    try:
        return {name: np.load(folder / f"{name}.npy", mmap_mode=mode, allow_pickle=False) for name in names}
    except (OSError, ValueError):
        return None


def keyed_folder(parent: Path, prefix: str, key: str) -> Path:
    """Where the arrays saved under `prefix` for `key` live."""
    return parent / (prefix + hashlib.blake2b(key.encode(), digest_size=8).hexdigest())


def save_keyed(parent: Path, prefix: str, key: str, arrays: Mapping[str, np.ndarray]) -> bool:
    """`save_arrays` into `keyed_folder(parent, prefix, key)`, then the folders of other keys go;
    False when it could not be written."""
    target = keyed_folder(parent, prefix, key)
    if not save_arrays(target, arrays, texts={"key": key}):
        return False
    for stale in parent.glob(prefix + "*"):
        if stale != target:
            shutil.rmtree(stale, ignore_errors=True)
    return True


def open_keyed(parent: Path, prefix: str, key: str, names: Iterable[str],
               private: bool = False) -> dict[str, np.ndarray] | None:
    """The arrays `save_keyed` wrote for `key`, mapped (`map_arrays`); None when absent or of another key."""
    folder = keyed_folder(parent, prefix, key)
    try:
        if (folder / "key").read_text(encoding="utf-8") != key:
            return None
    except OSError:
        return None
    return map_arrays(folder, names, private)


_PREADV = hasattr(os, "preadv")


class RowReader:
    """Rows of a 2-D array mapped from a `.npy` file, read from the file with `pread`.

    Indexing the mapping for a few hundred scattered rows makes the kernel map the cached pages around
    each one into the process as well (fault-around: ~21 MiB of a warm search's RSS on the Django sdist,
    for 300 rows of 512 bytes); reading them leaves the mapping untouched. The file stays open until the
    reader goes (a replaced folder's file is still read, as its mapping would be)."""

    def __init__(self, path: str, offset: int, shape: tuple[int, int], dtype: np.dtype) -> None:
        self._fd = os.open(path, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
        weakref.finalize(self, os.close, self._fd)
        self._offset = offset
        self._shape = shape
        self._dtype = dtype
        self._row_bytes = shape[1] * dtype.itemsize

    @classmethod
    def of(cls, array: np.ndarray) -> RowReader | None:
        """A reader of `array`'s rows when it is a whole C-ordered 2-D mapping of a file, else None."""
        if not isinstance(array, np.memmap) or array.ndim != 2 or not array.flags.c_contiguous \
                or not isinstance(array.filename, (str, os.PathLike)) or not isinstance(array.offset, int):
            return None
        try:
            shape = (int(array.shape[0]), int(array.shape[1]))
            reader = cls(os.fspath(array.filename), array.offset, shape, array.dtype)
            whole = os.fstat(reader._fd).st_size == array.offset + array.nbytes  # (not a slice of one)
        except OSError:
            return None
        return reader if whole else None

    def take(self, rows: np.ndarray) -> np.ndarray:
        """A new (writable) array of the rows at positions `rows`, in that order (OSError when the file
        cannot give them)."""
        size, count = self._row_bytes, self._shape[0]
        picked = np.asarray(rows, dtype=np.int64).tolist()
        out = np.empty((len(picked), self._shape[1]), dtype=self._dtype)
        into = out.reshape(-1).view(np.uint8).data
        for i, row in enumerate(picked):
            if not 0 <= row < count:
                raise IndexError(f"row {row} of {count}")
            if _PREADV:  # straight into `out`: one copy, not a bytes object and a second
                got = os.preadv(self._fd, [into[i * size:(i + 1) * size]], self._offset + row * size)
            else:
                part = os.pread(self._fd, size, self._offset + row * size)
                into[i * size:i * size + len(part)] = part
                got = len(part)
            if got != size:
                raise OSError(f"short read of row {row}")
        return out


def rows_of(array: np.ndarray, rows: np.ndarray, reader: RowReader | None) -> np.ndarray:
    """`array[rows]`, read through `reader` (`RowReader.of(array)`) when there is one and the file
    gives them."""
    if reader is not None:
        try:
            return reader.take(rows)
        except OSError:
            pass
    return array[rows]
