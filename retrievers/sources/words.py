"""Words of queries, names and paths, shared by the sources and ranking: the stopwords a question's
keywords leave out, identifier words, prefix matching of word forms, and whether a file is the home of
a definition (named after it)."""

from __future__ import annotations

from functools import lru_cache
from pathlib import PurePosixPath

from retrievers.sources.tokenize import identifiers, split_identifier

STOPWORDS = frozenset(
    """a an and are as at be by can do does did for from has have how i if in into is it its me my not of
    on or our the their then there these this those to was we what when where which who why will with
    you your code function functions method methods class classes file files get set use used using
    work works find show does handle handles happen happens should would could def fn func defined
    definition declared implemented calls called callers caller usages usage references impact blast
    radius breaks break depends change changing""".split()
)


def split_words(text: str) -> list[str]:
    """Lowercased words of text, identifiers split on `_`, camelCase and digits (digits dropped)."""
    return [part for ident in identifiers(text) for part in split_identifier(ident) if part.isalpha()]


def query_keywords(text: str, min_len: int = 3) -> list[str]:
    """Distinct content words of a query (stopwords dropped, at least `min_len` letters); a query that
    is one shorter word alone (`g`, `db`) keeps it: a short module name is all such a query says."""
    seen: dict[str, None] = {}
    words = split_words(text)
    for word in words:
        if len(word) >= min_len and word not in STOPWORDS:
            seen.setdefault(word, None)
    if not seen and len(words) == 1 and words[0] not in STOPWORDS:
        seen[words[0]] = None
    return list(seen)


def short_words(text: str, min_len: int = 3) -> list[str]:
    """Distinct query words shorter than `min_len` letters (two at least), stopwords dropped: `vi` in
    "vi mock and spy utilities", `io`, `db`. Path keywords only when a candidate file is named so."""
    out: dict[str, None] = {}
    for word in split_words(text):
        if 2 <= len(word) < min_len and word not in STOPWORDS:
            out.setdefault(word, None)
    return list(out)


def prefix_match(a: str, b: str, min_prefix: int = 3) -> bool:
    """Words match when they share a prefix of >= max(min_prefix, shorter length - 2) letters
    ("dependency" meets "dependencies", "session" meets "sessions", "auth" meets "authentication");
    a word shorter than `min_prefix` matches only itself."""
    if len(a) < min_prefix or len(b) < min_prefix:
        return a == b
    common = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        common += 1
    return common >= max(min_prefix, min(len(a), len(b)) - 2)


def home_file(path: str, name: str) -> bool:
    """Whether `path` is the file named after the definition `name` (its stem, case-folded: C#'s
    `SqlMapper.cs` for the partial class also declared in `SqlMapper.Async.cs`, `request.rb`)."""
    return bool(name) and _folded_stem(path) == name.rsplit(".", 1)[-1].lower()


@lru_cache(maxsize=16384)
def _folded_stem(path: str) -> str:
    """A path's stem, case-folded (a structural build asks for every class's file: 10k on the sdist)."""
    return PurePosixPath(path).stem.lower()


def module_declaration(path: str, symbol: str) -> bool:
    """Whether `symbol` names the module `path` is (Haskell's `Data.Aeson.Parser` in
    `src/Data/Aeson/Parser.hs`): always in its home file, so no primary declaration among others."""
    return "." in symbol and PurePosixPath(path).with_suffix("").as_posix().endswith(symbol.replace(".", "/"))
