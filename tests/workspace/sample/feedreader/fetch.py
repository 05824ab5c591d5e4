"""Download feeds with retries and conditional requests."""

from __future__ import annotations

import time
import urllib.error
import urllib.request

from feedreader.parser import parse_feed
from feedreader.store import FeedStore

USER_AGENT = "feedreader/1.0 (+https://example.org/feedreader)"


def download(url: str, etag: str | None = None, retries: int = 3, backoff: float = 0.5) -> tuple[bytes, str | None]:
    """GET a feed; an empty body means "not modified". Retries with exponential backoff."""
    headers = {"User-Agent": USER_AGENT}
    if etag:
        headers["If-None-Match"] = etag
    for attempt in range(retries):
        try:
            request = urllib.request.Request(url, headers=headers)
            with urllib.request.urlopen(request, timeout=10) as response:
                return response.read(), response.headers.get("ETag")
        except urllib.error.HTTPError as exc:
            if exc.code == 304:
                return b"", etag
            if exc.code < 500 or attempt == retries - 1:
                raise
        except urllib.error.URLError:
            if attempt == retries - 1:
                raise
        time.sleep(backoff * 2**attempt)
    raise RuntimeError("unreachable")


def refresh_feed(store: FeedStore, url: str) -> int:
    """Fetch one feed and store its new entries; return how many were new."""
    body, etag = download(url, store.etag(url))
    if not body:
        return 0
    entries = parse_feed(url, body)
    return store.save_entries(entries, etag)


def refresh_all(store: FeedStore) -> dict[str, int]:
    """Refresh every subscribed feed; a failing feed does not stop the others."""
    counts: dict[str, int] = {}
    for url in store.feeds():
        try:
            counts[url] = refresh_feed(store, url)
        except OSError:
            counts[url] = -1
    return counts
