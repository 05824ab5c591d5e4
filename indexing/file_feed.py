"""A consumer that follows an update file by file, as each file's parse is stored.

A large update parses its files on worker processes (`indexing.parse_pool`) and stores them on the
main thread, in order. A structure derived from every chunk (the text index:
`retrievers.sources.text_feed`) can be built the same way instead of in a pass over the whole store
afterwards: its expensive, per-file part runs where the file is parsed, beside the parse, and its
cheap part as each file is stored. `Workspace.update(feed=...)` drives a `FileFeed`:

- `begin(files)` once the update holds the store's writer lock (`files`: how many files it may
  parse); False: the feed sits this update out;
- `prepare` (a picklable callable: a module-level function or a `functools.partial` of one) runs on
  each parsed file where it was parsed, `prepare(chunks, data)` with the file's chunks (no ids yet)
  and bytes; its value reaches the feed as `ParseResult.prepared`;
- `stored(chunks, prepared, data)` after each file is stored, with its chunks as stored (ids set);
- `finish(completed)` once after a `begin` that said True: `completed` is False when the update
  stopped on an error.

A feed never fails an update: it handles its own errors (and gives up). Whatever it missed is made up
by the owner's usual pass after the update.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

from indexing.records import Chunk

__all__ = ["FileFeed", "Prepare"]

Prepare = Callable[[list[Chunk], bytes], Any]


class FileFeed(Protocol):
    """See the module docstring."""

    @property
    def prepare(self) -> Prepare | None: ...

    def begin(self, files: int) -> bool: ...

    def stored(self, chunks: list[Chunk], prepared: Any, data: bytes) -> None: ...

    def finish(self, completed: bool) -> None: ...
