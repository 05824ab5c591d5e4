"""The folders under tests/workspace are sample workspaces (data for the end-to-end tests), not tests."""

collect_ignore_glob = ["*"]
