"""Chunk boundaries per language on real code (real grammars), invariants, and the line fallback."""

from __future__ import annotations

import textwrap

import pytest

from indexing.chunker import ChunkOptions, NonWhitespace, cut_spans
from indexing.languages import get_parser
from indexing.parse import parse_file
from indexing.records import Chunk
from indexing.textchunks import line_spans, markdown_spans

EXT = {
    "python": "py",
    "typescript": "ts",
    "javascript": "js",
    "go": "go",
    "rust": "rs",
    "java": "java",
    "ruby": "rb",
    "c": "c",
    "cpp": "cpp",
    "csharp": "cs",
    "php": "php",
    "kotlin": "kt",
    "swift": "swift",
    "scala": "scala",
    "lua": "lua",
    "bash": "sh",
}


def src(code: str) -> bytes:
    return textwrap.dedent(code).lstrip("\n").encode()


def chunks(lang: str, source: bytes, budget: int) -> list[Chunk]:
    result = parse_file(f"pkg/sample.{EXT[lang]}", source, lang, ("source",), ChunkOptions(max_chars=budget))
    assert result.status == "ok", result.error
    return result.chunks


def bounds(found: list[Chunk]) -> list[tuple[int, int, str, str | None]]:
    return [(c.start_line, c.end_line, c.kind, c.symbol) for c in found]


def text(source: bytes, chunk: Chunk) -> str:
    return source[chunk.start_byte : chunk.end_byte].decode()


PYTHON = src('''
    """Helpers for sessions."""
    import os
    import sys
    from collections import OrderedDict

    DEFAULT_TIMEOUT = 30


    @cache
    @trace(level=2)
    def merge_setting(request_setting, session_setting):
        """Merge two settings, request wins."""
        if session_setting is None:
            return request_setting
        return session_setting


    # Comment about the class.
    class Session(SessionRedirectMixin):
        """A Requests session."""

        __attrs__ = ["headers", "cookies", "auth"]

        def __init__(self):
            self.headers = default_headers()
            self.auth = None
            self.proxies = {}

        def __repr__(self):
            return "<Session>"

        def request(self, method, url, params=None, data=None):
            """Construct a Request, prepare it and send it."""
            req = Request(method=method.upper(), url=url, params=params or {})
            prep = self.prepare_request(req)
            proxies = self.rebuild_proxies(prep, self.proxies)
            settings = self.merge_environment_settings(prep.url, proxies)
            for hook in self.hooks:
                dispatch_hook(hook, prep, settings)
                log_hook(hook)
            send_kwargs = {"timeout": DEFAULT_TIMEOUT, "allow_redirects": True}
            send_kwargs.update(settings)
            resp = self.send(prep, **send_kwargs)
            return resp


    if __name__ == "__main__":
        main()
''')


def test_python_whole_units_when_they_fit() -> None:
    found = chunks("python", PYTHON, 550)
    assert bounds(found) == [
        (1, 6, "block", "DEFAULT_TIMEOUT"),  # module docstring, imports and constant merged
        (9, 15, "function", "merge_setting"),  # decorators kept
        (18, 30, "block", "Session"),  # leading comment, class line, docstring, small methods
        (32, 44, "method", "Session.request"),  # the whole method
        (47, 48, "block", None),
    ]
    assert found[3].header == "class Session(SessionRedirectMixin):"
    assert text(PYTHON, found[1]).startswith("@cache\n@trace(level=2)\ndef merge_setting(")


def test_python_class_too_large_splits_into_methods_and_statements() -> None:
    found = chunks("python", PYTHON, 150)
    assert bounds(found) == [
        (1, 6, "block", "DEFAULT_TIMEOUT"),
        (9, 12, "function", "merge_setting"),  # decorators, signature and docstring together
        (13, 15, "function", "merge_setting"),
        (18, 22, "block", "Session"),
        (24, 27, "method", "Session.__init__"),
        (29, 30, "method", "Session.__repr__"),
        (32, 33, "method", "Session.request"),
        (34, 36, "method", "Session.request"),  # split at statement boundaries
        (37, 40, "method", "Session.request"),  # the for loop stays whole
        (41, 44, "method", "Session.request"),
        (47, 48, "block", None),
    ]
    cls = "class Session(SessionRedirectMixin):"
    assert [c.header for c in found[4:7]] == [cls, cls, cls]
    assert found[7].header == cls + "\ndef request(self, method, url, params=None, data=None):"
    assert found[2].header == "def merge_setting(request_setting, session_setting):"
    assert found[0].header == found[1].header == found[3].header == ""


