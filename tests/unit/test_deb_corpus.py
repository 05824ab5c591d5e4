"""A query set over a Debian package (`"corpus": {"kind": "deb", ...}`, the Go and Rust gap sets) resolves to
the unpacked package's source tree, the folder fetch_deb caches, with no download once it is there."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bench.corpora import fetch_deb
from bench.eval_public import corpus_root, index_dir
from bench.evalsets import load_set

ROOT = "usr/share/cargo/registry/tiny-1.0.0"


def _set(tmp_path: Path, kind: str) -> Path:
    path = tmp_path / "gap-tiny-1.0.0.json"
    path.write_text(json.dumps({
        "name": "gap-tiny-1.0.0", "note": "test",
        "corpus": {"kind": kind, "name": "librust-tiny-dev", "version": "1.0.0-1", "root": ROOT},
        "queries": [{"id": "t-01", "query": "how long do we wait", "category": "vocab-gap",
                     "obvious_phrase": "backoff", "targets": [{"path": "src/lib.rs", "symbol": "wait"}]}]}))
    return path


def test_a_deb_set_searches_the_root_inside_the_unpacked_package(tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    corpora = tmp_path / "corpora"
    monkeypatch.setenv("CODESEEK_CORPORA", str(corpora))
    monkeypatch.setenv("CODESEEK_EVAL_DIR", str(tmp_path / "eval"))
    unpacked = corpora / "deb-librust-tiny-dev-1.0.0-1"
    (unpacked / ROOT / "src").mkdir(parents=True)
    (unpacked / ROOT / "src" / "lib.rs").write_text("pub fn wait() {}\n")
    qs = load_set(_set(tmp_path, "deb"))
    assert qs.corpus["kind"] == "deb"
    assert fetch_deb("librust-tiny-dev", "1.0.0-1") == unpacked  # cached: no apt-get
    assert corpus_root(qs) == unpacked / ROOT
    assert (corpus_root(qs) / qs.queries[0].targets[0].path).is_file()
    # its index has a folder of its own, named by package, version and root
    assert index_dir(qs) == tmp_path / "eval" / ("librust-tiny-dev-1.0.0-1-" + ROOT.replace("/", "_"))


def test_an_unknown_corpus_kind_is_a_clear_error(tmp_path: Path) -> None:
    qs = load_set(_set(tmp_path, "cargo"))
    with pytest.raises(SystemExit, match="unknown corpus kind 'cargo'"):
        corpus_root(qs)
