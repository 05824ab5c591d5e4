"""Definitions, call sites and imports per language, from real grammars and real-looking code."""

from __future__ import annotations

import textwrap

from indexing.parse import parse_file
from indexing.records import ParseResult

EXT = {
    "python": "py",
    "javascript": "js",
    "typescript": "ts",
    "tsx": "tsx",
    "go": "go",
    "rust": "rs",
    "java": "java",
    "c": "c",
    "cpp": "cpp",
    "csharp": "cs",
    "ruby": "rb",
    "php": "php",
    "kotlin": "kt",
    "lua": "lua",
    "bash": "sh",
    "scala": "scala",
    "swift": "swift",
    "zig": "zig",
}


def parse(lang: str, code: str) -> ParseResult:
    source = textwrap.dedent(code).lstrip("\n").encode()
    return parse_file(f"src/sample.{EXT[lang]}", source, lang, ("source",))


def defs(result: ParseResult) -> dict[str, tuple[str, str | None, tuple[str, ...]]]:
    return {d.qualified_name: (d.kind, d.parent, d.bases) for d in result.definitions}


def calls(result: ParseResult) -> list[tuple[str | None, str, str | None]]:
    return [(c.receiver, c.callee, c.caller) for c in result.calls]


def imports(result: ParseResult) -> list[tuple[str, str | None, str | None]]:
    return [(i.module, i.name, i.alias) for i in result.imports]


PYTHON = '''
import os.path
import json as j, sys
from .adapters import HTTPAdapter as Adapter, BaseAdapter
from ..utils import *

DEFAULT_REDIRECT_LIMIT = 30


class SessionRedirectMixin(Base, mixins.Other, metaclass=Meta):
    """Redirect handling.

    More text.
    """

    def rebuild_auth(self, prepared_request, response):
        headers = prepared_request.headers
        if self.should_strip_auth(response.request.url, prepared_request.url):
            del headers["Authorization"]
        new_auth = get_netrc_auth(url) if self.trust_env else None
        os.path.join("a", "b")
        self.session.send(prepared_request)

        def inner(x):
            return helper(x)

        return inner


@decorator
async def fetch(url):
    # not a docstring
    return await client.get(url)
'''


def test_python_definitions() -> None:
    result = parse("python", PYTHON)
    assert defs(result) == {
        "DEFAULT_REDIRECT_LIMIT": ("constant", None, ()),
        "SessionRedirectMixin": ("class", None, ("Base", "mixins.Other")),
        "SessionRedirectMixin.rebuild_auth": ("method", "SessionRedirectMixin", ()),
        "SessionRedirectMixin.rebuild_auth.inner": ("function", "SessionRedirectMixin.rebuild_auth", ()),
        "fetch": ("function", None, ()),
    }
    by_name = {d.qualified_name: d for d in result.definitions}
    cls = by_name["SessionRedirectMixin"]
    assert cls.signature == "class SessionRedirectMixin(Base, mixins.Other, metaclass=Meta):"
    assert cls.doc == "Redirect handling."
    assert (cls.start_line, cls.end_line, cls.name_line, cls.name_column) == (9, 26, 9, 6)
    method = by_name["SessionRedirectMixin.rebuild_auth"]
    assert method.signature == "def rebuild_auth(self, prepared_request, response):"
    assert (method.start_line, method.end_line, method.name_line, method.name_column) == (15, 26, 15, 8)
    fetch = by_name["fetch"]
    assert (fetch.start_line, fetch.end_line) == (29, 32)  # the decorator belongs to the range
    assert fetch.signature == "async def fetch(url):"
    assert fetch.doc == ""  # a comment inside the body is not a docstring


def test_python_calls_with_receivers_and_callers() -> None:
    result = parse("python", PYTHON)
    assert calls(result) == [
        ("self", "should_strip_auth", "SessionRedirectMixin.rebuild_auth"),
        (None, "get_netrc_auth", "SessionRedirectMixin.rebuild_auth"),
        ("os.path", "join", "SessionRedirectMixin.rebuild_auth"),
        ("self.session", "send", "SessionRedirectMixin.rebuild_auth"),
        (None, "helper", "SessionRedirectMixin.rebuild_auth.inner"),
        ("client", "get", "fetch"),
    ]
    first = result.calls[0]
    assert (first.line, first.column, first.end_column) == (17, 16, 33)


