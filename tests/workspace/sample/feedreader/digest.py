"""Build the daily digest: unread entries grouped by feed, each summarized in one line."""

from __future__ import annotations

from collections import defaultdict

from feedreader.parser import Entry
from feedreader.store import FeedStore


def summarize(entry: Entry, width: int = 120) -> str:
    """The first sentence of the summary, shortened to `width` characters."""
    sentence = entry.summary.split(". ")[0]
    if len(sentence) > width:
        sentence = sentence[: width - 1].rstrip() + "…"
    return sentence


def format_digest_line(entry: Entry) -> str:
    """One Markdown bullet: linked title and summary."""
    when = entry.published.strftime("%H:%M") if entry.published else "--:--"
    return f"- {when} [{entry.title}]({entry.link}): {summarize(entry)}"


def build_digest(store: FeedStore, limit: int = 50) -> str:
    """Markdown digest of unread entries, grouped by feed; marks them read."""
    groups: dict[str, list[Entry]] = defaultdict(list)
    entries = store.unread(limit)
    for entry in entries:
        groups[entry.feed_url].append(entry)
    lines = ["# Daily digest", ""]
    for feed_url in sorted(groups):
        lines.append(f"## {feed_url}")
        lines.extend(format_digest_line(entry) for entry in groups[feed_url])
        lines.append("")
    store.mark_read([entry.guid for entry in entries])
    return "\n".join(lines)
