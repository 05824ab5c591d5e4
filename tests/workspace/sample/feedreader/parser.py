"""Parse RSS 2.0 and Atom documents into Entry records."""

from __future__ import annotations

import html
import re
from dataclasses import dataclass
from datetime import datetime, timezone
from email.utils import parsedate_to_datetime
from xml.etree import ElementTree

ATOM = "{http://www.w3.org/2005/Atom}"
_TAG_RE = re.compile(r"<[^>]+>")
_SPACE_RE = re.compile(r"\s+")


@dataclass
class Entry:
    """One item of a feed."""

    feed_url: str
    guid: str
    title: str
    link: str
    summary: str
    published: datetime | None


class FeedError(ValueError):
    """The document is not a feed we can read."""


def clean_text(raw: str | None) -> str:
    """Strip markup and entities and collapse whitespace."""
    if not raw:
        return ""
    text = _TAG_RE.sub(" ", raw)
    text = html.unescape(text)
    return _SPACE_RE.sub(" ", text).strip()


def parse_date(value: str | None) -> datetime | None:
    """Parse an RFC 822 (RSS) or ISO 8601 (Atom) date into an aware UTC datetime."""
    if not value:
        return None
    value = value.strip()
    try:
        parsed = parsedate_to_datetime(value)
    except (TypeError, ValueError):
        try:
            parsed = datetime.fromisoformat(value.replace("Z", "+00:00"))
        except ValueError:
            return None
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=timezone.utc)
    return parsed.astimezone(timezone.utc)


def parse_entry(feed_url: str, item: ElementTree.Element) -> Entry:
    """Build an Entry from an RSS <item> or an Atom <entry> element."""
    if item.tag == f"{ATOM}entry":
        link_node = item.find(f"{ATOM}link")
        link = link_node.get("href", "") if link_node is not None else ""
        published = parse_date(item.findtext(f"{ATOM}published"))
        if published is None:
            published = parse_date(item.findtext(f"{ATOM}updated"))
        return Entry(
            feed_url=feed_url,
            guid=item.findtext(f"{ATOM}id") or link,
            title=clean_text(item.findtext(f"{ATOM}title")),
            link=link,
            summary=clean_text(item.findtext(f"{ATOM}summary")),
            published=published,
        )
    link = (item.findtext("link") or "").strip()
    return Entry(
        feed_url=feed_url,
        guid=item.findtext("guid") or link,
        title=clean_text(item.findtext("title")),
        link=link,
        summary=clean_text(item.findtext("description")),
        published=parse_date(item.findtext("pubDate")),
    )


def parse_feed(feed_url: str, document: bytes) -> list[Entry]:
    """All entries of an RSS or Atom document, newest first."""
    try:
        root = ElementTree.fromstring(document)
    except ElementTree.ParseError as exc:
        raise FeedError(f"{feed_url}: not well-formed XML: {exc}") from exc
    if root.tag == "rss":
        items = root.findall("./channel/item")
    elif root.tag == f"{ATOM}feed":
        items = root.findall(f"{ATOM}entry")
    else:
        raise FeedError(f"{feed_url}: unknown feed format <{root.tag}>")
    entries = [parse_entry(feed_url, item) for item in items]
    oldest = datetime.min.replace(tzinfo=timezone.utc)
    entries.sort(key=lambda e: e.published or oldest, reverse=True)
    return entries