def test_python_imports() -> None:
    assert imports(parse("python", PYTHON)) == [
        ("os.path", None, None),
        ("json", None, "j"),
        ("sys", None, None),
        (".adapters", "HTTPAdapter", "Adapter"),
        (".adapters", "BaseAdapter", None),
        ("..utils", "*", None),
    ]


JAVASCRIPT = """
const express = require('express');
const { Router, json: parseJson } = require('./router');
import def, { a as b, c } from './x';
import * as ns from "lib";
import './side-effect';

/**
 * Create an app.
 */
function createApplication(options) {
  const app = new Application(options);
  app.init();
  mixin(app, EventEmitter.prototype, false);
  return app;
}

class View extends Base {
  constructor(name) {
    super();
    this.name = name;
  }

  render(options, callback) {
    return this.engine(this.path, options, callback);
  }
}

const lookup = (name) => resolve(name);
exports.handler = function handler(req) { return lookup(req.path); };
res.send = function send(body) { this.end(body); };
"""


def test_javascript_definitions_calls_imports() -> None:
    result = parse("javascript", JAVASCRIPT)
    assert defs(result) == {
        "createApplication": ("function", None, ()),
        "View": ("class", None, ("Base",)),
        "View.constructor": ("method", "View", ()),
        "View.render": ("method", "View", ()),
        "lookup": ("function", None, ()),
        "exports.handler": ("method", "exports", ()),
        "res.send": ("method", "res", ()),
    }
    create = next(d for d in result.definitions if d.name == "createApplication")
    assert create.doc == "Create an app."
    assert create.signature == "function createApplication(options)"
    assert calls(result) == [
        (None, "require", None),
        (None, "require", None),
        (None, "Application", "createApplication"),
        ("app", "init", "createApplication"),
        (None, "mixin", "createApplication"),
        ("this", "engine", "View.render"),
        (None, "resolve", "lookup"),
        (None, "lookup", "exports.handler"),
        ("this", "end", "res.send"),
    ]
    assert imports(result) == [
        ("express", None, "express"),
        ("./router", "Router", None),
        ("./router", "json", "parseJson"),
        ("./x", "default", "def"),
        ("./x", "a", "b"),
        ("./x", "c", None),
        ("lib", None, "ns"),
        ("./side-effect", None, None),
    ]


TYPESCRIPT = """
import { Injectable } from '@angular/core';

/** Greets people. */
@Injectable()
export class Greeter extends Base implements IGreeter, Other {
  @Input() name: string;

  greet(who: string): string {
    return this.format(who);
  }
}

export interface IGreeter extends Named {
  greet(who: string): string;
}

export type Id = string | number;
export enum Color { Red, Green }
export const double = (x: number): number => x * 2;
export function main(): void {
  new Greeter().greet(String(double(1)));
}
namespace Util { export function pad(s: string) { return s; } }
"""


def test_typescript_definitions_calls_imports() -> None:
    result = parse("typescript", TYPESCRIPT)
    assert defs(result) == {
        "Greeter": ("class", None, ("Base", "IGreeter", "Other")),
        "Greeter.greet": ("method", "Greeter", ()),
        "IGreeter": ("interface", None, ("Named",)),
        "IGreeter.greet": ("method", "IGreeter", ()),
        "Id": ("type", None, ()),
        "Color": ("enum", None, ()),
        "double": ("function", None, ()),
        "main": ("function", None, ()),
        "Util": ("module", None, ()),
        "Util.pad": ("function", "Util", ()),
    }
    greeter = next(d for d in result.definitions if d.name == "Greeter")
    assert (greeter.start_line, greeter.name_line) == (4, 5)  # the decorator is part of the range
    assert greeter.doc == "Greets people."
    assert ("this", "format", "Greeter.greet") in calls(result)
    assert (None, "double", "main") in calls(result)
    assert (None, "Greeter", "main") in calls(result)
    assert imports(result) == [("@angular/core", "Injectable", None)]


def test_tsx_uses_the_typescript_query() -> None:
    result = parse(
        "tsx",
        """
        import React from 'react';
        export const Button = ({ label }: Props) => <button onClick={() => track(label)}>{label}</button>;
        export default function App() { return <Button label="x" />; }
    """,
    )
    assert defs(result) == {"Button": ("function", None, ()), "App": ("function", None, ())}
    assert calls(result) == [(None, "track", "Button")]
    assert imports(result) == [("react", "default", "React")]


