"""`graph.modules.ModuleIndex.files_for` answers a specifier once per index: a remembered answer is the
one a fresh lookup gives, a relative specifier is answered per importing folder, and a saved index
carries no remembered answers."""

from __future__ import annotations

import pickle

from graph.modules import ModuleIndex

PATHS = ["src/app/__init__.py", "src/app/util.py", "src/app/sub/util.py", "src/app/sub/__init__.py",
         "web/router/index.js", "web/lib/express.js", "web/lib/router/index.js", "cmd/render/a.go",
         "cmd/render/b.go"]
ASKED = [("app.util", "src/app/sub/x.py"), (".util", "src/app/x.py"), (".util", "src/app/sub/x.py"),
         ("..util", "src/app/sub/x.py"), ("'./router'", "web/lib/express.js"), ("./router", "web/x.js"),
         ("github.com/x/y/render", "cmd/main.go"), ("os.path", "src/app/x.py"), ("", "src/app/x.py"),
         ("`../lib/express`", "web/router/index.js")]


def test_remembered_answers_are_fresh_answers_per_folder() -> None:
    index = ModuleIndex(PATHS)
    first = [index.files_for(spec, path) for spec, path in ASKED]
    again = [index.files_for(spec, path) for spec, path in ASKED]
    fresh = [ModuleIndex(PATHS).files_for(spec, path) for spec, path in ASKED]
    assert first == again == fresh
    assert first[1] == ["src/app/util.py"] and first[2] == ["src/app/sub/util.py"]  # one spec, two folders
    assert first[3] == ["src/app/util.py"] and first[4] == ["web/lib/router/index.js"]
    assert first[7] == [] and first[8] == []  # external, empty
    # an answer handed out is the caller's own list: changing it changes no later answer
    first[0].append("changed")
    assert index.files_for(*ASKED[0]) == fresh[0]


def test_a_saved_index_carries_no_remembered_answers() -> None:
    index = ModuleIndex(PATHS)
    for spec, path in ASKED:
        index.files_for(spec, path)
    loaded = pickle.loads(pickle.dumps(index))
    assert loaded._files_memo == {}
    assert [loaded.files_for(s, p) for s, p in ASKED] == [index.files_for(s, p) for s, p in ASKED]
