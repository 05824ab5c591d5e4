"""Price arithmetic: discounts, tax and totals."""

from __future__ import annotations

TAX_RATE = 0.2


def apply_discount(price: float, percent: float) -> float:
    """Reduce a price by a percentage discount, never below zero."""
    if percent <= 0:
        return price
    reduced = price * (1 - percent / 100)
    return max(reduced, 0.0)


def add_tax(amount: float, rate: float = TAX_RATE) -> float:
    """Add sales tax to an amount."""
    return round(amount * (1 + rate), 2)


def line_total(unit_price: float, quantity: int, percent: float = 0.0) -> float:
    """The discounted price of one line of an order."""
    return apply_discount(unit_price, percent) * quantity


def order_total(lines: list[tuple[float, int, float]]) -> float:
    """Sum the lines of an order and add tax."""
    subtotal = sum(line_total(price, qty, pct) for price, qty, pct in lines)
    return add_tax(subtotal)