GO = """
package server

import (
\t"fmt"
\tstr "strings"
)

import "net/http"

// Server serves requests.
type Server struct {
\tBase
\taddr string
}

// Handler handles.
type Handler interface {
\tio.Reader
\tServe(w Writer) error
}

type ID string

// Handle dispatches.
func (s *Server) Handle(w http.ResponseWriter) error {
\tfmt.Println(s.addr)
\ts.log(str.ToUpper("x"))
\treturn nil
}

func (g Generic[T]) Get() T { return g.v }

func NewServer() *Server { return &Server{} }
"""


def test_go_definitions_calls_imports() -> None:
    result = parse("go", GO)
    assert defs(result) == {
        "Server": ("struct", None, ("Base",)),
        "Handler": ("interface", None, ("io.Reader",)),
        "Handler.Serve": ("method", "Handler", ()),
        "ID": ("type", None, ()),
        "Server.Handle": ("method", "Server", ()),
        "Generic.Get": ("method", "Generic", ()),
        "NewServer": ("function", None, ()),
    }
    handle = next(d for d in result.definitions if d.qualified_name == "Server.Handle")
    assert handle.doc == "Handle dispatches."
    assert handle.signature == "func (s *Server) Handle(w http.ResponseWriter) error"
    assert calls(result) == [
        ("fmt", "Println", "Server.Handle"),
        ("s", "log", "Server.Handle"),
        ("str", "ToUpper", "Server.Handle"),
    ]
    assert imports(result) == [("fmt", None, None), ("strings", None, "str"), ("net/http", None, None)]


def test_rust_definitions_calls_imports() -> None:
    result = parse(
        "rust",
        """
        use std::collections::HashMap;
        use crate::net::{Client, Config as Cfg};

        /// A point.
        #[derive(Debug)]
        pub struct Point { x: i32 }

        impl Point {
            /// Make one.
            pub fn new(x: i32) -> Self { Point { x } }
            fn go(&self) { self.helper(1); foo::bar(); baz(); }
        }

        impl Display for Point { fn fmt(&self) {} }
        trait Shape: Debug { fn area(&self) -> f64; }
        enum Kind { A, B }
        fn main() { let p = Point::new(1); p.go(); println!("x"); }
    """,
    )
    assert defs(result) == {
        "Point": ("struct", None, ()),
        "Point.new": ("method", "Point", ()),
        "Point.go": ("method", "Point", ()),
        "Point.fmt": ("method", "Point", ()),
        "Shape": ("trait", None, ("Debug",)),
        "Shape.area": ("method", "Shape", ()),
        "Kind": ("enum", None, ()),
        "main": ("function", None, ()),
    }
    point = next(d for d in result.definitions if d.name == "Point")
    assert point.doc == "A point."  # the attribute between doc comment and struct is skipped
    assert calls(result) == [
        ("self", "helper", "Point.go"),
        ("foo", "bar", "Point.go"),
        (None, "baz", "Point.go"),
        ("Point", "new", "main"),
        ("p", "go", "main"),
        (None, "println", "main"),
    ]
    assert imports(result) == [
        ("std::collections", "HashMap", None),
        ("crate::net", "Client", None),
        ("crate::net", "Config", "Cfg"),
    ]


def test_java_definitions_calls_imports() -> None:
    result = parse(
        "java",
        """
        package a.b;
        import java.util.List;
        import static org.junit.Assert.*;

        /** A foo. */
        @Deprecated
        public class Foo extends Bar implements Baz, Qux {
            public Foo() { super(); }
            @Override
            public void run(int x) { helper(x); this.other(); System.out.println("x"); new Widget(); }
            interface Inner { void m(); }
        }
    """,
    )
    assert defs(result) == {
        "Foo": ("class", None, ("Bar", "Baz", "Qux")),
        "Foo.Foo": ("method", "Foo", ()),
        "Foo.run": ("method", "Foo", ()),
        "Foo.Inner": ("interface", "Foo", ()),
        "Foo.Inner.m": ("method", "Foo.Inner", ()),
    }
    foo = next(d for d in result.definitions if d.name == "Foo" and d.kind == "class")
    assert foo.doc == "A foo."
    assert foo.signature == "public class Foo extends Bar implements Baz, Qux"
    assert calls(result) == [
        (None, "helper", "Foo.run"),
        ("this", "other", "Foo.run"),
        ("System.out", "println", "Foo.run"),
        (None, "Widget", "Foo.run"),
    ]
    assert imports(result) == [("java.util", "List", None), ("org.junit.Assert", "*", None)]


