"""A tiny shop: prices, carts and receipts (fixture workspace for the editor tests)."""
