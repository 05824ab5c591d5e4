"""Exact-case identifier preference: a definition named exactly as the query is typed ranks
above a definition whose name differs from it only in case (`Session` over `session`, `getUser` over
`GetUser`), in the fused route.

Applies when the query is one identifier (optionally dotted or behind `def`/`class`...; its last part
is the name). The fused list is left as it is unless a different-case definition ranks above an
exact-case one; then every exact-case definition below the first different-case one moves just above
it (their order kept, each scored a hair above the one it passes), and its explain says
`exact_case`. Nothing else moves: unrelated results keep their places relative to each other. The
direct route already orders these (structural tiers `exact` > `exact_folded`).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

from indexing.records import Chunk
from retrievers.base import StructuralDetail
from retrievers.ranking.rrf import Fused

_SEPARATORS = re.compile(r"\.|::|#")  # between the parts of a qualified name
_IDENT = re.compile(r"^[A-Za-z_$][\w$]*(?:(?:\.|::|#)[A-Za-z_$][\w$]*)*$")
_KEYWORDS = ("def", "class", "func", "fn", "function", "struct", "interface", "type", "trait", "enum")
EPSILON = 1e-9


def queried_name(text: str) -> str | None:
    """The identifier a query consists of (its last dotted part), else None."""
    words = text.strip().strip("`?").removesuffix("()").split()
    if len(words) == 2 and words[0].lower() in _KEYWORDS:
        words = words[1:]
    if len(words) != 1 or not _IDENT.match(words[0].strip("`")):
        return None
    return _SEPARATORS.split(words[0].strip("`"))[-1]


def _name_of(item: Fused, chunk: Chunk | None) -> str:
    """The definition a fused result stands for: the structural match's name, else the chunk's symbol."""
    detail = item.detail_of("structural")
    name = detail.name if isinstance(detail, StructuralDetail) else None
    if not name and chunk is not None and chunk.symbol and chunk.kind not in ("block", "text"):
        name = chunk.symbol
    if not name:
        return ""
    return _SEPARATORS.split(name)[-1] if "." in name or ":" in name or "#" in name else name


def prefer_exact_case(items: Sequence[Fused], text: str,
                      chunk_of: Callable[[int], Chunk | None]) -> list[Fused]:
    """`items` (best first) with exact-case definitions of the queried name above different-case ones."""
    name = queried_name(text)
    if name is None or not items:
        return list(items)
    folded = name.lower()
    names = [_name_of(f, chunk_of(f.chunk_id)) for f in items]
    first_variant = next((i for i, n in enumerate(names) if n != name and n.lower() == folded), None)
    if first_variant is None:
        return list(items)
    movers = [i for i in range(first_variant + 1, len(items)) if names[i] == name]
    if not movers:
        return list(items)
    passed = items[first_variant].score
    out = list(items[:first_variant])
    for n, i in enumerate(movers):
        item = items[i]
        item.score = max(item.score, passed + EPSILON * (len(movers) - n))
        item.explain["exact_case"] = True
        out.append(item)
    moved = set(movers)
    out += [f for i, f in enumerate(items) if i >= first_variant and i not in moved]
    return out
