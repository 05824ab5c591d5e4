"""Split string literals end to end (issue 9): an exact-string query of a whole message finds it when
the source writes it as adjacent literals (Python implicit concatenation, JS and Java `+`)."""

from __future__ import annotations

from pathlib import Path

from tests.e2e.cli_support import search_json

FILES = {
    "pay.py": '''"""Payments."""


def charge(card, amount):
    if amount <= 0:
        raise ValueError("the amount must be positive "
                         "and below the card limit")
    return card.charge(amount)
''',
    "pay.js": '''function refund(order) {
  if (!order.paid) {
    throw new Error('cannot refund an order ' +
      'that was never paid');
  }
  return order.refund();
}
''',
    "Pay.java": '''class Pay {
    void check(int amount) {
        if (amount > 10) {
            throw new IllegalStateException("amount over the " + "daily limit for this card");
        }
    }
}
''',
}


def search(root: Path, index: Path, query: str) -> list[tuple[str, int, int]]:
    return [(r["path"], r["start_line"], r["end_line"]) for r in search_json(root, index, query)["results"]]


def test_a_message_split_over_literals_is_found_whole(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    for name, text in FILES.items():
        (root / name).write_text(text)
    index = tmp_path / "index"
    assert search(root, index, '"must be positive and below the card limit"') == [("pay.py", 6, 7)]
    assert search(root, index, '"refund an order that was never paid"') == [("pay.js", 3, 4)]
    assert search(root, index, '"over the daily limit"') == [("Pay.java", 4, 4)]
