"""A small RSS/Atom feed reader with a SQLite store and a daily digest."""

from feedreader.digest import build_digest
from feedreader.parser import Entry, parse_feed
from feedreader.store import FeedStore

__all__ = ["Entry", "FeedStore", "build_digest", "parse_feed"]
