"""indexing.records: slotted records that pickle as their constructor's arguments."""

from __future__ import annotations

import pickle
from dataclasses import fields
from typing import Any

import pytest

from indexing.records import CallSite, Chunk, Definition, FileInfo, Import

RECORDS = [
    FileInfo("src/a.py", "python", 120, 7, ("source", "test")),
    Chunk("src/a.py", "python", 3, 9, 20, 180, "function", "Session.send", ("source",), "ab12",
          header="class Session:", id=41),
    Definition("send", "Session.send", "method", "src/a.py", 3, 9, 20, 180, 3, 8, "def send(self):",
               doc="Send it.", parent="Session", bases=("Base",), id=7),
    CallSite("src/a.py", 5, 8, 20, "rebuild_auth", "self", "Session.send", receiver_type="S"),
    Import("src/a.py", 1, "requests.utils", "quote", None),
]


@pytest.mark.parametrize("record", RECORDS, ids=lambda r: type(r).__name__)
def test_records_round_trip_through_pickle_as_their_arguments(record: Any) -> None:
    assert not hasattr(record, "__dict__")  # slotted
    back = pickle.loads(pickle.dumps(record, protocol=pickle.HIGHEST_PROTOCOL))
    assert back == record and type(back) is type(record)
    reduced = record.__reduce__()
    assert reduced == (type(record), tuple(getattr(record, f.name) for f in fields(record)))
