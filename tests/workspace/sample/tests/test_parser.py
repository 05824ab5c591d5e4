"""Tests for the RSS/Atom parser."""

from datetime import datetime, timezone

import pytest

from feedreader.parser import FeedError, clean_text, parse_date, parse_feed

RSS = b"""<rss version="2.0"><channel><title>Example</title>
<item><title>First &amp; &lt;b&gt;bold&lt;/b&gt;</title><link>https://example.org/1</link>
<guid>1</guid><pubDate>Tue, 10 Jun 2003 04:00:00 GMT</pubDate><description>One. Two.</description></item>
</channel></rss>"""


def test_parse_date_rfc822():
    assert parse_date("Tue, 10 Jun 2003 04:00:00 GMT") == datetime(2003, 6, 10, 4, tzinfo=timezone.utc)


def test_parse_date_iso():
    assert parse_date("2003-12-13T18:30:02Z") == datetime(2003, 12, 13, 18, 30, 2, tzinfo=timezone.utc)


def test_clean_text():
    assert clean_text("First &amp; <b>bold</b>") == "First & bold"


def test_parse_feed_rss():
    entries = parse_feed("https://example.org/feed", RSS)
    assert [e.title for e in entries] == ["First & bold"]


def test_parse_feed_rejects_html():
    with pytest.raises(FeedError):
        parse_feed("https://example.org/feed", b"<html><body>nope</body></html>")
