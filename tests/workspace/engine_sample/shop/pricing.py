"""Prices, discounts and taxes."""

TAX_RATES = {"eu": 0.2, "us": 0.07}


def round_money(amount):
    """Round an amount to whole cents."""
    return round(amount + 1e-9, 2)


def apply_discount(amount, percent):
    """Take a percentage off an amount, never below zero."""
    if percent < 0 or percent > 100:
        raise ValueError("discount percent out of range: %r" % percent)
    return round_money(max(amount * (100 - percent) / 100, 0))


def tax_for_region(amount, region):
    """Sales tax owed for a region, rounded to cents."""
    rate = TAX_RATES.get(region, 0.0)
    return round_money(amount * rate)
