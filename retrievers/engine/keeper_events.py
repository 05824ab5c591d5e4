"""What the index keeper (`retrievers.engine.keeper`) reports: the typed events its listener gets on the
worker's thread, one `StepBegun`, some `StepAdvanced` and one `StepEnded` per step of a job, and a
`Notice` for what the user should read; and `JobReport`, what the last job did (for status).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Literal

__all__ = ["JobReport", "KeeperEvent", "KeeperStopped", "Listener", "Notice", "Step", "StepAdvanced",
           "StepBegun", "StepEnded", "step_of"]

Step = Literal["indexing", "embedding", "transformer"]
STEP_OF: dict[str, Step] = {"embedding": "embedding", "distilling": "embedding", "distilled": "embedding",
                             "transformer": "transformer"}  # the engine's phase words; others: indexing


class KeeperStopped(Exception):
    """Raised from a progress callback to abandon a job (the keeper is stopping)."""


@dataclass(frozen=True)
class StepBegun:
    """A step starts: `paths` files asked (indexing; None: every file), `pending` chunks to embed."""

    step: Step
    paths: int | None = None
    pending: int = 0


@dataclass(frozen=True)
class StepAdvanced:
    """Progress within a step; `phase` is the engine's word for it (indexing, graph, embedding,
    distilling, distilled, transformer)."""

    step: Step
    phase: str
    done: int
    total: int


@dataclass(frozen=True)
class StepEnded:
    """A step ended (done or not): `count` chunks indexed, with a vector, or with a transformer vector."""

    step: Step
    count: int


@dataclass(frozen=True)
class Notice:
    """Something the user should read: a refresh's note, a repair, a failed job."""

    message: str


KeeperEvent = StepBegun | StepAdvanced | StepEnded | Notice
Listener = Callable[[KeeperEvent], None]


@dataclass
class JobReport:
    """What the last job did (filled in as its phases end)."""

    paths: int | None  # files asked (None: every file)
    parsed: int
    unchanged: int
    phase1_s: float
    notes: list[str]  # phase 1's
    embedded: int | None = None  # None: nothing was waiting for a vector
    embed_notes: list[str] = field(default_factory=list)
    phase2_s: float | None = None
    transformer_embedded: int | None = None  # None: phase 3 did not run
    phase3_s: float | None = None


def step_of(phase: str) -> Step:
    """The step an engine phase word belongs to (a one-call refresh reports every phase)."""
    return STEP_OF.get(phase, "indexing")
