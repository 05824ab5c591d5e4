"""Utilities (reduced from requests.utils)."""

from urllib.parse import urlparse


def select_proxy(url, proxies):
    """Select a proxy for the url, if applicable."""
    proxies = proxies or {}
    urlparts = urlparse(url)
    if urlparts.hostname is None:
        return proxies.get(urlparts.scheme, proxies.get("all"))
    return proxies.get("all://" + urlparts.hostname)


def cookie_names(jar):
    return [name for name in jar.keys()]
