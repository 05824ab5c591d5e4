"""Invoices."""

from decimal import Decimal


def invoice_total(lines, tax_rate):
    subtotal = sum(Decimal(line.price) * line.quantity for line in lines)
    return (subtotal * (1 + Decimal(tax_rate))).quantize(Decimal("0.01"))


def format_amount(amount, currency="EUR"):
    return f"{amount:,.2f} {currency}"