def test_python_nested_function_gets_the_outer_signature() -> None:
    source = src('''
        def outer(items):
            total = 0
            for item in items:
                total += weigh(item)

            def inner(value):
                """Scale a value."""
                scaled = value * factor(total)
                return normalize(scaled, total, items)

            return [inner(i) for i in items]
    ''')
    found = chunks("python", source, 100)
    assert bounds(found) == [
        (1, 4, "function", "outer"),
        (6, 9, "function", "outer.inner"),
        (11, 11, "function", "outer"),
    ]
    assert found[1].header == found[2].header == "def outer(items):"


TYPESCRIPT = src("""
    import { Router } from './router';
    import * as path from 'path';

    const DEFAULT_PORT = 3000;

    /**
     * Create an application.
     */
    export function createApp(name: string): App {
      return new App(name);
    }

    @Injectable()
    export class App extends Base implements Service {
      private routes: Route[] = [];

      constructor(private name: string) {
        super();
      }

      /** Register a route handler for GET requests. */
      @Log()
      get(pattern: string, handler: Handler): this {
        const route = new Route(pattern, handler);
        this.routes.push(route);
        this.emit('route', route);
        return this;
      }

      listen(port: number = DEFAULT_PORT): Server {
        const server = http.createServer((req, res) => this.handle(req, res));
        server.on('error', (err) => this.emit('error', err));
        server.listen(port, () => console.log(`listening on ${port}`));
        for (const route of this.routes) {
          registerRoute(server, route.pattern, route.handler);
          logger.debug('registered', route.pattern);
        }
        return server;
      }
    }

    export const handler = async (req: Request): Promise<Response> => {
      return respond(req);
    };
""")


def test_typescript_boundaries() -> None:
    found = chunks("typescript", TYPESCRIPT, 150)
    assert bounds(found) == [
        (1, 4, "block", None),
        (6, 11, "function", "createApp"),  # JSDoc kept with the export
        (13, 15, "block", "App"),  # decorator, class line, field
        (17, 19, "method", "App.constructor"),
        (21, 25, "method", "App.get"),  # doc comment and decorator stay with the method
        (26, 28, "method", "App.get"),
        (30, 31, "method", "App.listen"),
        (32, 33, "method", "App.listen"),
        (34, 40, "method", "App.listen"),  # the loop whole; closing braces of method and class kept
        (42, 44, "function", "handler"),  # arrow function assigned to an exported const
    ]
    assert text(TYPESCRIPT, found[8]).rstrip().endswith("return server;\n  }\n}")
    assert found[4].header == "class App extends Base implements Service"
    whole = chunks("typescript", TYPESCRIPT, 700)
    assert bounds(whole) == [
        (1, 11, "function", "createApp"),
        (13, 40, "class", "App"),
        (42, 44, "function", "handler"),
    ]


JAVASCRIPT = src("""
    'use strict';

    var deprecate = require('depd')('express');

    /**
     * Set status `code`.
     *
     * @param {Number} code
     * @public
     */

    res.status = function status(code) {
      if ((typeof code === 'string' || Math.floor(code) !== code) && code > 99 && code < 1000) {
        deprecate('res.status(' + JSON.stringify(code) + '): use res.status(' + Math.floor(code) + ')');
      }
      this.statusCode = code;
      return this;
    };

    /**
     * Set Link header field with the given `links`.
     */

    res.links = function(links){
      var link = this.get('Link') || '';
      if (link) link += ', ';
      return this.set('Link', link + Object.keys(links).map(function(rel){
        return '<' + links[rel] + '>; rel="' + rel + '"';
      }).join(', '));
    };
""")


def test_javascript_jsdoc_a_blank_line_above_stays_with_the_function() -> None:
    found = chunks("javascript", JAVASCRIPT, 250)
    assert bounds(found) == [
        (1, 3, "block", None),
        (5, 18, "method", "res.status"),
        (20, 30, "method", "res.links"),
    ]
    assert text(JAVASCRIPT, found[1]).endswith("return this;\n};")


