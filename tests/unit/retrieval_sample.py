"""A small multi-language code sample, parsed with the real tree-sitter pipeline, for retriever tests.

`parse_sample()` numbers chunks and definitions like the store would and offers the two lookups the
engine gives the structural and graph retrievers: `chunk_at(path, line)` (the smallest chunk holding
the line) and `chunk_for_definition(d)`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from graph.callgraph import CallGraph, build_call_graph
from indexing.labels import labels_for
from indexing.languages import language_for_path
from indexing.parse import parse_file
from indexing.records import Chunk, Definition, ParseResult

SAMPLE: dict[str, str] = {
    "pkg/__init__.py": '''\
from .sessions import Session
from .utils import select_proxy

__all__ = ["Session", "select_proxy"]
''',
    "pkg/utils.py": '''\
"""Helpers shared by the session and auth code."""
import os
from urllib.parse import urlparse

DEFAULT_TIMEOUT = 30


def get_netrc_auth(url):
    """Credentials for url from ~/.netrc, if any."""
    host = urlparse(url).hostname
    path = os.path.expanduser("~/.netrc")
    return read_netrc(path, host)


def read_netrc(path, host):
    with open(path) as fh:
        for line in fh:
            if host in line:
                return tuple(line.split()[3::2])
    return None


def select_proxy(url, proxies):
    """Pick the proxy for url from a scheme -> proxy mapping."""
    scheme = urlparse(url).scheme
    return proxies.get(scheme)
''',
    "pkg/auth.py": '''\
from .utils import get_netrc_auth


class AuthBase:
    def __call__(self, request):
        raise NotImplementedError


class HTTPBasicAuth(AuthBase):
    def __init__(self, username, password):
        self.username = username
        self.password = password

    def __call__(self, request):
        request.headers["Authorization"] = basic_auth_header(self.username, self.password)
        return request


class HTTPProxyAuth(HTTPBasicAuth):
    def __call__(self, request):
        request.headers["Proxy-Authorization"] = basic_auth_header(self.username, self.password)
        return request


def basic_auth_header(username, password):
    token = f"{username}:{password}"
    return "Basic " + token


def auth_for(url):
    creds = get_netrc_auth(url)
    return HTTPBasicAuth(*creds) if creds else None
''',
    "pkg/sessions.py": '''\
from .auth import auth_for
from .utils import DEFAULT_TIMEOUT, select_proxy


class SessionRedirectMixin:
    def should_strip_auth(self, old_url, new_url):
        """Decide whether to drop the Authorization header on redirect."""
        return old_url.split("/")[2] != new_url.split("/")[2]

    def rebuild_auth(self, request, old_url):
        if self.should_strip_auth(old_url, request.url):
            request.headers.pop("Authorization", None)
        new_auth = auth_for(request.url)
        if new_auth is not None:
            new_auth(request)

    def resolve_redirects(self, response, request):
        while response.is_redirect:
            old_url = request.url
            request.url = response.headers["location"]
            self.rebuild_auth(request, old_url)
            response = self.send(request)
        return response


class Session(SessionRedirectMixin):
    def __init__(self):
        self.proxies = {}
        self.timeout = DEFAULT_TIMEOUT

    def request(self, method, url):
        proxy = select_proxy(url, self.proxies)
        return self.send(Request(method, url, proxy))

    def send(self, request):
        response = request.transport()
        return self.resolve_redirects(response, request)


class Request:
    def __init__(self, method, url, proxy=None):
        self.method = method
        self.url = url
        self.proxy = proxy
        self.headers = {}
''',
    "pkg/retry.py": '''\
retries = 3


class Retry:
    def __init__(self, total=retries):
        self.total = total
''',
    "pkg/policy.py": '''\
def retries(policy):
    """How many retries a policy allows."""
    return policy.get("retries", 0)
''',
    "tests/test_sessions.py": '''\
from pkg.sessions import Session


def select_proxy(url):
    return None


def test_should_strip_auth_on_host_change():
    assert Session().should_strip_auth("http://a/x", "http://b/x")


def test_rebuild_auth_drops_header():
    s = Session()
    s.rebuild_auth(FakeRequest(), "http://a/")
''',
    "web/router.js": '''\
class Router {
  constructor() {
    this.routes = [];
  }

  use(path, handler) {
    this.routes.push({ path, handler });
  }

  handle(req) {
    const route = matchRoute(this.routes, req.url);
    return route ? route.handler(req) : null;
  }
}

function matchRoute(routes, url) {
  return routes.find((r) => url.startsWith(r.path));
}

module.exports = { Router, matchRoute };
''',
    "src/limits.rs": '''\
pub const RETRY_LIMIT: u32 = 3;

pub fn retry_limit(config: &Config) -> u32 {
    config.retries.unwrap_or(RETRY_LIMIT)
}
''',
    "cmd/server/main.go": '''\
package main

import "fmt"

type Server struct {
	Addr string
}

func NewServer(addr string) *Server {
	return &Server{Addr: addr}
}

func (s *Server) Start() error {
	fmt.Println("listening on", s.Addr)
	return nil
}

func main() {
	s := NewServer(":8080")
	s.Start()
}
''',
}


@dataclass
class Parsed(ParseResult):
    """Records of a parsed sample (all its files), numbered like the store numbers them."""

    def chunk(self, chunk_id: int) -> Chunk | None:
        return next((c for c in self.chunks if c.id == chunk_id), None)

    def chunk_at(self, path: str, line: int) -> int | None:
        holding = [c for c in self.chunks if c.path == path and c.start_line <= line <= c.end_line]
        return min(holding, key=lambda c: (c.end_line - c.start_line, c.id)).id if holding else None

    def chunk_for_definition(self, d: Definition) -> int | None:
        """The chunk named after the definition, else the smallest chunk holding its name."""
        named = [c for c in self.chunks if c.path == d.path and c.symbol == d.qualified_name]
        return named[0].id if named else self.chunk_at(d.path, d.name_line)

    def definition(self, qualified_name: str, path: str | None = None) -> Definition:
        found = [d for d in self.definitions
                 if d.qualified_name == qualified_name and (path is None or d.path == path)]
        assert len(found) == 1, (qualified_name, found)
        return found[0]

    def chunk_of(self, qualified_name: str, path: str | None = None) -> int:
        chunk_id = self.chunk_for_definition(self.definition(qualified_name, path))
        assert chunk_id is not None
        return chunk_id

    def call_graph(self) -> CallGraph:
        return build_call_graph(self.definitions, self.calls, self.imports)


def parse_sample(files: Mapping[str, str] = SAMPLE) -> Parsed:
    """Parse every file with the real parser; chunk and definition ids count up from 1."""
    out = Parsed()
    for path, text in files.items():
        result = parse_file(path, text.encode(), language_for_path(path), labels_for(path))
        assert result.status == "ok", (path, result.status, result.error)
        for c in result.chunks:
            c.id = len(out.chunks) + 1
            out.chunks.append(c)
        for d in result.definitions:
            d.id = len(out.definitions) + 1
            out.definitions.append(d)
        out.calls.extend(result.calls)
        out.imports.extend(result.imports)
    return out
