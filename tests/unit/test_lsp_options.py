"""Server options: defaults, camelCase and snake_case keys, and bad values replaced by defaults."""

from __future__ import annotations

from dataclasses import fields

from lsp_server.lsp.options import ServerOptions, parse_options, to_json


def test_none_gives_defaults_without_problems() -> None:
    options, problems = parse_options(None)
    assert options == ServerOptions()
    assert problems == []


def test_camel_and_snake_keys_and_wrapper() -> None:
    raw = {"codeseek": {"maxFileSize": 2048, "index_dir": "~/idx", "excludes": ["*.min.js"], "hover": False,
                        "preset": "quick", "embeddings": False, "model": " my/model "}}
    options, problems = parse_options(raw)
    assert problems == []
    assert options.max_file_size == 2048
    assert options.index_dir is not None and not options.index_dir.startswith("~")
    assert options.excludes == ("*.min.js",)
    assert (options.hover, options.embeddings) == (False, False)
    assert (options.preset, options.model) == ("quick", "my/model")


def test_bad_values_fall_back_to_defaults_and_are_reported() -> None:
    raw = {"maxFileSize": "big", "preset": "fastest", "hover": "yes", "excludes": [1, 2], "colour": "red",
           "embeddings": False}
    options, problems = parse_options(raw)
    defaults = ServerOptions()
    assert options.max_file_size == defaults.max_file_size
    assert options.preset == defaults.preset
    assert options.hover is True
    assert options.excludes == ()
    assert options.embeddings is False  # the good value is kept
    assert len(problems) == 5
    joined = "\n".join(problems)
    for key in ("maxFileSize", "preset", "hover", "excludes", "colour"):
        assert repr(key) in joined


def test_bool_is_not_a_size_and_zero_is_refused() -> None:
    for bad in (True, 0, -5, 1.5):
        options, problems = parse_options({"maxFileSize": bad})
        assert options.max_file_size == ServerOptions().max_file_size
        assert len(problems) == 1


def test_non_object_is_reported() -> None:
    options, problems = parse_options(["not", "an", "object"])
    assert options == ServerOptions()
    assert problems and "must be an object" in problems[0]


def test_base_is_kept_for_missing_keys() -> None:
    base, _ = parse_options({"hover": False})
    options, problems = parse_options({"preset": "thorough"}, base)
    assert (options.hover, options.preset, problems) == (False, "thorough", [])


def test_to_json_round_trips() -> None:
    options, _ = parse_options({"excludes": ["a/**"], "maxFileSize": 10, "hover": False})
    again, problems = parse_options(to_json(options))
    assert again == options and problems == []
    assert {f.name for f in fields(ServerOptions)} == {
        "model", "index_dir", "excludes", "max_file_size", "preset", "hover", "embeddings", "transformer",
        "transformer_background", "question_pool", "share_engine"}


def test_question_pool_is_checked() -> None:
    assert parse_options({"questionPool": 0})[0].question_pool == 0
    options, problems = parse_options({"questionPool": -3})
    assert options.question_pool == 40
    assert problems == ["codeseek option 'questionPool' must be an integer from 0 (off) to 200; got -3, "
                        "using the default 40"]
    assert parse_options({"questionPool": True})[1] and parse_options({"question_pool": 201})[1]