def test_c_and_cpp() -> None:
    c = parse(
        "c",
        """
        #include <stdio.h>
        #include "local.h"
        /* Adds. */
        static int add(int a, int b) { return helper(a) + b; }
        struct point { int x; };
        int main(void) { printf("%d", add(1, 2)); p->fn(3); return 0; }
    """,
    )
    assert defs(c) == {
        "add": ("function", None, ()),
        "point": ("struct", None, ()),
        "main": ("function", None, ()),
    }
    assert next(d for d in c.definitions if d.name == "add").doc == "Adds."
    assert calls(c) == [
        (None, "helper", "add"),
        (None, "printf", "main"),
        (None, "add", "main"),
        ("p", "fn", "main"),
    ]
    assert imports(c) == [("stdio.h", None, None), ("local.h", None, None)]
    cpp = parse(
        "cpp",
        """
        #include <vector>
        namespace ns {
        class Foo : public Bar {
         public:
          void run() { helper(); this->x(); std::sort(a, b); }
          void decl();
        };
        void Foo::other(int a) { run(); }
        template <typename T> T id(T x) { return x; }
        }
    """,
    )
    assert defs(cpp) == {
        "Foo": ("class", None, ("Bar",)),
        "Foo.run": ("method", "Foo", ()),
        "Foo.decl": ("method", "Foo", ()),
        "Foo.other": ("method", "Foo", ()),
        "id": ("function", None, ()),
    }
    assert calls(cpp) == [
        (None, "helper", "Foo.run"),
        ("this", "x", "Foo.run"),
        ("std", "sort", "Foo.run"),
        (None, "run", "Foo.other"),
    ]


def test_csharp() -> None:
    result = parse(
        "csharp",
        """
        using System;
        using Text = System.Text;
        namespace App {
          /// <summary>Does things.</summary>
          [Serializable]
          public class Foo : Bar, IBaz {
            public void Run(int x) { Helper(x); this.Other(); Console.WriteLine("x"); }
          }
          interface IBaz { void M(); }
          struct S {}
          enum E { A }
        }
    """,
    )
    assert defs(result) == {
        "Foo": ("class", None, ("Bar", "IBaz")),
        "Foo.Run": ("method", "Foo", ()),
        "IBaz": ("interface", None, ()),
        "IBaz.M": ("method", "IBaz", ()),
        "S": ("struct", None, ()),
        "E": ("enum", None, ()),
    }
    assert next(d for d in result.definitions if d.name == "Foo").doc == "Does things."
    assert calls(result) == [
        (None, "Helper", "Foo.Run"),
        ("this", "Other", "Foo.Run"),
        ("Console", "WriteLine", "Foo.Run"),
    ]
    assert imports(result) == [("System", None, None), ("System.Text", None, "Text")]


def test_ruby_and_php() -> None:
    ruby = parse(
        "ruby",
        """
        require 'json'
        require_relative 'foo'
        # A foo.
        class Foo < Bar
          def run(x)
            helper(x)
            self.other
            JSON.parse(x)
          end
          def self.build; new; end
        end
    """,
    )
    assert defs(ruby) == {
        "Foo": ("class", None, ("Bar",)),
        "Foo.run": ("method", "Foo", ()),
        "Foo.build": ("method", "Foo", ()),
    }
    assert next(d for d in ruby.definitions if d.name == "Foo").doc == "A foo."
    assert calls(ruby) == [
        (None, "helper", "Foo.run"),
        ("self", "other", "Foo.run"),
        ("JSON", "parse", "Foo.run"),
    ]
    assert imports(ruby) == [("json", None, None), ("foo", None, None)]
    php = parse(
        "php",
        """
        <?php
        namespace App;
        use Foo\\Bar as Baz;
        class Foo extends Bar implements I {
            public function run($x) { $this->helper($x); self::other(); strlen($x); }
        }
        function top() { return 1; }
        interface I {}
        trait T {}
    """,
    )
    assert defs(php) == {
        "Foo": ("class", None, ("Bar", "I")),
        "Foo.run": ("method", "Foo", ()),
        "top": ("function", None, ()),
        "I": ("interface", None, ()),
        "T": ("trait", None, ()),
    }
    assert calls(php) == [
        ("$this", "helper", "Foo.run"),
        ("self", "other", "Foo.run"),
        (None, "strlen", "Foo.run"),
    ]
    assert imports(php) == [("Foo\\Bar", None, "Baz")]


