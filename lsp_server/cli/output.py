"""Output formats and filters of `codeseek search` that match the tools users know (ripgrep, semble).

- `--vimgrep`: `path:line:col:text`, one line per result, at the definition's name line (1-based
  line and column), paths relative to the current directory when below it (absolute otherwise), so
  Vim's `:cexpr`/`grepprg` and editors' "go to" read it directly;
- `--jsonl`: one JSON object per result, written (and flushed) as it is formatted;
- `-C/--context N`: N lines of source before and after the result's line;
- `--type NAME`: restrict to a language, named as a language (`python`) or one of its file
  extensions (`py`); unknown names are an error that lists the known ones.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, TextIO

from indexing.languages import _EXTENSIONS  # the one table of extensions


class OutputError(Exception):
    """A bad output or filter option (unknown --type...); exit status 2."""


def type_names() -> dict[str, str]:
    """Every accepted --type name -> language (language names and extensions without the dot)."""
    names = {language: language for language in _EXTENSIONS.values()}
    for ext, language in _EXTENSIONS.items():
        names.setdefault(ext.lstrip("."), language)
    return names


def type_globs(types: Iterable[str]) -> tuple[str, ...]:
    """Include globs for the named types (every extension of each language)."""
    known = type_names()
    globs: list[str] = []
    for name in types:
        language = known.get(name.lower().lstrip("."))
        if language is None:
            raise OutputError(f"unknown --type {name!r}; known: {', '.join(sorted(set(known.values())))}")
        globs.extend(f"*{ext}" for ext, lang in _EXTENSIONS.items() if lang == language)
    return tuple(dict.fromkeys(globs))


def combine_globs(includes: tuple[str, ...], types: tuple[str, ...]) -> tuple[str, ...]:
    """--include and --type together: each include folder narrowed to the type's extensions."""
    if not types:
        return includes
    if not includes:
        return types
    out: list[str] = []
    for inc in includes:
        base = inc.rstrip("/")
        if inc.endswith("/") or base.endswith("**"):
            folder = base.removesuffix("/**").removesuffix("**").rstrip("/")
            out.extend(f"{folder}/**/{t}" if folder else t for t in types)
        else:  # already a file glob: keep it
            out.append(inc)
    return tuple(dict.fromkeys(out))


def display_path(root: Path, rel: str, cwd: Path | None = None) -> str:
    """`rel` (workspace-relative) as the user would type it from `cwd`."""
    full = root / rel
    here = cwd or Path.cwd()
    try:
        return full.relative_to(here).as_posix()
    except ValueError:
        return str(full)


def result_line(r: dict[str, Any]) -> int:
    """The line a result points at: the definition's name line, else its first line."""
    return int(r.get("line") or r["start_line"])


def _column(text: str, byte_column: int) -> int:
    """1-based character column for a 0-based byte column within `text`."""
    data = text.encode("utf-8", "surrogateescape")
    return len(data[:max(0, byte_column)].decode("utf-8", "replace")) + 1


def vimgrep(results: Iterable[dict[str, Any]], root: Path, lines_of: Callable[[str], list[str] | None],
            stream: TextIO) -> int:
    """Write `path:line:col:text` lines; returns how many were written."""
    count = 0
    for r in results:
        line = result_line(r)
        lines = lines_of(r["path"]) or []
        text = lines[line - 1] if 0 < line <= len(lines) else (r.get("symbol") or "")
        column = _column(text, int(r.get("column") or 0)) if r.get("line") else 1
        stream.write(f"{display_path(root, r['path'])}:{line}:{column}:{text.rstrip()}\n")
        count += 1
    stream.flush()
    return count


def jsonl(results: Iterable[dict[str, Any]], stream: TextIO, extra: dict[str, Any] | None = None) -> int:
    """One JSON object per result, flushed after each; returns how many were written."""
    count = 0
    for rank, r in enumerate(results, 1):
        stream.write(json.dumps({"rank": rank, **(extra or {}), **r}, ensure_ascii=False) + "\n")
        stream.flush()
        count += 1
    return count


def context_lines(lines: list[str] | None, line: int, n: int) -> tuple[int, list[str]]:
    """Lines `line - n .. line + n` (clipped to the file) and the first line's number."""
    if not lines:
        return line, []
    first = max(1, line - n)
    last = min(len(lines), line + n)
    return first, lines[first - 1:last]


def file_lines(root: Path, read: Callable[[str], bytes] | None = None) -> Callable[[str], list[str] | None]:
    """A cached `path -> lines` reader for one command run."""
    cache: dict[str, list[str] | None] = {}

    def lines_of(path: str) -> list[str] | None:
        if path not in cache:
            try:
                data = read(path) if read is not None else (root / path).read_bytes()
                cache[path] = data.decode("utf-8", "replace").splitlines()
            except (OSError, ValueError):
                cache[path] = None
        return cache[path]

    return lines_of


def share(part: int, whole: int) -> str:
    """`part` of `whole` as a whole percentage ("0%" of nothing): the transformer's coverage."""
    return f"{100 * min(part, whole) / whole:.0f}%" if whole else "0%"


def no_results_note(result: dict[str, Any]) -> str | None:
    """What to say when nothing came back (a relevance floor, an empty index...)."""
    if result.get("results"):
        return None
    notes = (result.get("index") or {}).get("notes") or []
    if any("relevance floor" in str(n) for n in notes):
        return "no results: nothing matched well enough (every candidate was below the relevance floor)"
    return "no results"
