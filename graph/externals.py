"""Runtime names that are not workspace code: Python builtins, JavaScript globals, and the methods
of builtin types, so the call resolver can leave `len(x)` or `console.log()` external and weigh
`d.get()` on an unknown receiver down instead of linking it to every workspace `get`.
"""

from __future__ import annotations

import builtins

PY_BUILTINS = frozenset(n for n in dir(builtins) if not n.startswith("_"))
# Unknown-receiver calls to these names most often hit a builtin type: their edges weigh 1/(4n).
PY_BUILTIN_METHODS = frozenset(
    n for t in (dict, list, str, set, bytes, tuple) for n in dir(t) if not n.startswith("_"))
JS_BUILTIN_METHODS = frozenset({
    "push", "pop", "shift", "unshift", "slice", "splice", "map", "filter", "reduce", "forEach", "find",
    "findIndex", "indexOf", "includes", "join", "concat", "keys", "values", "entries", "then", "catch",
    "finally", "get", "set", "has", "delete", "add", "clear", "call", "apply", "bind", "toString",
    "replace", "split", "trim", "match", "test", "exec", "some", "every", "sort", "reverse", "charAt",
    "substring", "substr", "toLowerCase", "toUpperCase", "startsWith", "endsWith", "hasOwnProperty",
})
BUILTIN_METHOD_FACTOR = 0.25
JS_GLOBALS = frozenset({
    "console", "Object", "Array", "JSON", "Math", "Promise", "String", "Number", "Boolean", "Date",
    "Reflect", "Symbol", "Map", "Set", "WeakMap", "RegExp", "Error", "process", "Buffer", "window",
    "document", "globalThis", "Intl", "URL", "crypto", "BigInt",
})
JS_GLOBAL_FUNCTIONS = JS_GLOBALS | frozenset({
    "require", "setTimeout", "setInterval", "clearTimeout", "clearInterval", "setImmediate",
    "parseInt", "parseFloat", "isNaN", "isFinite", "encodeURIComponent", "decodeURIComponent",
    "encodeURI", "decodeURI", "escape", "unescape", "TypeError", "RangeError", "SyntaxError",
    "queueMicrotask", "structuredClone", "fetch", "import", "eval",
})
