"""Turning a cart into an order."""

from shop.pricing import apply_discount, tax_for_region
from shop.payments import charge_card


def order_total(cart, region, coupon_percent=0):
    """Cart total after the coupon plus the region's sales tax."""
    net = cart.total(coupon_percent)
    return net + tax_for_region(net, region)


def checkout(cart, card_number, region="eu"):
    """Charge the customer for everything in the cart and return the receipt."""
    amount = order_total(cart, region)
    charge = charge_card(card_number, amount)
    return {"customer": cart.customer, "charged": charge["amount"]}


def loyalty_price(amount):
    """Returning customers get five percent off."""
    return apply_discount(amount, 5)
