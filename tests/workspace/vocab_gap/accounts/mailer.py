"""Outgoing messages."""

import smtplib


def send_message(host, sender, recipient, body):
    with smtplib.SMTP(host) as smtp:
        smtp.sendmail(sender, [recipient], body)


def render_welcome(name):
    return f"Hello {name}, thanks for joining!"
