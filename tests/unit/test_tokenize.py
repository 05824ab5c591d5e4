"""Identifier splitting and identifier terms (retrievers.sources.tokenize)."""

from __future__ import annotations

import random
import string

import pytest

from retrievers.sources.tokenize import (
    _ASCII_PARTS,
    _split_chars,
    identifier_terms,
    identifier_text,
    identifiers,
    split_identifier,
    terms_for_identifier,
)


@pytest.mark.parametrize(
    ("ident", "parts"),
    [
        ("getHTTPResponse_v2", ["get", "http", "response", "v", "2"]),
        ("select_proxy", ["select", "proxy"]),
        ("SessionRedirectMixin", ["session", "redirect", "mixin"]),
        ("__init__", ["init"]),
        ("XMLHttpRequest", ["xml", "http", "request"]),
        ("utf8Decode", ["utf", "8", "decode"]),
        ("MAX_RETRIES", ["max", "retries"]),
        ("sha256sum", ["sha", "256", "sum"]),
        ("$scope", ["scope"]),
        ("größeWert", ["größe", "wert"]),
        ("a.b-c", ["a", "b", "c"]),
        ("x", ["x"]),
        ("", []),
    ],
)
def test_split_identifier(ident: str, parts: list[str]) -> None:
    assert split_identifier(ident) == parts


def test_ascii_regex_splits_exactly_as_the_character_rules() -> None:
    # the ASCII fast path must give the parts the character-by-character definition gives
    rng = random.Random(7)
    pools = [string.ascii_letters + string.digits + "_$", "aAbB1_", "AB", "ab1", "aA", "Aa1$_"]
    for _ in range(20000):
        pool = rng.choice(pools)
        ident = "".join(rng.choice(pool) for _ in range(rng.randint(1, 14)))
        assert tuple(p.lower() for p in _ASCII_PARTS.findall(ident)) == _split_chars(ident), ident


def test_terms_for_identifier_whole_then_parts() -> None:
    assert terms_for_identifier("select_proxy") == ["select_proxy", "select", "proxy"]
    assert terms_for_identifier("proxy") == ["proxy"]
    assert terms_for_identifier("Proxy") == ["proxy"]


def test_identifier_terms_over_code() -> None:
    code = 'def getHTTPResponse_v2(self, url):\n    return self.fetch(url, 42)  # done\n'
    terms = list(identifier_terms(code))
    assert terms[:7] == ["def", "gethttpresponse_v2", "get", "http", "response", "v", "2"]
    assert "fetch" in terms and "url" in terms and "done" in terms
    assert "42" not in terms  # bare numbers are not identifiers
    assert terms.count("url") == 2  # one term per occurrence (term frequency is kept)


def test_identifiers_skip_overlong_and_keep_case() -> None:
    blob = "A" * 200
    assert list(identifiers(f"foo {blob} BarBaz")) == ["foo", "BarBaz"]


@pytest.mark.parametrize("text", [
    'def getHTTPResponse_v2(self, url):\n    return self.fetch(url, 42)  # done\n',
    "_ __ $ $el _private __dunder__ größeWert x1y2 " + "B" * 70,
    "",
    # ASCII text takes the bytes path: digits before a name, `$` anywhere, control characters, runs
    # of digits alone, an over-long run that is a long name once its digits go
    "1x2 12 1$ $1 a$b x.y-z 0x1F \x00ab\x7fcd\tef 9_a " + "9" * 70 + "abc " + "1" * 5 + "B" * 64,
    "const $el = document.querySelector('#app'); let _v2 = 3e10;",
])
def test_identifier_text_is_the_joined_terms(text: str) -> None:
    assert identifier_text(text) == " ".join(identifier_terms(text))


@pytest.mark.parametrize("symbol", ["Session.send", "getHTTPResponse_v2", "a.b.C3PO", "$el", "x"])
def test_a_symbol_field_holds_the_whole_dotted_name_then_each_parts_terms(symbol: str) -> None:
    from retrievers.sources.text_schema import symbol_text

    whole = [symbol.lower()] if "." in symbol else []
    assert symbol_text(symbol).split() == [*whole, *identifier_terms(symbol)]


def test_identifier_text_stays_right_once_its_memos_start_over(monkeypatch: pytest.MonkeyPatch) -> None:
    from retrievers.sources import tokenize

    monkeypatch.setattr(tokenize, "MEMO_SIZE", 8)
    rng = random.Random(7)
    names = ["".join(rng.choice(string.ascii_letters + "_") for _ in range(rng.randint(1, 12)))
             for _ in range(200)]
    for text in (" ".join(names), "größe " + " ".join(names)):  # (the bytes path, then the str path)
        for _ in range(2):
            assert identifier_text(text) == " ".join(identifier_terms(text))
    memos = (tokenize._joined_run_terms.__self__, tokenize._joined_terms.__self__)  # type: ignore[attr-defined]
    assert all(0 < len(memo) <= 8 for memo in memos)
