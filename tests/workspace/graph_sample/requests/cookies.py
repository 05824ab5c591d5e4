"""Cookie jar (reduced from requests.cookies)."""


class RequestsCookieJar:
    """A cookie jar with a dict-like interface."""

    def __init__(self):
        self._cookies = {}

    def get(self, name, default=None):
        return self._cookies.get(name, default)

    def set(self, name, value):
        self._cookies[name] = value
