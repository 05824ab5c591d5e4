"""Where a workspace root's index lives: the one place that computes it.

The index of a root is `<base>/<key>`, where `key` depends on the resolved root alone
(`index_key`: sha1 of its real path, 16 hex digits) and `base` is, first found:

1. the folder a front end names (`codeseek ... --index-dir BASE`, the LSP option `indexDir`,
   `codeseek mcp --index-dir BASE`): every front end means the same thing by it, a base folder;
2. `$CODESEEK_INDEX_DIR` (also a base folder);
3. the user cache: `$XDG_CACHE_HOME/codeseek`, else the platform cache folder (platformdirs).

So the CLI, the language server (one root or several) and the MCP server on one root share one index,
and two roots never share one. Code that must name the folder itself (tests, bench/) passes
`WorkspaceOptions(index_dir=...)`; the store records the root it was built for and `Workspace`
refuses to open an index recorded for another root (`IndexRootMismatch`).
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import platformdirs

ENV = "CODESEEK_INDEX_DIR"

__all__ = ["DB_NAME", "ENV", "index_base", "index_dir_for", "index_key"]

DB_NAME = "index.sqlite3"  # the store's file in an index folder (`indexing.store`)


def index_key(root: str | os.PathLike[str]) -> str:
    """The name of a root's index folder: it depends on the resolved root alone."""
    real = os.path.realpath(os.path.expanduser(os.fspath(root)))
    return hashlib.sha1(real.encode("utf-8", "surrogateescape")).hexdigest()[:16]


def index_base(base: str | os.PathLike[str] | None = None) -> Path:
    """The folder holding one index per root: `base` if given, else `$CODESEEK_INDEX_DIR`, else the
    user cache (`$XDG_CACHE_HOME/codeseek` or the platform cache folder)."""
    if base:
        return Path(base).expanduser()
    env = os.environ.get(ENV)
    if env:
        return Path(env).expanduser()
    xdg = os.environ.get("XDG_CACHE_HOME")
    return Path(xdg) / "codeseek" if xdg else Path(platformdirs.user_cache_dir("codeseek"))


def index_dir_for(root: str | os.PathLike[str], base: str | os.PathLike[str] | None = None) -> Path:
    """Where the index of `root` lives: `index_base(base) / index_key(root)`."""
    return index_base(base) / index_key(root)
