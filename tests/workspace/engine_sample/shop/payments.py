"""Talking to the card processor."""


class PaymentDeclined(Exception):
    """The card processor refused the charge."""


def charge_card(card_number, amount):
    """Charge a card; raise PaymentDeclined when the processor says no."""
    if not card_number or card_number.startswith("0000"):
        raise PaymentDeclined("card declined: %s" % card_number[-4:])
    return {"status": "charged", "amount": amount}


def refund(charge):
    """Give the money of a charge back to the customer."""
    return {"status": "refunded", "amount": charge["amount"]}