GO = src("""
    package server

    import (
    \t"fmt"
    \t"net/http"
    )

    // Server serves HTTP requests.
    type Server struct {
    \taddr    string
    \thandler http.Handler
    }

    // NewServer returns a server listening on addr.
    func NewServer(addr string) *Server {
    \treturn &Server{addr: addr}
    }

    // ListenAndServe starts the server and blocks.
    func (s *Server) ListenAndServe() error {
    \tmux := http.NewServeMux()
    \tmux.HandleFunc("/", s.handleRoot)
    \tmux.HandleFunc("/health", s.handleHealth)
    \tif s.handler == nil {
    \t\ts.handler = mux
    \t}
    \tfmt.Printf("listening on %s\\n", s.addr)
    \tfor i := 0; i < 3; i++ {
    \t\tfmt.Println("attempt", i)
    \t\tlogAttempt(s.addr, i)
    \t}
    \treturn http.ListenAndServe(s.addr, s.handler)
    }
""")


def test_go_boundaries() -> None:
    found = chunks("go", GO, 120)
    assert bounds(found) == [
        (1, 6, "block", None),
        (8, 12, "class", "Server"),
        (14, 17, "function", "NewServer"),
        (19, 21, "method", "Server.ListenAndServe"),
        (22, 26, "method", "Server.ListenAndServe"),
        (27, 31, "method", "Server.ListenAndServe"),
        (32, 33, "method", "Server.ListenAndServe"),
    ]
    assert found[4].header == "func (s *Server) ListenAndServe() error"
    assert text(GO, found[-1]).endswith("s.handler)\n}")
    assert bounds(chunks("go", GO, 700)) == [(1, 33, "block", None)]  # the whole file fits


def test_rust_doc_comment_and_attribute_stay_with_the_struct() -> None:
    source = src("""
        use std::fmt;

        /// A 2D point.
        #[derive(Debug, Clone)]
        pub struct Point {
            x: f64,
            y: f64,
        }

        impl Point {
            /// Create a point.
            pub fn new(x: f64, y: f64) -> Self {
                Point { x, y }
            }

            pub fn distance(&self, other: &Point) -> f64 {
                let dx = self.x - other.x;
                let dy = self.y - other.y;
                (dx * dx + dy * dy).sqrt()
            }
        }
    """)
    found = chunks("rust", source, 120)
    assert bounds(found) == [
        (1, 8, "class", "Point"),
        (10, 14, "method", "Point.new"),
        (16, 21, "method", "Point.distance"),
    ]
    assert found[2].header == "impl Point"
    assert text(source, found[2]).endswith("}\n}")


def test_java_annotations_javadoc_and_closing_brace() -> None:
    source = src("""
        package com.example;

        import java.util.List;

        /**
         * Routes requests.
         */
        @Service
        public class Router extends Base implements Handler {
            private final List<Route> routes = new ArrayList<>();

            // Adds a route.
            @Override
            public void add(String pattern, Handler handler) {
                routes.add(new Route(pattern, handler));
            }

            public Response dispatch(Request request) {
                for (Route route : routes) {
                    if (route.matches(request.path())) {
                        log.debug("matched {}", route);
                        return route.handle(request);
                    }
                }
                metrics.increment("router.miss");
                notFoundHandler.handle(request);
                return Response.notFound(request.path());
            }
        }
    """)
    found = chunks("java", source, 120)
    assert bounds(found) == [
        (1, 3, "block", None),
        (5, 9, "block", "Router"),
        (10, 10, "block", "Router"),
        (12, 16, "method", "Router.add"),  # comment and @Override kept
        (18, 18, "method", "Router.dispatch"),
        (19, 24, "method", "Router.dispatch"),  # the for statement whole
        (25, 29, "method", "Router.dispatch"),
    ]
    assert text(source, found[-1]).endswith("}\n}")
    assert bounds(chunks("java", source, 550)) == [(1, 29, "class", "Router")]


def test_ruby_end_stays_with_its_method() -> None:
    source = src("""
        require 'json'

        # Parses configuration.
        class Config < Base
          attr_reader :values

          def initialize(path)
            @path = path
            @values = {}
          end

          # Load and parse the file.
          def load
            text = File.read(@path)
            data = JSON.parse(text)
            data.each do |key, value|
              @values[key.to_sym] = value
              notify(key)
            end
            validate!
            self
          end
        end
    """)
    found = chunks("ruby", source, 120)
    assert bounds(found) == [
        (1, 5, "block", "Config"),  # a lone require is merged, not left as a mini-chunk
        (7, 10, "method", "Config.initialize"),
        (12, 15, "method", "Config.load"),
        (16, 23, "method", "Config.load"),
    ]
    assert text(source, found[-1]).endswith("self\n  end\nend")


