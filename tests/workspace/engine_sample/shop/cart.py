"""The shopping cart."""

from shop.pricing import apply_discount, round_money


class Cart:
    """Items a customer intends to buy, with quantities."""

    def __init__(self, customer):
        self.customer = customer
        self.items = {}

    def add_item(self, sku, price, quantity=1):
        """Put an item in the cart or increase its quantity."""
        if quantity <= 0:
            raise ValueError("quantity must be positive")
        old_price, old_quantity = self.items.get(sku, (price, 0))
        self.items[sku] = (price, old_quantity + quantity)

    def remove_item(self, sku):
        """Take an item out of the cart entirely."""
        self.items.pop(sku, None)

    def subtotal(self):
        """Sum of price times quantity over all items."""
        return round_money(sum(p * q for p, q in self.items.values()))

    def total(self, coupon_percent=0):
        """What the customer pays after the coupon."""
        return apply_discount(self.subtotal(), coupon_percent)
