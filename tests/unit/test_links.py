"""indexing.links: which paths reached through links are dropped (the real path wins)."""

from __future__ import annotations

from indexing.links import link_copies


def test_the_real_path_wins_else_the_first_link_stays() -> None:
    linked = {"app/shop/a.py": "/ws/core/shop/a.py", "b_link.py": "/ws/core/shop/a.py",
              "gen_link/x.py": "/ws/gen/x.py", "other/x.py": "/ws/gen/x.py", "self.py": "/ws/self.py"}
    accepted = {"core/shop/a.py", *linked}
    assert link_copies(linked, "/ws", accepted) == {"app/shop/a.py", "b_link.py", "other/x.py"}
    # Named paths: the real path is not among them, the scan rules say whether it is indexed.
    assert link_copies(linked, "/ws", set(linked), indexable=lambda rel: rel == "gen/x.py") == \
        {"b_link.py", "gen_link/x.py", "other/x.py"}
