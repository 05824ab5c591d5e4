"""Core records shared by every layer: files, chunks, definitions, call sites, imports.

Lines are 1-based and inclusive; columns are 0-based byte offsets within the line; paths are
workspace-relative POSIX strings. No record carries source text: snippets are read from the
working tree (or an open editor buffer) when they are shown. The records are slotted: a large tree
holds hundreds of thousands of them, and each saves its own attribute dict.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from operator import attrgetter
from typing import Any, TypeVar

_R = TypeVar("_R")


def _pickled_as_arguments(cls: type[_R]) -> type[_R]:
    """Pickle a record as its constructor's arguments, in field order: no per-object state dict (the
    saved call graph holds hundreds of thousands of call sites; 300k of them dump in half the time,
    load in about half and take 30% less space than a slotted record's default pickle)."""
    values = attrgetter(*(f.name for f in fields(cls)))  # type: ignore[arg-type]

    def __reduce__(self: Any) -> tuple[type[_R], tuple[Any, ...]]:
        return cls, values(self)

    cls.__reduce__ = __reduce__  # type: ignore[assignment,method-assign]
    return cls

# Chunk kinds.
CHUNK_KINDS = ("function", "method", "class", "block", "section", "text")
# File labels.
LABELS = ("source", "test", "doc", "config", "example", "vendor", "generated", "legacy")


@_pickled_as_arguments
@dataclass(frozen=True, slots=True)
class FileInfo:
    """A file the scanner accepted for indexing."""

    path: str  # workspace-relative POSIX path
    language: str | None  # grammar name (tree-sitter-language-pack) or a text kind ("markdown", ...)
    size: int
    mtime_ns: int
    labels: tuple[str, ...] = ("source",)


@_pickled_as_arguments
@dataclass(slots=True)
class Chunk:
    """A structure-aware slice of one file, the unit every retriever ranks."""

    path: str
    language: str | None
    start_line: int
    end_line: int
    start_byte: int
    end_byte: int
    kind: str  # one of CHUNK_KINDS
    symbol: str | None  # qualified symbol, e.g. "SessionRedirectMixin.rebuild_method"
    labels: tuple[str, ...]
    content_hash: str  # hex digest of the chunk's bytes
    header: str = ""  # enclosing scope (e.g. "class Session(SessionRedirectMixin):"), used for embedding
    id: int = 0  # assigned by the store


@_pickled_as_arguments
@dataclass(slots=True)
class Definition:
    """A named declaration: function, method, class, interface, struct, enum, module-level constant..."""

    name: str
    qualified_name: str  # "Class.method" or "outer.inner"; the file path is not part of it
    kind: str  # function, method, class, interface, struct, enum, trait, module, variable, ...
    path: str
    start_line: int
    end_line: int
    start_byte: int
    end_byte: int
    name_line: int  # line and column of the name token (for LSP selection ranges)
    name_column: int
    signature: str  # first line of the declaration, stripped
    doc: str = ""  # first line of the doc comment / docstring
    parent: str | None = None  # qualified name of the enclosing class or definition
    bases: tuple[str, ...] = ()  # base classes / implemented interfaces as written
    id: int = 0  # assigned by the store


@_pickled_as_arguments
@dataclass(slots=True)
class CallSite:
    """One call expression: `receiver.callee(...)` inside `caller`."""

    path: str
    line: int
    column: int
    end_column: int
    callee: str  # the called name as written, without receiver ("rebuild_auth")
    receiver: str | None  # receiver text as written ("self", "self.session", "os.path"), None if bare
    caller: str | None  # qualified name of the enclosing definition, None at module level
    # What local evidence says the receiver is (see indexing/receivers.py): "T:Session" (a type as
    # written), "C:make_session" (the value a call returns), "B:dict" (a builtin value), "S" (an
    # alias of self/this); None when nothing is known.
    receiver_type: str | None = None


@_pickled_as_arguments
@dataclass(slots=True)
class Import:
    """One imported name: `from module import name as alias` / `import module as alias`."""

    path: str
    line: int
    module: str  # module as written ("requests.utils", "./router", "fmt")
    name: str | None  # imported name, None for a whole-module import
    alias: str | None  # local alias, None if the name is used as is


@dataclass
class ParseResult:
    """Everything one parse of one file yields."""

    chunks: list[Chunk] = field(default_factory=list)
    definitions: list[Definition] = field(default_factory=list)
    calls: list[CallSite] = field(default_factory=list)
    imports: list[Import] = field(default_factory=list)
    # "ok": parsed cleanly; "partial": syntax errors, chunked what parsed;
    # "fallback": line chunks (no grammar, or the tree is mostly errors).
    status: str = "ok"
    error: str | None = None
    # What the update's feed prepared from this parse where it ran (`indexing.file_feed`), or None.
    prepared: Any = None
