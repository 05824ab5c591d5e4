"""Profile pictures."""

from PIL import Image


def shrink_picture(source_path, target_path, size=128):
    image = Image.open(source_path)
    image.thumbnail((size, size))
    image.save(target_path, "PNG")


def picture_url(account_id, cdn_host):
    return f"https://{cdn_host}/avatars/{account_id}.png"
