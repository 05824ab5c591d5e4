"""Symlinks inside the root: each real file is indexed once.

The scanner records every accepted file it reached through a link (a file link, or a folder link on
its way) with its resolved path; `link_copies` says which of those paths to drop: all of them when the
real path is indexed itself (the real path wins), else all but the first in sorted order. Links that
leave the root never get here: the scanner skips them without reading (`symlink-outside-root`).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from pathlib import Path


def link_copies(linked: Mapping[str, str], real_root: str, accepted: set[str],
                indexable: Callable[[str], bool] | None = None) -> set[str]:
    """The accepted link paths to drop. `linked`: accepted path -> its resolved absolute path;
    `accepted`: every accepted path; `indexable(real_rel)`: whether the scan rules accept a real path
    that is not among `accepted` (named-path scans, which do not see the whole tree; None: a complete
    walk, where a real path not accepted is not indexable)."""
    by_real: dict[str, list[str]] = {}
    for rel, real in linked.items():
        real_rel = Path(os.path.relpath(real, real_root)).as_posix()
        if real_rel != rel:
            by_real.setdefault(real_rel, []).append(rel)
    drop: set[str] = set()
    for real_rel, links in by_real.items():
        links.sort()
        if real_rel in accepted or (indexable is not None and indexable(real_rel)):
            drop.update(links)
        else:
            drop.update(links[1:])
    return drop
