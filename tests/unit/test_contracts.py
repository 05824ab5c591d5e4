"""Contract files: interface-only files a class implements or restates (retrievers.ranking.contracts)."""

from __future__ import annotations

from indexing.records import Chunk
from retrievers.ranking.contracts import (
    base_name,
    contract_factors,
    contract_files,
    named_as_contract,
    type_only_files,
)
from retrievers.ranking.profile import RankingConfig
from retrievers.ranking.rrf import Fused, apply_priors
from tests.unit.retrieval_sample import parse_sample

LARAVEL_LIKE = {
    "Contracts/Cache/Repository.php": """<?php
namespace Illuminate\\Contracts\\Cache;
/** Retrieve an item from the cache by key. */
interface Repository { public function get($key, $default = null); }
""",
    "Cache/Repository.php": """<?php
namespace Illuminate\\Cache;
use Illuminate\\Contracts\\Cache\\Repository as CacheContract;
class Repository implements CacheContract {
    public function get($key, $default = null) { return $this->store->get($key) ?? $default; }
}
""",
    "Formatter/FormatterInterface.php": """<?php
interface FormatterInterface { public function format(array $record); }
""",
    "Formatter/LineFormatter.php": """<?php
class LineFormatter implements FormatterInterface { public function format(array $record) { return ''; } }
""",
    "Events/Listener.php": """<?php
interface Listener { public function handle($event); }
""",
    "Api/Deferred.php": """<?php
interface Deferred { public function await(); }
""",
    "Api/DeferredCoroutine.php": """<?php
class DeferredCoroutine implements Deferred { public function await() { return 1; } }
""",
    "Mixed.php": """<?php
interface Shape { public function area(); }
class Square implements Shape { public function area() { return 1; } }
""",
}


def test_base_name_strips_namespaces_and_generics() -> None:
    assert base_name("\\Illuminate\\Contracts\\Cache\\Repository") == "Repository"
    assert base_name("IFormatter<T>") == "IFormatter" and base_name("pkg.Iface") == "Iface"
    assert base_name("  ") == ""


def test_contract_files_are_interface_only_files_a_class_implements_or_restates() -> None:
    parsed = parse_sample(LARAVEL_LIKE)
    assert contract_files(parsed.definitions) == {
        "Contracts/Cache/Repository.php",  # the class Repository restates it (implemented through an alias)
        "Formatter/FormatterInterface.php",  # LineFormatter implements it
    }  # nobody implements Listener; Deferred is not named as a contract; Mixed.php holds the class too


def test_named_as_contract() -> None:
    parsed = parse_sample(LARAVEL_LIKE)
    named = {d.name for d in parsed.definitions if d.kind == "interface" and named_as_contract(d)}
    assert named == {"Repository", "FormatterInterface"}  # by its Contracts/ folder, by its suffix


def chunk(cid: int, path: str) -> Chunk:
    return Chunk(path=path, language="php", start_line=1, end_line=5, start_byte=0, end_byte=10,
                 kind="class", symbol=None, labels=("source",), content_hash=f"h{cid}", id=cid)


def test_contract_factors_spare_identifier_lookups_and_questions_about_interfaces() -> None:
    files = {"Contracts/Cache/Repository.php"}
    chunks = [chunk(1, "Contracts/Cache/Repository.php"), chunk(2, "Cache/Repository.php")]
    assert contract_factors(chunks, files, ["cache", "store", "repository"], False) == {1: 0.5}
    assert contract_factors(chunks, files, ["repository"], True) == {}
    assert contract_factors(chunks, files, ["cache", "contract"], False) == {}
    # a question about the shape of something (its types, its options) is answered by declarations
    assert contract_factors(chunks, files, ["patch", "types"], False) == {}
    assert contract_factors(chunks, files, ["configuration", "options"], False) == {}
    assert contract_factors(chunks, files, ["cache"], False, RankingConfig(contract_factor=1.0)) == {}


def test_apply_priors_puts_the_implementation_above_its_contract() -> None:
    chunks = {1: chunk(1, "Contracts/Cache/Repository.php"), 2: chunk(2, "Cache/Repository.php")}
    fused = [Fused(1, 0.05), Fused(2, 0.04)]
    files = {"Contracts/Cache/Repository.php"}
    ranked = apply_priors(fused, chunks, {}, query_text="cache store repository", contracts=files)
    assert [f.chunk_id for f in ranked] == [2, 1]
    assert ranked[1].explain["factors"]["contract"] == 0.5
    asked = apply_priors(fused, chunks, {}, query_text="the cache repository contract", contracts=files)
    assert [f.chunk_id for f in asked] == [1, 2]


TYPESCRIPT_TYPES = {
    "node/types/coverage.ts": """export interface CoverageProvider { name: string; clean(): Promise<void> }
export type CoverageReporter = 'text' | 'html'
""",
    "node/coverage.ts": """import type { CoverageProvider } from './types/coverage'
export interface Loaded { provider: CoverageProvider }
export class CoverageLoader { load(): Loaded { return { provider: null as any } } }
""",
    "node/types/index.d.ts": """export interface Declared { x: number }
""",
    "node/helpers.ts": """export function clean(): void {}
""",
}


def test_type_only_files_are_typescript_files_of_interfaces_and_type_aliases() -> None:
    parsed = parse_sample(TYPESCRIPT_TYPES)
    assert type_only_files(parsed.definitions) == {"node/types/coverage.ts"}  # .d.ts has its own factor
    assert contract_files(parsed.definitions) == set()  # nothing named as a contract
