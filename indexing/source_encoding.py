"""Python sources that declare another encoding (PEP 263: `# -*- coding: latin-1 -*-` on line 1 or 2)
are indexed and shown as their text: `as_utf8` re-encodes their bytes to UTF-8 where a file is read
(the parse in `file_updates`, snippets and chunk text in `Workspace.read_bytes`, the embedding worker,
`codeseek chunks`), so every byte offset, hash and decode downstream stays UTF-8. Lines keep their
numbers (a newline is one byte in every encoding PEP 263 allows). Editor buffers are text already and
are not re-encoded. A file whose bytes are not valid in the declared encoding, or that names an
unknown one, is left as it is (the parse then reports `invalid-utf8`, as before).
"""

from __future__ import annotations

import codecs
import re

__all__ = ["as_utf8", "declared_encoding"]

PYTHON_SUFFIXES = (".py", ".pyi", ".pyw")
# PEP 263's own expression, on a comment line.
_DECLARATION = re.compile(rb"^[ \t\f]*#.*?coding[:=][ \t]*([-\w.]+)")


def declared_encoding(path: str, data: bytes) -> str | None:
    """The codec name a Python file declares, when it is not UTF-8 (None otherwise, or when unknown)."""
    if not path.endswith(PYTHON_SUFFIXES) or b"coding" not in data[:400]:
        return None
    for line in data.split(b"\n", 2)[:2]:
        found = _DECLARATION.match(line)
        if found is None:
            if line.strip() and not line.lstrip().startswith(b"#"):
                return None  # code on line 1: a declaration on line 2 does not count
            continue
        try:
            name = codecs.lookup(found.group(1).decode("ascii")).name
        except (LookupError, UnicodeDecodeError):
            return None
        return None if name in ("utf-8", "utf-8-sig") else name
    return None


def as_utf8(path: str, data: bytes) -> bytes:
    """`data` as UTF-8 when the file declares another encoding and its bytes are valid in it."""
    name = declared_encoding(path, data)
    if name is None:
        return data
    try:
        return data.decode(name).encode("utf-8")
    except (UnicodeDecodeError, UnicodeEncodeError):
        return data
