"""Named errors of the call-graph package."""

from __future__ import annotations


class GraphError(Exception):
    """A call-graph request that cannot be answered, or records the graph cannot be built from."""


class UnknownDefinitionError(GraphError, KeyError):
    """A definition id that is not in the graph."""

    def __str__(self) -> str:
        return f"unknown definition id {self.args[0]!r}" if self.args else "unknown definition id"


class DuplicateIdError(GraphError, ValueError):
    """Two definitions given to the graph share an id (ids must be unique: assign them first)."""
