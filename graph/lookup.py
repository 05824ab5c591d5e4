"""Resolve a symbol as a person writes it (in a query, on the command line) to definition ids.

Accepted forms, tried exactly first and then case-insensitively:
- a bare name: `select_proxy` (every definition of that name);
- a qualified name: `Session.request`, `Foo::new`, `Foo#bar` (`::`, `#`, `->` read as `.`);
- a module-qualified name: `utils.select_proxy`, `requests.sessions.Session.request` (the leading
  components match a suffix of the file's module path), following re-exports (`requests.Session`
  is found through `requests/__init__.py`);
- a path-qualified name: `requests/utils.py:select_proxy`, `src/app.ts::Router.use`,
  `lib/router/index.js#handle`, or a slash-dotted `requests/utils.select_proxy`;
- failing all those, a qualified-name suffix: `Inner.method` finds `Outer.Inner.method`.
"""

from __future__ import annotations

import posixpath
import re

from graph.resolution import Resolver, SymbolIndex

_PATH_SYMBOL = re.compile(r"^(?P<path>[^\s:#]+\.[A-Za-z0-9]+)(?:::|:|#|\s+)(?P<sym>[\w$.:#]+)$")


def _dedupe(ids: list[int]) -> list[int]:
    return list(dict.fromkeys(ids))


def _by_path(ix: SymbolIndex, path_part: str, symbol: str) -> list[int]:
    path_part = path_part.lstrip("./")
    paths = [p for p in ix.by_path if p == path_part or p.endswith("/" + path_part)]
    symbol = symbol.replace("::", ".").replace("#", ".")
    for fold in (False, True):
        want = symbol.lower() if fold else symbol
        found = []
        for p in paths:
            for i in ix.by_path[p]:
                d = ix.defs[i]
                q, n = (d.qualified_name.lower(), d.name.lower()) if fold else (d.qualified_name, d.name)
                if want in (q, n):
                    found.append(i)
        if found:
            return found
    return []


def _lookup(ix: SymbolIndex, resolver: Resolver, key: str, fold: bool) -> list[int]:
    by_q = ix.by_qname_lower if fold else ix.by_qname
    by_n = ix.by_name_lower if fold else ix.by_name
    found = list(by_q.get(key, ()))
    parts = [p for p in key.split(".") if p]
    if len(parts) <= 1:
        return _dedupe(found + list(by_n.get(key, ())))
    for i in range(1, len(parts)):
        module = tuple(parts[:i])
        rest = ".".join(parts[i:])
        found.extend(d for d in by_q.get(rest, ()) if module in ix.modules.keys_of(ix.defs[d].path, fold))
    if not found and not fold:
        files = ix.modules.file_keys.get(tuple(parts[:-1]), [])
        found.extend(resolver.names_in_module(files, parts[-1]))
    if not found:
        suffix = "." + key
        for i in by_n.get(parts[-1], ()):
            qname = ix.defs[i].qualified_name
            if (qname.lower() if fold else qname).endswith(suffix):
                found.append(i)
    return _dedupe(found)


def resolve_name(ix: SymbolIndex, resolver: Resolver, text: str) -> list[int]:
    """Definition ids `text` names (see the module docstring); [] when nothing matches."""
    text = text.strip()
    if text.endswith("()"):
        text = text[:-2].strip()
    if not text:
        return []
    m = _PATH_SYMBOL.match(text)
    if m and ("/" in m["path"] or posixpath.splitext(m["path"])[1].lower() in _FILE_EXTS):
        return _by_path(ix, m["path"], m["sym"])
    if "/" in text:
        stem, ext = posixpath.splitext(text)
        if ext.lower() in _FILE_EXTS:
            text = stem
        text = ".".join(p for p in text.split("/") if p not in ("", "."))
    text = text.replace("::", ".").replace("#", ".").replace("->", ".")
    for fold in (False, True):
        ids = _lookup(ix, resolver, text.lower() if fold else text, fold)
        if ids:
            return ids
    return []


_FILE_EXTS = frozenset({
    ".py", ".pyi", ".js", ".jsx", ".mjs", ".cjs", ".ts", ".tsx", ".mts", ".cts", ".go", ".rs", ".java",
    ".c", ".h", ".cc", ".cpp", ".cxx", ".hpp", ".hh", ".cs", ".rb", ".php", ".kt", ".kts", ".lua", ".sh",
    ".bash", ".scala", ".swift", ".m", ".mm",
})
