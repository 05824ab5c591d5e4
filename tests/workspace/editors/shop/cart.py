"""A shopping cart that holds items and prices them."""

from __future__ import annotations

from dataclasses import dataclass, field

from shop.pricing import apply_discount, order_total


@dataclass
class Item:
    """One product in the cart."""

    name: str
    unit_price: float
    quantity: int = 1
    discount: float = 0.0


@dataclass
class ShoppingCart:
    """Items a customer intends to buy."""

    items: list[Item] = field(default_factory=list)

    def add_item(self, item: Item) -> None:
        """Put an item in the cart, merging quantities of the same product."""
        for existing in self.items:
            if existing.name == item.name:
                existing.quantity += item.quantity
                return
        self.items.append(item)

    def total(self) -> float:
        """The total price of the cart, tax included."""
        return order_total([(i.unit_price, i.quantity, i.discount) for i in self.items])

    def cheapest_price(self) -> float:
        """The lowest discounted unit price in the cart."""
        return min(apply_discount(i.unit_price, i.discount) for i in self.items)
