"""Server options: one defaulted dataclass, parsed leniently from what the editor sends.

Options arrive as `initializationOptions` and as the `codeseek` section of `workspace/configuration`.
Keys may be camelCase (`maxFileSize`, as VS Code settings are) or snake_case (`max_file_size`).
`parse_options` never raises: an unknown key or a value of the wrong type is reported as a problem
(the server logs it and shows it once) and the default is used in its place.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, fields, replace
from pathlib import Path
from typing import Any

from retrievers.ranking.profile import DEFAULT_PRESET, PRESETS

MAX_QUESTION_POOL = 200  # chunks the transformer may embed for one question (~0.03 s each on 2 cores)


@dataclass(frozen=True)
class ServerOptions:
    """Everything a user can configure about the server."""

    model: str | None = None  # None: the static tier; "minilm" or a sentence-transformers id/path
    transformer: str | None = "minilm"  # the tier filled in behind a static model; None: none
    transformer_background: bool = True  # phase 3: fill in the transformer tier while idle
    # a question has the transformer embed the static tier's top N it lacks, then rank them; 0: off
    question_pool: int = 40
    index_dir: str | None = None  # base folder for indexes; None: $CODESEEK_INDEX_DIR or the user cache
    excludes: tuple[str, ...] = ()  # extra gitignore-style patterns to skip
    max_file_size: int = 1_000_000  # bytes; larger files are not indexed
    preset: str = DEFAULT_PRESET  # default search preset: one of retrievers.ranking.profile.PRESETS
    hover: bool = True  # the related-code hover panel
    embeddings: bool = True  # phase 2 (embedding chunks); off: text, structure and graph only
    share_engine: bool = True  # answer `codeseek search` per root over a socket (lsp_server.engine_socket)


def advertised() -> dict[str, Any]:
    """What the server tells the editor in `initialize` (`capabilities.experimental.codeseek`): the
    search presets it accepts, so clients list them instead of typing them (README.md "Editors")."""
    return {"codeseek": {"presets": list(PRESETS), "defaultPreset": DEFAULT_PRESET}}


def _snake(key: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "_", key).lower()


def _check_model(value: Any) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str) or not value.strip():
        raise ValueError("must be a non-empty string (a sentence-transformers model id or path)")
    return value.strip()


def _check_transformer(value: Any) -> str | None:
    if value is None or value is False or value == "":
        return None
    return _check_model(value)


def _check_index_dir(value: Any) -> str | None:
    if value is None or value == "":
        return None
    if not isinstance(value, str):
        raise ValueError("must be a path string")
    return str(Path(value).expanduser())


def _check_excludes(value: Any) -> tuple[str, ...]:
    if value is None:
        return ()
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, (list, tuple)) or not all(isinstance(v, str) for v in value):
        raise ValueError("must be a list of glob strings")
    return tuple(v for v in value if v.strip())


def _check_max_file_size(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise ValueError("must be a positive integer (bytes)")
    return value


def _check_question_pool(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= MAX_QUESTION_POOL:
        raise ValueError(f"must be an integer from 0 (off) to {MAX_QUESTION_POOL}")
    return value


def _check_preset(value: Any) -> str:
    if not isinstance(value, str) or value not in PRESETS:
        raise ValueError(f"must be one of {', '.join(PRESETS)}")
    return value


def _check_bool(value: Any) -> bool:
    if not isinstance(value, bool):
        raise ValueError("must be true or false")
    return value


_CHECKS: dict[str, Callable[[Any], Any]] = {
    "model": _check_model,
    "index_dir": _check_index_dir,
    "excludes": _check_excludes,
    "max_file_size": _check_max_file_size,
    "preset": _check_preset,
    "hover": _check_bool,
    "embeddings": _check_bool,
    "transformer": _check_transformer,
    "transformer_background": _check_bool,
    "question_pool": _check_question_pool,
    "share_engine": _check_bool,
}


def parse_options(raw: Any, base: ServerOptions | None = None) -> tuple[ServerOptions, list[str]]:
    """Options from an editor-supplied object, plus one message per problem found.

    `raw` may be None (nothing configured), a mapping, or anything else (reported, ignored). A
    `{"codeseek": {...}}` wrapper is unwrapped. Values missing from `raw` keep `base` (default:
    the dataclass defaults); bad values fall back to the default, never to a half-parsed value.
    """
    options = base or ServerOptions()
    defaults = ServerOptions()
    if raw is None:
        return options, []
    if not isinstance(raw, Mapping):
        return options, [f"codeseek options must be an object, got {type(raw).__name__}; using defaults"]
    if set(raw) == {"codeseek"} and isinstance(raw["codeseek"], Mapping):
        raw = raw["codeseek"]
    problems: list[str] = []
    changes: dict[str, Any] = {}
    for key, value in raw.items():
        name = _snake(str(key))
        check = _CHECKS.get(name)
        if check is None:
            problems.append(f"unknown codeseek option {key!r} ignored")
            continue
        try:
            changes[name] = check(value)
        except ValueError as exc:
            default = getattr(defaults, name)
            problems.append(f"codeseek option {key!r} {exc}; got {value!r}, using the default {default!r}")
            changes[name] = default
    return replace(options, **changes), problems


def to_json(options: ServerOptions) -> dict[str, Any]:
    """The options as a JSON-ready object (camelCase keys, as editors write them)."""
    out: dict[str, Any] = {}
    for f in fields(options):
        head, *rest = f.name.split("_")
        value = getattr(options, f.name)
        out[head + "".join(p.title() for p in rest)] = list(value) if isinstance(value, tuple) else value
    return out
