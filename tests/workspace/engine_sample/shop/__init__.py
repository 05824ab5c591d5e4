"""A tiny shop used by the engine tests."""
