"""The records a cold update stored, kept for the call graph built from them next: `RecordLog`.

A cold command stores every file's definitions, call sites and imports, then builds its call graph
from them. Read back from SQLite, they took the Django sdist's main thread ~0.5 s alone and ~1 s beside
the embedding (`RecordReads.definitions`, `calls`, `imports`: 183k objects made again that the parse
had just made). An update that starts from an empty store and completes has stored exactly what the
store then holds, so `Workspace.update` keeps them (`UpdateResult.records`): the parse's own objects,
each definition with the id the store gave it and the strings that recur shared as `RecordReads`
shares them (one object per path, kind, parent, callee, receiver, caller, evidence, module and
imported name), in the order the store lists them (by id, by row). They carry the store revision the
update left (`StoredRecords.revision`); `retrievers.engine.graph_state` builds from them only while
the store is still at that revision and lets them go once used.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from indexing.records import CallSite, Definition, Import, ParseResult

__all__ = ["RecordLog", "StoredRecords"]


@dataclass
class StoredRecords:
    """Every definition, call site and import of the store at `revision`, as `RecordReads` lists them."""

    definitions: list[Definition] = field(default_factory=list)
    calls: list[CallSite] = field(default_factory=list)
    imports: list[Import] = field(default_factory=list)
    revision: int = -1


class RecordLog:
    """Collects each stored file's records (`add`, after the store wrote them) into `StoredRecords`."""

    def __init__(self) -> None:
        self.records = StoredRecords()
        self._shared: dict[Any, Any] = {None: None}

    def add(self, path: str, result: ParseResult) -> None:
        """The records of `result`, stored for `path` (its definitions carry their ids: `IndexStore`)."""
        one = self._shared.setdefault
        path = one(path, path)
        for d in result.definitions:
            d.path = path
            if d.qualified_name == d.name:
                d.qualified_name = d.name
            d.kind = one(d.kind, d.kind)
            d.parent = one(d.parent, d.parent)
            d.bases = tuple(d.bases)
        for s in result.calls:
            s.path = path
            s.callee = one(s.callee, s.callee)
            s.receiver = one(s.receiver, s.receiver)
            s.caller = one(s.caller, s.caller)
            s.receiver_type = one(s.receiver_type, s.receiver_type)
        for i in result.imports:
            i.path = path
            i.module = one(i.module, i.module)
            i.name = one(i.name, i.name)
        self.records.definitions.extend(result.definitions)
        self.records.calls.extend(result.calls)
        self.records.imports.extend(result.imports)
