"""What the semantic retriever embeds for a chunk, and the key its vector is cached under.

`embed_text(chunk, text)`: the chunk's path (middle dropped when long), its enclosing-scope header,
its symbol and its code with blank lines and the common indent removed. `cache_key` hashes the model
id with everything that text is made of (the chunk's content hash standing for its code), so an
unchanged chunk is embedded once, across runs, and a lookup needs no file read.
"""

from __future__ import annotations

import hashlib

from indexing.records import Chunk

__all__ = ["EMBED_TEXT_VERSION", "cache_key", "embed_text", "normalize_code", "truncate_path"]

EMBED_TEXT_VERSION = 1  # bump when embed_text changes: it is part of every cache key


def truncate_path(path: str, max_chars: int = 48) -> str:
    """Keep both ends of a long path: "src/requests/…/adapters.py"."""
    if len(path) <= max_chars:
        return path
    parts = path.split("/")
    if len(parts) < 3:
        return path[: max_chars // 2] + "…" + path[-(max_chars - max_chars // 2 - 1) :]
    head, tail = [parts[0]], [parts[-1]]
    i, j = 1, len(parts) - 2
    take_head = True
    while i <= j:
        part = parts[i] if take_head else parts[j]
        trial = head + [part] if take_head else head
        trial_tail = tail if take_head else [part] + tail
        if len("/".join(trial + ["…"] + trial_tail)) > max_chars:
            break
        head, tail = trial, trial_tail
        i, j = (i + 1, j) if take_head else (i, j - 1)
        take_head = not take_head
    return "/".join(head + ["…"] + tail) if i <= j else path


def normalize_code(text: str, max_chars: int | None = None) -> str:
    """Blank lines dropped, trailing spaces stripped, the common indent removed (what
    `textwrap.dedent` gives once tabs are expanded, without its regular expressions); the first
    `max_chars` characters of that when given (only those lines are joined)."""
    lines = [line.rstrip() for line in text.expandtabs(4).splitlines() if line.strip()]
    if not lines:
        return ""
    margin = min(len(line) - len(line.lstrip(" ")) for line in lines)
    if max_chars is not None:
        kept, size = 0, 0
        while kept < len(lines) and size <= max_chars:
            size += len(lines[kept]) - margin + 1
            kept += 1
        lines = lines[:kept]
    joined = "\n".join(line[margin:] for line in lines) if margin else "\n".join(lines)
    return joined if max_chars is None else joined[:max_chars]


def embed_text(chunk: Chunk, text: str, max_chars: int = 1500, max_path_chars: int = 48) -> str:
    """The text embedded for a chunk: path, enclosing header, symbol, normalized code."""
    parts = [truncate_path(chunk.path, max_path_chars)]
    if chunk.header.strip():
        parts.append(chunk.header.strip())
    if chunk.symbol:
        parts.append(chunk.symbol)
    parts.append(normalize_code(text, max_chars))
    return "\n".join(parts)


def cache_key(model_id: str, chunk: Chunk, document_prefix: str = "", text: str | None = None, *,
              max_chars: int = 1500, max_path_chars: int = 48) -> str:
    """blake2b over the model and everything `embed_text` is made of.

    The chunk's content hash stands for its code, so a cache lookup needs no file read; a chunk
    without a content hash is keyed by its text (which must then be given).
    """
    body = chunk.content_hash or hashlib.blake2b((text or "").encode("utf-8", "replace")).hexdigest()
    material = "\0".join((
        model_id, str(EMBED_TEXT_VERSION), document_prefix, str(max_chars),
        truncate_path(chunk.path, max_path_chars), chunk.header.strip(), chunk.symbol or "", body,
    ))
    return hashlib.blake2b(material.encode("utf-8", "replace"), digest_size=16).hexdigest()
