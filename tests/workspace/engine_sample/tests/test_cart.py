"""Tests of the cart (they describe discounts in plain words too)."""

from shop.cart import Cart
from shop.pricing import apply_discount


def test_discount_takes_a_percentage_off():
    assert apply_discount(100, 10) == 90


def test_cart_total_with_coupon():
    cart = Cart("ann")
    cart.add_item("book", 20.0, 2)
    assert cart.total(50) == 20.0