def test_kotlin_scala_swift() -> None:
    kotlin = parse(
        "kotlin",
        """
        import kotlin.math.max
        import foo.Bar as Baz
        class Foo(val x: Int) : Bar(), Baz {
            fun run(y: Int): Int { helper(y); this.other(); return max(x, y) }
        }
        object O { fun f() = println("x") }
    """,
    )
    assert defs(kotlin) == {
        "Foo": ("class", None, ("Bar", "Baz")),
        "Foo.run": ("method", "Foo", ()),
        "O": ("object", None, ()),
        "O.f": ("method", "O", ()),
    }
    assert calls(kotlin) == [
        (None, "helper", "Foo.run"),
        ("this", "other", "Foo.run"),
        (None, "max", "Foo.run"),
        (None, "println", "O.f"),
    ]
    assert imports(kotlin) == [("kotlin.math.max", None, None), ("foo.Bar", None, "Baz")]
    scala = parse(
        "scala",
        """
        import scala.collection.mutable
        import foo.{Bar, Baz => Q}
        class Foo(x: Int) extends Bar with Baz {
          def run(y: Int): Int = { helper(y); this.other(); math.max(x, y) }
        }
        object O { def f(): Unit = println("x") }
        trait T { def m(): Unit }
    """,
    )
    assert defs(scala) == {
        "Foo": ("class", None, ("Bar", "Baz")),
        "Foo.run": ("method", "Foo", ()),
        "O": ("object", None, ()),
        "O.f": ("method", "O", ()),
        "T": ("trait", None, ()),
        "T.m": ("method", "T", ()),
    }
    assert calls(scala) == [
        (None, "helper", "Foo.run"),
        ("this", "other", "Foo.run"),
        ("math", "max", "Foo.run"),
        (None, "println", "O.f"),
    ]
    assert imports(scala) == [
        ("scala.collection.mutable", None, None),
        ("foo", "Bar", None),
        ("foo", "Baz", "Q"),
    ]
    swift = parse(
        "swift",
        """
        import Foundation
        /// A foo.
        class Foo: Bar, Proto {
            func run(x: Int) -> Int { helper(x); self.other(); return Swift.max(x, 1) }
        }
        struct S { func m() {} }
        protocol P { func p() }
        extension Foo { func ext() {} }
    """,
    )
    assert defs(swift) == {
        "Foo": ("class", None, ("Bar", "Proto")),
        "Foo.run": ("method", "Foo", ()),
        "S": ("struct", None, ()),
        "S.m": ("method", "S", ()),
        "P": ("interface", None, ()),
        "P.p": ("method", "P", ()),
        "Foo.ext": ("method", "Foo", ()),
    }
    assert calls(swift) == [
        (None, "helper", "Foo.run"),
        ("self", "other", "Foo.run"),
        ("Swift", "max", "Foo.run"),
    ]
    assert imports(swift) == [("Foundation", None, None)]


def test_lua_and_bash() -> None:
    lua = parse(
        "lua",
        """
        local json = require("json")
        -- Doubles x.
        local function helper(x) return x * 2 end
        function M.run(x) helper(x); obj:method(1) end
        local f = function() end
    """,
    )
    assert defs(lua) == {
        "helper": ("function", None, ()),
        "M.run": ("method", "M", ()),
        "f": ("function", None, ()),
    }
    assert next(d for d in lua.definitions if d.name == "helper").doc == "Doubles x."
    assert calls(lua) == [(None, "helper", "M.run"), ("obj", "method", "M.run")]
    assert imports(lua) == [("json", None, "json")]
    bash = parse(
        "bash",
        """
        #!/bin/bash
        source ./lib.sh
        # Builds it.
        build() {
          helper "$1"
        }
        function deploy { build x; }
        deploy
    """,
    )
    assert defs(bash) == {"build": ("function", None, ()), "deploy": ("function", None, ())}
    assert next(d for d in bash.definitions if d.name == "build").doc == "Builds it."
    assert calls(bash) == [(None, "helper", "build"), (None, "build", "deploy"), (None, "deploy", None)]
    assert imports(bash) == [("./lib.sh", None, None)]



