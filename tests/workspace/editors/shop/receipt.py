"""Printable receipts for a checked-out cart."""

from __future__ import annotations

from shop.cart import ShoppingCart


def format_receipt(cart: ShoppingCart) -> str:
    """Render the cart as plain-text receipt lines with a total."""
    lines = [f"{item.quantity} x {item.name}" for item in cart.items]
    lines.append(f"TOTAL {cart.total():.2f}")
    return "\n".join(lines)


def checkout(cart: ShoppingCart) -> str:
    """Finish a purchase: print the receipt and empty the cart."""
    receipt = format_receipt(cart)
    cart.items.clear()
    return receipt
