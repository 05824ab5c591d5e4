"""Sessions (reduced from requests.sessions)."""

from .cookies import RequestsCookieJar
from .structures import LookupDict
from .utils import select_proxy


class Session:
    """A requests session."""

    def __init__(self):
        self.cookies = RequestsCookieJar()
        self.codes = LookupDict("codes")
        self.proxies = {}

    def get(self, url, **kwargs):
        return self.request("GET", url, **kwargs)

    def request(self, method, url, **kwargs):
        proxy = select_proxy(url, self.proxies)
        token = self.cookies.get("token")
        return method, url, proxy, token

    def close(self):
        self.proxies.clear()


def session() -> Session:
    """A new session."""
    return Session()


def fetch(url):
    s = session()
    return s.get(url)


def fetch_twice(url):
    s = Session()
    first = s.get(url)
    return first, s.request("GET", url)