def test_lua_functions_in_named_tables() -> None:
    """`M.handlers = { git = function ... }` defines `M.handlers.git`; a function in an anonymous table
    (a returned list of specs) or under a string key defines nothing. A table in a module field at the
    top of the file, or in an object's field (`self.x = {}`), is a constant; a table stored elsewhere
    inside a function (a reset, an options field) is not."""
    lua = parse(
        "lua",
        """
        local M = {}
        M.handlers = {
          -- Opens the diff in a browser.
          browser = function(plugin) open(plugin.url) end,
          ["diffview.nvim"] = function(plugin) end,
          git = function(plugin) end,
          title = "diff",
        }
        local actions = { close = function(bufnr) end }
        M.defaults = { ui = { border = "none" } }
        function M.new()
          local self = setmetatable({}, M)
          self.fragments = {}
          M.lock = {}
          opts.list = {}
          return self
        end
        return { { filter = function(p) end } }
    """,
    )
    assert defs(lua) == {
        "M.handlers": ("constant", "M", ()),
        "M.handlers.browser": ("method", "M.handlers", ()),
        "M.handlers.git": ("method", "M.handlers", ()),
        "actions.close": ("method", "actions", ()),
        "M.defaults": ("constant", "M", ()),
        "M.new": ("method", "M", ()),
        "self.fragments": ("constant", "self", ()),
    }
    assert next(d for d in lua.definitions if d.name == "browser").doc == "Opens the diff in a browser."
    assert ("open", "M.handlers.browser") in [(c.callee, c.caller) for c in lua.calls]

def test_zig_containers_functions_and_calls() -> None:
    result = parse(
        "zig",
        """
        const std = @import("std");
        /// A counter.
        pub const Counter = struct {
            n: u32,
            /// Starts at zero.
            pub fn init() Counter {
                return .{ .n = 0 };
            }
            fn bump(self: *Counter) void {
                self.n = add(self.n, 1);
                std.debug.print("{d}", .{self.n});
            }
        };
        pub const Color = enum { red, green };
        pub const Error = error{Overflow};
        fn add(a: u32, b: u32) u32 {
            return a + b;
        }
        pub fn List(comptime T: type) type {
            return struct {
                items: []T,
                pub fn len(self: @This()) usize {
                    return self.items.len;
                }
            };
        }
    """,
    )
    assert defs(result) == {
        "std": ("constant", None, ()),
        "Counter": ("struct", None, ()),
        "Counter.init": ("method", "Counter", ()),
        "Counter.bump": ("method", "Counter", ()),
        "Color": ("enum", None, ()),
        "Error": ("enum", None, ()),
        "add": ("function", None, ()),
        "List": ("function", None, ()),
        "List.len": ("function", "List", ()),
    }
    docs = {d.qualified_name: d.doc for d in result.definitions}
    assert docs["Counter"] == "A counter." and docs["Counter.init"] == "Starts at zero."
    assert calls(result) == [(None, "add", "Counter.bump"), (None, "print", "Counter.bump")]


def test_specific_kind_wins_over_the_generic_class_pattern() -> None:
    result = parse(
        "kotlin",
        """
        interface Repo : Base {
            fun find(id: Int): User
        }
        class Impl : Repo {
            override fun find(id: Int) = load(id)
        }
        """,
    )
    assert defs(result) == {
        "Repo": ("interface", None, ("Base",)),
        "Repo.find": ("method", "Repo", ()),
        "Impl": ("class", None, ("Repo",)),
        "Impl.find": ("method", "Impl", ()),
    }


def test_doc_line_keeps_angle_brackets_that_are_not_xml_doc_tags() -> None:
    source = (b'def parse_feed(node):\n'
              b'    """Read an RSS <item> or an Atom <entry> element."""\n'
              b'    return node\n')
    (definition,) = parse_file("feed.py", source, "python", ("source",)).definitions
    assert definition.doc == "Read an RSS <item> or an Atom <entry> element."
    csharp = b"/// <summary>Adds two numbers.</summary>\npublic class Calc { }\n"
    (cls,) = parse_file("Calc.cs", csharp, "csharp", ("source",)).definitions
    assert cls.doc == "Adds two numbers."
