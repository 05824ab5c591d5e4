"""Keep feeds and their entries in SQLite and track what has been read."""

from __future__ import annotations

import sqlite3
from datetime import datetime
from pathlib import Path

from feedreader.parser import Entry

SCHEMA = """
CREATE TABLE IF NOT EXISTS feeds (url TEXT PRIMARY KEY, title TEXT, etag TEXT);
CREATE TABLE IF NOT EXISTS entries (
    guid TEXT PRIMARY KEY, feed_url TEXT, title TEXT, link TEXT, summary TEXT,
    published TEXT, read INTEGER DEFAULT 0
);
"""


class FeedStore:
    """Feeds and entries in one SQLite file."""

    def __init__(self, path: Path) -> None:
        self.db = sqlite3.connect(path)
        self.db.executescript(SCHEMA)

    def add_feed(self, url: str, title: str = "") -> None:
        """Subscribe to a feed (idempotent)."""
        with self.db:
            self.db.execute("INSERT OR IGNORE INTO feeds (url, title) VALUES (?, ?)", (url, title))

    def feeds(self) -> list[str]:
        """URLs of all subscribed feeds."""
        return [row[0] for row in self.db.execute("SELECT url FROM feeds ORDER BY url")]

    def etag(self, url: str) -> str | None:
        """The ETag of the last successful fetch of a feed."""
        row = self.db.execute("SELECT etag FROM feeds WHERE url = ?", (url,)).fetchone()
        return row[0] if row else None

    def save_entries(self, entries: list[Entry], etag: str | None = None) -> int:
        """Insert new entries; return how many were new."""
        new = 0
        with self.db:
            for entry in entries:
                published = entry.published.isoformat() if entry.published else None
                cursor = self.db.execute(
                    "INSERT OR IGNORE INTO entries (guid, feed_url, title, link, summary, published)"
                    " VALUES (?, ?, ?, ?, ?, ?)",
                    (entry.guid, entry.feed_url, entry.title, entry.link, entry.summary, published),
                )
                new += cursor.rowcount
            if entries and etag:
                self.db.execute("UPDATE feeds SET etag = ? WHERE url = ?", (etag, entries[0].feed_url))
        return new

    def unread(self, limit: int = 50) -> list[Entry]:
        """Unread entries, newest first."""
        rows = self.db.execute(
            "SELECT feed_url, guid, title, link, summary, published FROM entries"
            " WHERE read = 0 ORDER BY published DESC LIMIT ?",
            (limit,),
        )
        return [
            Entry(url, guid, title, link, summary, datetime.fromisoformat(p) if p else None)
            for url, guid, title, link, summary, p in rows
        ]

    def mark_read(self, guids: list[str]) -> None:
        """Mark entries as read."""
        with self.db:
            self.db.executemany("UPDATE entries SET read = 1 WHERE guid = ?", [(g,) for g in guids])
