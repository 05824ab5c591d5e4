"""How a workspace's index contents are judged current.

The content hash stored per file, the parser fingerprint (a digest of the parsing code, its queries
and the grammar pack: when it changes every file is re-parsed) and the short, countable reasons a
parse reports. Where the index lives is `indexing.location`.
"""

from __future__ import annotations

import functools
import hashlib
import importlib.util
import os
from pathlib import Path

from indexing.records import ParseResult


def content_hash(data: bytes) -> str:
    return hashlib.blake2b(data, digest_size=16).hexdigest()


def error_reasons(result: ParseResult) -> list[str]:
    """Short, countable reasons for what `parse_file` reported (its messages carry positions)."""
    if not result.error:
        return []
    reasons = []
    for part in result.error.split(";"):
        text = part.strip().lower()
        if "utf-8" in text:
            reasons.append("invalid-utf8")
        elif "syntax error" in text:
            reasons.append("mostly-unparsed" if "unparsed" in text else "syntax-errors")
        elif "parser" in text:
            reasons.append("parser-failure")
        elif "no grammar" in text:
            reasons.append("no-grammar")
        elif text:
            reasons.append(result.status)
    return reasons


# The modules and queries whose code decides what a parse yields.
_PARSER_FILES = ("parse.py", "chunker.py", "symbols.py", "doc_text.py", "languages.py", "labels.py",
                 "records.py", "source_encoding.py")


@functools.lru_cache(maxsize=1)
def parser_fingerprint() -> str:
    """A digest of the parsing code, its queries and the grammar pack: when it changes, every file is
    re-parsed. Computed from the files rather than by importing the parser, so an unchanged re-run
    does not pay for loading the parsing stack."""
    here = Path(__file__).resolve().parent
    digest = hashlib.blake2b(digest_size=8)
    names = [*_PARSER_FILES, *sorted(f"queries/{p.name}" for p in (here / "queries").glob("*.scm"))]
    for name in names:
        try:
            data = (here / name).read_bytes()
        except OSError:
            continue
        digest.update(name.encode() + b"\0" + data + b"\0")
    for module in ("tree_sitter_language_pack", "tree_sitter"):
        spec = importlib.util.find_spec(module)
        origin = spec.origin if spec is not None else None
        if origin:
            st = os.stat(origin)
            digest.update(f"{module}:{st.st_size}:{st.st_mtime_ns}".encode())
    return digest.hexdigest()