def test_c_function_split_keeps_signature_with_comment() -> None:
    source = src("""
        #include <stdio.h>
        #include <stdlib.h>

        /* A growable buffer. */
        struct buffer {
            char *data;
            size_t len;
        };

        /* Append bytes, growing as needed. */
        static int buffer_append(struct buffer *b, const char *src, size_t n) {
            if (b->len + n > b->cap) {
                size_t cap = b->cap ? b->cap * 2 : 64;
                b->data = realloc(b->data, cap);
                b->cap = cap;
            }
            memcpy(b->data + b->len, src, n);
            b->len += n;
            return 0;
        }
    """)
    found = chunks("c", source, 120)
    assert bounds(found) == [
        (1, 2, "block", None),
        (4, 8, "class", "buffer"),
        (10, 11, "function", "buffer_append"),
        (12, 20, "function", "buffer_append"),
    ]


SMALL_SAMPLES = {
    "cpp": """
        namespace ns {
        // Widget does things.
        class Widget : public Base {
         public:
          void run() { helper(); this->step(); }
          int size() const { return items_.size(); }
         private:
          std::vector<int> items_;
        };
        }
    """,
    "csharp": """
        namespace App {
          /// <summary>Does things.</summary>
          [Serializable]
          public class Foo : Bar {
            public void Run(int x) { Helper(x); this.Other(); }
            public int Size() { return items.Count; }
          }
        }
    """,
    "php": """
        <?php
        /** A foo. */
        class Foo extends Bar {
            #[Route('/x')]
            public function run($x) { $this->helper($x); return strlen($x); }
            public function size() { return count($this->items); }
        }
    """,
    "kotlin": """
        /** A foo. */
        @Serializable
        class Foo(val x: Int) : Bar() {
            fun run(y: Int): Int { helper(y); return max(x, y) }
            fun size(): Int = items.size
        }
    """,
    "swift": """
        /// A foo.
        class Foo: Bar {
            @objc func run(x: Int) -> Int { helper(x); return max(x, 1) }
            func size() -> Int { return items.count }
        }
    """,
    "scala": """
        /** A foo. */
        class Foo(x: Int) extends Bar {
          def run(y: Int): Int = { helper(y); math.max(x, y) }
          def size(): Int = items.size
        }
    """,
    "lua": """
        local M = {}
        -- Runs it.
        function M.run(x)
          helper(x)
          return x * 2
        end
        return M
    """,
    "bash": """
        #!/bin/bash
        # Builds it.
        build() {
          helper "$1"
          echo done
        }
        build "$@"
    """,
}


@pytest.mark.parametrize("lang", sorted(SMALL_SAMPLES))
def test_small_files_are_one_chunk_and_split_cleanly(lang: str) -> None:
    source = src(SMALL_SAMPLES[lang])
    whole = chunks(lang, source, 550)
    assert len(whole) == 1
    assert text(source, whole[0]).strip() == source.decode().strip()
    tight = chunks(lang, source, 40)
    assert len(tight) > 1
    _assert_invariants(lang, source, tight, 40)


def _assert_invariants(lang: str, source: bytes, found: list[Chunk], budget: int) -> None:
    """Chunks are ordered, do not overlap, and cover every non-whitespace byte of the file."""
    covered = bytearray(len(source))
    last_end = 0
    for chunk in found:
        assert chunk.start_byte >= last_end, (lang, chunk)
        assert chunk.kind in ("function", "method", "class", "block")
        last_end = chunk.end_byte
        covered[chunk.start_byte : chunk.end_byte] = b"\x01" * (chunk.end_byte - chunk.start_byte)
        assert source.count(b"\n", 0, chunk.start_byte) + 1 == chunk.start_line
    lost = [i for i, byte in enumerate(source) if not covered[i] and not chr(byte).isspace()]
    assert not lost, (lang, source[lost[0] : lost[0] + 40])


@pytest.mark.parametrize("budget", [40, 80, 150, 300, 550])
@pytest.mark.parametrize(
    ("lang", "source"),
    [("python", PYTHON), ("typescript", TYPESCRIPT), ("javascript", JAVASCRIPT), ("go", GO)],
)
def test_invariants_at_every_budget(lang: str, source: bytes, budget: int) -> None:
    found = chunks(lang, source, budget)
    _assert_invariants(lang, source, found, budget)
    size = NonWhitespace(source)
    limit = budget + budget // 6  # the budget, plus the slack a merged mini-chunk may add
    for chunk in found:
        assert size(chunk.start_byte, chunk.end_byte) <= limit or _single_statement(lang, source, chunk)


def _single_statement(lang: str, source: bytes, chunk: Chunk) -> bool:
    """An oversize chunk is allowed only when it is one line that cannot be cut at a statement."""
    return chunk.start_line == chunk.end_line


