"""File labels from path and name rules: source, test, doc, config, example, vendor, generated, legacy.

Labels let ranking demote tests, docs, vendored and generated code unless a query asks for them.
A file may carry several labels (`tests/fixtures/README.md` is test and doc); `source` is given
only when no other label applies. The rules look at the path alone (no file is read), and cover the
conventions of every supported language. The result is ordered as `records.LABELS`.
`legacy` (code kept for old callers: a folder named legacy/deprecated/compat...) sits beside the
others: `pydantic/deprecated/json.py` is ("source", "legacy"). Only folder names count: click keeps
real answers in `_compat.py`, a file.
"""

from __future__ import annotations

import re
from functools import lru_cache

from indexing.records import LABELS

TEST_DIRS = frozenset({"test", "tests", "__tests__", "spec", "specs", "__mocks__", "testdata", "test_data",
                       "e2e", "integration_tests", "unittests", "unit_tests"})
DOC_DIRS = frozenset({"doc", "docs", "documentation", "man"})
EXAMPLE_DIRS = frozenset({"example", "examples", "sample", "samples", "demo", "demos", "_examples"})
VENDOR_DIRS = frozenset({"vendor", "vendors", "vendored", "_vendor", "third_party", "third-party",
                         "thirdparty", "3rdparty", "external", "externals", "extern", "node_modules",
                         "bower_components", "site-packages"})
GENERATED_DIRS = frozenset({"generated", "__generated__", "gen-src", "autogen"})
LEGACY_DIRS = frozenset({"legacy", "deprecated", "compat", "backcompat", "obsolete"})

TEST_NAME = re.compile(
    r"""(
      ^test_.*\.py$ | .*_test\.py$ | ^conftest\.py$ | ^tests?\.py$
    | .*_test\.go$
    | .*\.(test|spec)\.(js|jsx|mjs|cjs|ts|tsx|mts|cts)$
    | .*(Test|Tests|TestCase|IT)\.(java|kt|kts|scala|groovy)$ | .*(Spec|Suite)\.(scala|kt|groovy)$
    | .*(Test|Tests)\.cs$
    | .*_(spec|test)\.rb$ | ^test_.*\.rb$
    | .*Test\.php$
    | .*_(test|spec)\.(lua|exs?|dart)$
    | .*(Tests?|Spec)\.swift$
    | ^test_.*\.(c|cc|cpp|cxx)$ | .*_(test|unittest)\.(c|cc|cpp|cxx|h|hpp)$
    | .*\.bats$ | ^test_.*\.sh$ | .*_test\.sh$
    )""",
    re.VERBOSE,
)
DOC_EXTS = (".md", ".markdown", ".mdx", ".rst", ".txt", ".adoc", ".asciidoc", ".rdoc", ".org", ".tex", ".pod")
DOC_NAMES = frozenset({"readme", "changelog", "changes", "history", "license", "licence", "copying",
                       "authors", "contributors", "contributing", "notice", "news", "todo", "faq"})
CONFIG_EXTS = (".toml", ".yaml", ".yml", ".json", ".jsonc", ".json5", ".ini", ".cfg", ".conf", ".properties",
               ".env", ".editorconfig", ".xml", ".plist", ".gradle", ".lock")
CONFIG_NAMES = frozenset({"makefile", "gnumakefile", "dockerfile", "containerfile", "cmakelists.txt",
                          "requirements.txt", "constraints.txt", "pipfile", "gemfile", "rakefile",
                          "procfile", "vagrantfile", "justfile", "manifest.in", ".gitattributes",
                          ".gitignore", ".dockerignore", ".npmrc", ".babelrc", ".eslintrc", ".prettierrc",
                          ".flake8", ".pylintrc", ".coveragerc", "tox.ini", "setup.cfg", "noxfile.py"})
GENERATED_NAME = re.compile(
    r"""(
      .*\.min\.(js|css|mjs)$ | .*[.-]bundle\.js$ | .*\.chunk\.js$
    | .*\.pb\.(go|cc|h|swift)$ | .*_pb2(_grpc)?\.pyi?$ | .*_pb\.(js|d\.ts)$ | .*_grpc_pb\.(js|d\.ts)$
    | .*\.pb\.gw\.go$ | .*_gen\.go$ | .*_generated\.(go|ts|js|rs|cs|h|py)$ | ^zz_generated.*\.go$
    | .*\.generated\.\w+$ | .*\.g\.(dart|cs)$ | .*\.freezed\.dart$ | .*\.designer\.cs$ | .*\.Designer\.cs$
    | .*\.gen\.(ts|js|go|py)$ | ^bindata\.go$
    )""",
    re.VERBOSE,
)


# Extensions of source code: `history.bash`, `changes.rb`, `History.scala` are code named like a doc.
CODE_EXTS = (".py", ".js", ".mjs", ".cjs", ".jsx", ".ts", ".tsx", ".go", ".rs", ".java", ".c", ".h", ".cc",
             ".cpp", ".hpp", ".cs", ".rb", ".php", ".kt", ".kts", ".lua", ".sh", ".bash", ".zsh", ".scala",
             ".swift", ".hs", ".zig", ".ex", ".exs", ".tcl", ".pl", ".dart")


def _code_name(lower: str) -> bool:
    """A file name with a source-code extension (its last one)."""
    return "." in lower and lower.endswith(CODE_EXTS)


@lru_cache(maxsize=16384)
def _folder_marks(folder: str) -> frozenset[str]:
    """The labels a file gets from its folders' names alone (`folder`: "" for the root): test, doc,
    example, vendor, generated, legacy. A folder's files share them, so each folder is worked out once."""
    dirs = [d.lower() for d in folder.split("/")] if folder else []
    marks = {label for label, names in (("test", TEST_DIRS), ("doc", DOC_DIRS), ("example", EXAMPLE_DIRS),
                                        ("vendor", VENDOR_DIRS), ("generated", GENERATED_DIRS),
                                        ("legacy", LEGACY_DIRS)) if any(d in names for d in dirs)}
    return frozenset(marks)


@lru_cache(maxsize=65536)
def labels_for(path: str) -> tuple[str, ...]:
    """Labels for a workspace-relative POSIX path, e.g. `tests/test_api.py` -> ("test",)."""
    folder, _, name = path.rpartition("/")
    marks = _folder_marks(folder)
    lower = name.lower()
    stem = lower.split(".", 1)[0]
    found: set[str] = set()
    if TEST_NAME.match(name) or "test" in marks:
        found.add("test")
    if lower.endswith(DOC_EXTS) and lower not in CONFIG_NAMES and not lower.startswith("requirements"):
        found.add("doc")
    elif stem in DOC_NAMES and not _code_name(lower) or "doc" in marks:
        found.add("doc")
    if lower.endswith(CONFIG_EXTS) or lower in CONFIG_NAMES or lower.startswith("requirements") \
            and lower.endswith(".txt"):
        found.add("config")
    if "example" in marks:
        found.add("example")
    if "vendor" in marks:
        found.add("vendor")
    if GENERATED_NAME.match(name) or "generated" in marks:
        found.add("generated")
    if not found:
        found.add("source")
    if "legacy" in marks:
        found.add("legacy")
    return tuple(label for label in LABELS if label in found)
