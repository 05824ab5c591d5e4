"""A python.scm that names a node type the grammar lacks, in place of the packaged one for a with-block
(test_languages: loading it is a named error; test_parse: parsing falls back)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from indexing import languages

BROKEN_PYTHON_QUERY = "(function_definition name: (no_such_node) @name) @definition.function"


@contextmanager
def broken_python_query(tmp_path: Path) -> Iterator[None]:
    """indexing.languages reads its queries from tmp_path, where python.scm is broken; the query cache is
    cleared on the way in and on the way out."""
    (tmp_path / "python.scm").write_text(BROKEN_PYTHON_QUERY)
    try:
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(languages, "QUERY_DIR", tmp_path)
            languages.load_query.cache_clear()
            yield
    finally:
        languages.load_query.cache_clear()
