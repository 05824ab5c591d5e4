"""The two-module Python sample of the workspace and graph-state tests: alpha.py (alpha calls beta) and
gamma.py (Gamma.run calls alpha), written below tmp_path/ws and indexed in tmp_path/index."""

from __future__ import annotations

from pathlib import Path

from indexing.workspace import Workspace, WorkspaceOptions

ALPHA = '''"""Alpha module."""


def alpha(x):
    """Double x."""
    return beta(x) * 2


def beta(x):
    return x + 1
'''
GAMMA = '''from alpha import alpha


class Gamma:
    def run(self):
        return alpha(3)
'''


def write_tree(tmp_path: Path) -> Path:
    """tmp_path/ws holding alpha.py and gamma.py; its path."""
    root = tmp_path / "ws"
    root.mkdir()
    (root / "alpha.py").write_text(ALPHA)
    (root / "gamma.py").write_text(GAMMA)
    return root


def open_ws(root: Path, tmp_path: Path) -> Workspace:
    return Workspace(root, WorkspaceOptions(index_dir=tmp_path / "index"))
