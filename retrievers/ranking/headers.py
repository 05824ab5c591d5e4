"""C interface headers: a `.h` file whose implementation is a same-named `.c` file in the workspace.

In C the header restates the module's API (prototypes, the structs it passes around, macros) and the
`.c` file of the same stem implements it (curl `lib/http_proxy.h` / `lib/http_proxy.c`, redis
`src/server.h` / `src/server.c`). A question about how something works is answered by the
implementation, yet the header's short chunks match the question's words densely; they are scored
x `RankingConfig.c_header_factor` for natural-language queries (an identifier lookup keeps them: a
struct is defined in its header). C++ headers (`.hpp`, and `.h` beside `.cc`/`.cpp`) are not
demoted: templates and inline code make the header the implementation (abseil, fmt, nlohmann).
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import PurePosixPath

from retrievers.snapshot import Snapshot


def interface_headers(paths: Iterable[str]) -> frozenset[str]:
    """The `.h` paths among `paths` whose stem is also the stem of a `.c` path (in any folder)."""
    headers: list[tuple[str, str]] = []
    sources: set[str] = set()
    for path in paths:
        p = PurePosixPath(path)
        if p.suffix == ".h":
            headers.append((path, p.stem))
        elif p.suffix == ".c":
            sources.add(p.stem)
    return frozenset(path for path, stem in headers if stem in sources)


def interface_headers_of(snapshot: Snapshot) -> frozenset[str]:
    """`interface_headers` of a snapshot's indexed paths, built once and kept on the snapshot."""
    return snapshot.memo((__name__, "interface_headers"), lambda: interface_headers(snapshot.by_path),
                         saved=True)
