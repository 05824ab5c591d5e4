"""Which index a tantivy folder belongs to: its identity marker, `tantivy/codeseek-text.json`.

The marker travels with the folder and holds the layout version, the owning store's `generation`
(a token the SQLite store draws when its database is created: `indexing.store`), the sync key the
engine last brought it to (the store records the same key as `text.synced`), and a digest of
tantivy's own `meta.json` (its segment list and opstamp) as of that sync. So:

- a folder copied in from another index names another generation: it is wiped and rebuilt;
- a folder whose segments changed behind the marker's back (another `meta.json`), or one a killed
  process committed to without marking, no longer matches: the engine reconciles it against the
  store (`TextRetriever.index`) instead of taking it as it is (`adopt`).

`problem()` answers `codeseek status`, which must not call a foreign part healthy.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

MARKER = "codeseek-text.json"
META = "meta.json"


def read_marker(folder: Path) -> dict[str, Any]:
    """The marker's fields ({} when it is missing or unreadable)."""
    try:
        data = json.loads((folder / MARKER).read_text())
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def meta_digest(folder: Path) -> str:
    """A digest of tantivy's `meta.json` ("" when there is none): changes with every commit."""
    try:
        return hashlib.blake2b((folder / META).read_bytes(), digest_size=12).hexdigest()
    except OSError:
        return ""


def write_marker(folder: Path, version: int, owner: str = "", synced: str = "") -> dict[str, Any]:
    """Record `owner` and `synced` with the current `meta.json` digest (a read-only index keeps its
    old marker: the next writable process marks it); returns the fields."""
    fields: dict[str, Any] = {"version": version}
    if owner:
        fields.update(index=owner, synced=synced, meta=meta_digest(folder))
    try:
        if read_marker(folder) != fields:
            tmp = folder / (MARKER + ".tmp")
            tmp.write_text(json.dumps(fields))
            tmp.replace(folder / MARKER)
    except OSError:
        pass
    return fields


def foreign(marker: dict[str, Any], owner: str) -> bool:
    """The marker names another index than `owner` (a marker without an owner is not foreign)."""
    return bool(owner) and bool(marker.get("index")) and marker.get("index") != owner


def matches(folder: Path, owner: str, synced: str) -> bool:
    """The folder is exactly as the engine of `owner` left it at sync key `synced`."""
    marker = read_marker(folder)
    return bool(owner) and marker.get("index") == owner and marker.get("synced") == synced \
        and marker.get("meta") == meta_digest(folder)


def problem(index_dir: Path, owner: str) -> str | None:
    """Why the index's tantivy folder cannot be trusted as it is, or None (also None when it is not
    built yet, or was built before markers named their index: the next search checks it)."""
    folder = Path(index_dir) / "tantivy"
    if not (folder / META).exists():
        return None
    marker = read_marker(folder)
    if not marker:
        return "the text index has no identity marker (the next search rebuilds it)"
    if foreign(marker, owner):
        return "the text index belongs to another index (the next search rebuilds it)"
    if marker.get("index") and marker.get("meta") != meta_digest(folder):
        return "the text index changed since codeseek last wrote it (the next search checks it)"
    return None
