"""Contract files: files that only declare interfaces named as contracts (C#'s `IFormatter`, PHP's
`HandlerInterface`, or any interface in a `Contracts/` or `Interfaces/` folder) which a class of the
workspace implements or restates under the same name (Laravel's `Contracts/Cache/Repository.php`
beside the class `Cache/Repository.php`). An interface not named so is the API itself in many
codebases (Kotlin's `Deferred`, ktor's `HttpClientEngine`) and is left alone.

A question about how something works is answered by the implementation; the contract repeats its
vocabulary in doc comments over bodiless signatures and used to outrank it
(docs/tuning/2026-11-30-issue-9-*.md).
`contract_factors` scores the chunks of such files x `RankingConfig.contract_factor` for questions
that do not ask for an interface, contract, protocol, type or options (a question about the shape of
something is answered by its declarations: immer's "what types describe a patch" by `Patch` in
`types/types-external.ts`); identifier lookups are left alone (the definition bonus decides those).
Computed once per index snapshot and kept on it (`contract_files_of`).
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable, Sequence

from indexing.records import Chunk, Definition
from retrievers.ranking.profile import DEFAULT_CONFIG, RankingConfig
from retrievers.snapshot import Snapshot

INTERFACE_KINDS = frozenset({"interface"})
# Definitions that implement or restate an interface (an enum or a record may implement one too).
IMPLEMENTING_KINDS = frozenset({"class", "struct", "object", "enum", "record"})
_TYPE_KINDS = INTERFACE_KINDS | IMPLEMENTING_KINDS | {"trait", "type", "protocol"}
ASKING_WORDS = frozenset({"interface", "interfaces", "contract", "contracts", "protocol", "protocols",
                          "type", "types", "option", "options"})
_GENERIC = re.compile(r"<.*$|\(.*$|\[.*$")
_CONTRACT_NAME = re.compile(r"^I[A-Z]|(?:Interface|Contract)$")
CONTRACT_FOLDERS = frozenset({"contracts", "interfaces"})


def named_as_contract(d: Definition) -> bool:
    """An interface whose name (`IFoo`, `FooInterface`, `FooContract`) or folder (`Contracts/`,
    `Interfaces/`) says it is a contract for implementations."""
    folders = {part.lower() for part in d.path.split("/")[:-1]}
    return bool(_CONTRACT_NAME.search(d.name)) or bool(CONTRACT_FOLDERS & folders)


def base_name(written: str) -> str:
    """The bare type name of a base as written: `\\Illuminate\\Contracts\\Cache\\Repository`,
    `IFormatter<T>`, `pkg.Iface` -> `Repository`, `IFormatter`, `Iface`."""
    text = _GENERIC.sub("", written.strip())
    return re.split(r"[\\.:]+", text)[-1].strip() if text else ""


def contract_files(definitions: Iterable[Definition]) -> frozenset[str]:
    """The paths whose top-level types are all interfaces, one of which is named as a contract
    (`named_as_contract`) and implemented (named as a base) or restated (a class of the same name) by a
    class of the workspace."""
    types: dict[str, list[Definition]] = {}
    implemented: set[str] = set()
    class_names: set[str] = set()
    for d in definitions:
        if d.kind in IMPLEMENTING_KINDS:
            class_names.add(d.name)
            implemented.update(base_name(b) for b in d.bases)
        if d.kind in _TYPE_KINDS and d.parent is None:
            types.setdefault(d.path, []).append(d)
    return frozenset(
        path for path, found in types.items()
        if all(d.kind in INTERFACE_KINDS for d in found)
        and any(named_as_contract(d) and (d.name in implemented or d.name in class_names) for d in found)
    )


TYPE_ONLY_KINDS = frozenset({"interface", "type"})
_TS_SUFFIXES = (".ts", ".tsx", ".mts", ".cts")


def type_only_files(definitions: Iterable[Definition]) -> frozenset[str]:
    """TypeScript files (not `.d.ts`) whose top-level definitions are all interfaces and type aliases:
    hand-written declaration files (`node/types/config.ts`) that restate an API the code implements."""
    kinds: dict[str, set[str]] = {}
    for d in definitions:
        if d.parent is None and d.path.endswith(_TS_SUFFIXES) and not d.path.endswith(".d.ts"):
            kinds.setdefault(d.path, set()).add(d.kind)
    return frozenset(path for path, found in kinds.items() if found and found <= TYPE_ONLY_KINDS)


def contract_files_of(snapshot: Snapshot, type_only: bool = False) -> frozenset[str]:
    """`contract_files` of a snapshot's definitions (with `type_only_files` when `type_only`), built once
    per `type_only` and kept on the snapshot."""
    def build() -> frozenset[str]:
        files = contract_files(snapshot.definitions.values())
        return files | type_only_files(snapshot.definitions.values()) if type_only else files
    return snapshot.memo((__name__, "contract_files", type_only), build, saved=True)


def contract_factors(
    candidates: Sequence[Chunk], files: Collection[str], query_words: Collection[str],
    identifier_query: bool, config: RankingConfig = DEFAULT_CONFIG,
) -> dict[int, float]:
    """Per chunk id, `config.contract_factor` for the candidates in a contract file, unless the query
    is an identifier lookup or asks for an interface or contract (`query_words`, lower case)."""
    if identifier_query or not files or config.contract_factor >= 1.0 or ASKING_WORDS & set(query_words):
        return {}
    return {chunk.id: config.contract_factor for chunk in candidates if chunk.path in files}