def test_no_mini_chunks_among_many_small_definitions() -> None:
    lines = []
    for i in range(40):
        lines.append(f"def handler_{i}(request):\n    return respond(request, code={i})\n\n")
        if i % 7 == 0:
            lines.append(f"ROUTE_{i} = '/route/{i}'\n\n")
    source = "".join(lines).encode()
    options = ChunkOptions(max_chars=300)
    found = parse_file("routes.py", source, "python", (), options).chunks
    size = NonWhitespace(source)
    assert len(found) > 5
    assert all(size(c.start_byte, c.end_byte) >= options.min_size for c in found)
    assert all(size(c.start_byte, c.end_byte) <= 300 for c in found)
    for chunk in found:  # every definition lies whole in one chunk
        body = source[chunk.start_byte : chunk.end_byte].decode()
        assert body.count("def ") == body.count("return respond(")


def test_large_function_splits_at_statement_boundaries() -> None:
    body = "".join(f"    value_{i} = compute(value_{i - 1}, factor={i})\n" for i in range(1, 60))
    source = f"def pipeline(value_0):\n{body}    return value_59\n".encode()
    found = chunks("python", source, 200)
    assert len(found) > 5
    tree = get_parser("python").parse(source)
    block = tree.root_node.children[0].child_by_field_name("body")
    assert block is not None
    statement_rows = {child.start_point.row + 1 for child in block.named_children}
    assert found[0].start_line == 1
    for chunk in found[1:]:
        assert chunk.start_line in statement_rows
        assert chunk.kind == "function" and chunk.symbol == "pipeline"
        assert chunk.header == "def pipeline(value_0):"


def test_a_huge_leaf_is_cut_by_lines_within_budget() -> None:
    text_lines = "\n".join(f"    line {i} of a very long docstring with words" for i in range(200))
    source = f'X = 1\n\ndef f():\n    """\n{text_lines}\n    """\n    return X\n'.encode()
    found = chunks("python", source, 300)
    size = NonWhitespace(source)
    assert len(found) > 10
    assert all(size(c.start_byte, c.end_byte) <= 300 + 50 for c in found)
    _assert_invariants("python", source, found, 300)


# -- line fallback ---------------------------------------------------------------------------------


def test_line_spans_overlap_and_always_move_forward() -> None:
    source = "".join(f"line {i:04d} " + "x" * 40 + "\n" for i in range(500)).encode()
    options = ChunkOptions(line_chunk_tokens=100, line_overlap_tokens=20)  # 400 bytes, 80 overlap
    spans = line_spans(source, options)
    assert spans[0].start == 0 and spans[-1].end == len(source)
    for a, b in zip(spans, spans[1:], strict=False):
        assert b.start > a.start
        assert a.end - 80 - 51 <= b.start <= a.end  # about 80 bytes of overlap, whole lines
        assert source[b.start - 1 : b.start] == b"\n"
    assert all(s.end - s.start <= 400 for s in spans)
    assert all(s.kind == "text" for s in spans)


def test_one_huge_line_is_cut_by_bytes_and_terminates() -> None:
    source = ("é" + "a" * 99) * 2000  # 202 KB, one line, multibyte characters
    data = source.encode()
    spans = cut_spans(data, 0, len(data), 2800, 320)
    assert len(spans) >= 70
    assert spans[0][0] == 0 and spans[-1][1] == len(data)
    for (_, a1), (b0, b1) in zip(spans, spans[1:], strict=False):
        assert b0 >= a1  # no overlap possible without a line boundary: contiguous, forward
        assert b1 > a1
    for a, b in spans:
        data[a:b].decode("utf-8")  # never cut inside a character


def test_markdown_sections_by_heading() -> None:
    source = (
        src("""
        # Title

        Intro paragraph.

        ## Install

        Run `pip install codeseek`.

        ```bash
        # not a heading inside a fence
        make setup
        ```

        ## Usage

    """)
        + ("Usage text line that goes on.\n" * 200).encode()
    )
    spans = markdown_spans(source, ChunkOptions())
    assert spans[0].symbol == "Title"
    assert source[spans[0].start : spans[0].end].decode().count("# not a heading") == 1
    usage = [s for s in spans if s.symbol == "Usage"]
    assert len(usage) >= 2  # a section over the line budget is cut by lines
    assert all(s.kind == "section" for s in spans)
    assert all(s.end - s.start <= ChunkOptions().line_chars for s in spans)
