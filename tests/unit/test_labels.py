"""Path and name rules for file labels across the supported languages."""

from __future__ import annotations

import pytest

from indexing.labels import labels_for
from indexing.records import LABELS


@pytest.mark.parametrize("path", [
    "tests/test_api.py", "pkg/test/helpers.py", "src/__tests__/App.js", "spec/models/user_spec.rb",
    "test_utils.py", "pkg/utils_test.py", "conftest.py", "server/handler_test.go", "src/app.test.ts",
    "src/app.spec.js", "src/App.test.tsx", "src/main/java/FooTest.java", "Foo.Tests/BarTests.cs",
    "lib/user_spec.rb", "src/FooTest.kt", "src/FooSpec.scala", "tests/integration.rs",
])
def test_test_files(path: str) -> None:
    assert "test" in labels_for(path)
    assert "source" not in labels_for(path)


@pytest.mark.parametrize("path", ["docs/index.rst", "doc/guide.py", "README.md", "CHANGES.rst", "notes.txt",
                                  "documentation/api.md"])
def test_doc_files(path: str) -> None:
    assert "doc" in labels_for(path)


@pytest.mark.parametrize("path", ["HISTORY", "CHANGELOG", "LICENSE", "NEWS", "AUTHORS.txt", "License.html"])
def test_doc_names(path: str) -> None:
    assert "doc" in labels_for(path)


@pytest.mark.parametrize("path", ["lib/history.bash", "plugins/todo.plugin.bash", "actions/history.lua",
                                  "middleware/History.scala", "attached/changes.rb",
                                  "scripts/contributors.sh"])
def test_code_named_like_a_doc_is_source(path: str) -> None:
    assert labels_for(path) == ("source",)


@pytest.mark.parametrize("path", ["pyproject.toml", ".github/workflows/ci.yaml", "package.json", "tox.ini",
                                  "setup.cfg", "config/app.yml", "requirements.txt", "tsconfig.json"])
def test_config_files(path: str) -> None:
    assert labels_for(path) == ("config",)


@pytest.mark.parametrize(("path", "label"), [
    ("vendor/github.com/x/y.go", "vendor"), ("third_party/zlib/inflate.c", "vendor"),
    ("external/lib.cpp", "vendor"), ("src/pip/_vendor/rich/text.py", "vendor"),
    ("examples/basic.py", "example"), ("example/main.go", "example"), ("samples/demo.ts", "example"),
    ("static/js/jquery.min.js", "generated"), ("api/service.pb.go", "generated"),
    ("proto/service_pb2.py", "generated"), ("proto/service_pb2_grpc.py", "generated"),
    ("Form1.Designer.cs", "generated"),
])
def test_vendor_example_generated(path: str, label: str) -> None:
    assert label in labels_for(path)
    assert "source" not in labels_for(path)


@pytest.mark.parametrize("path", ["setup.py", "src/requests/sessions.py", "cmd/server/main.go",
                                  "src/lib.rs", "lib/router/index.js", "src/main/java/com/x/Foo.java",
                                  "testing_tools.py", "src/contest.py", "src/latest.ts", "attest/x.go",
                                  "src/spectrum.js", "app/Services/Docker.php"])
def test_source_files_are_only_source(path: str) -> None:
    assert labels_for(path) == ("source",)


def test_labels_combine_in_canonical_order() -> None:
    assert labels_for("tests/fixtures/README.md") == ("test", "doc")
    assert labels_for("vendor/lib/tests/test_x.py") == ("test", "vendor")
    for path in ("a.py", "tests/x.md", "vendor/x.min.js", "examples/conf.yaml"):
        got = labels_for(path)
        assert got == tuple(label for label in LABELS if label in got) and got


@pytest.mark.parametrize("path, expected", [
    ("pydantic/deprecated/json.py", ("source", "legacy")),
    ("lib/legacy/router.js", ("source", "legacy")),
    ("src/compat/io.go", ("source", "legacy")),
    ("pkg/backcompat/shim.py", ("source", "legacy")),
    ("old/obsolete/x.c", ("source", "legacy")),
    ("tests/legacy/test_old.py", ("test", "legacy")),
    ("docs/deprecated/api.md", ("doc", "legacy")),
])
def test_legacy_folders_are_labelled_after_the_other_labels(path: str, expected: tuple[str, ...]) -> None:
    assert labels_for(path) == expected


@pytest.mark.parametrize("path", ["src/click/_compat.py", "compat.py", "src/legacy_api.py",
                                  "lib/deprecated.js", "pydantic/v1/main.py", "src/compatibility/x.py"])
def test_only_legacy_folder_names_count_not_files(path: str) -> None:
    assert "legacy" not in labels_for(path)
