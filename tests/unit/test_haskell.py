"""Haskell: definitions, equations, module headers, calls, imports and chunks from the real grammar."""

from __future__ import annotations

import textwrap

from indexing.chunker import ChunkOptions
from indexing.doc_text import first_doc_line
from indexing.parse import parse_file
from indexing.records import ParseResult

SAMPLE = '''
{-# LANGUAGE OverloadedStrings #-}
{- |
   Module      : Text.Sample.Reader
   Copyright   : Copyright (C) 2024 Someone
   License     : GNU GPL, version 2 or above

Conversion from the sample format to a document.
-}
module Text.Sample.Reader (readSample, Token(..)) where
import qualified Data.Map as M
import Data.List (sortBy, nub)

-- | Read a sample document.
readSample :: Int -> Int
readSample 0 = 1
readSample n = step n `div` M.size table
  where step x = x
{-# INLINE readSample #-}

data Token = Word Int | Space deriving Show
newtype Name = Name Int
type Table = Int

class Monad m => SampleMonad m where
  lookupEnv :: String -> m (Maybe String)
  getFoo :: m Int
  getFoo = return 1

instance Show Name where
  show (Name n) = showInt n

table = readSample 3
'''


def parse(code: str = SAMPLE, options: ChunkOptions | None = None) -> ParseResult:
    source = textwrap.dedent(code).lstrip("\n").encode()
    return parse_file("src/Text/Sample/Reader.hs", source, "haskell", ("source",), options)


def test_definitions_kinds_and_qualified_names() -> None:
    result = parse()
    assert result.status == "ok"
    found = {d.qualified_name: (d.kind, d.parent) for d in result.definitions}
    assert found == {
        "Text.Sample.Reader": ("module", None),
        "readSample": ("function", None),
        "Token": ("type", None),
        "Name": ("type", None),
        "Table": ("type", None),
        "SampleMonad": ("class", None),
        "SampleMonad.lookupEnv": ("method", "SampleMonad"),
        "SampleMonad.getFoo": ("method", "SampleMonad"),
        "Show.show": ("method", "Show"),  # an instance qualifies its methods, defines nothing itself
        "table": ("function", None),
    }


def test_equations_are_one_definition_spanning_all_of_them() -> None:
    result = parse()
    read = next(d for d in result.definitions if d.name == "readSample")
    assert (read.start_line, read.end_line) == (15, 17)  # the second equation and its `where` too
    assert read.signature == "readSample 0 = 1"
    get_foo = next(d for d in result.definitions if d.name == "getFoo")
    assert get_foo.end_line == get_foo.start_line + 1  # a class method's signature and its default


def test_module_doc_skips_the_header_fields_and_haddock_markers() -> None:
    module = next(d for d in parse().definitions if d.kind == "module")
    assert module.doc == "Conversion from the sample format to a document."
    assert first_doc_line("-- | Read a sample.") == "Read a sample."
    assert first_doc_line("{-| Read a sample. -}") == "Read a sample."


def test_calls_and_imports() -> None:
    result = parse()
    calls = {(c.receiver, c.callee, c.caller) for c in result.calls}
    assert ("M", "size", "readSample") in calls  # a qualified call: the module alias is the receiver
    assert (None, "div", "readSample") in calls  # a backquoted infix call
    assert (None, "readSample", "table") in calls
    assert (None, "showInt", "Show.show") in calls
    imports = {(i.module, i.name, i.alias) for i in result.imports}
    assert imports == {("Data.Map", None, "M"), ("Data.List", "sortBy", None), ("Data.List", "nub", None)}


def test_chunks_keep_a_signature_with_its_equations_and_the_header_apart() -> None:
    # A small budget and minimum: each declaration is its own chunk.
    result = parse(options=ChunkOptions(max_chars=300, min_chars=20))
    by_symbol = {c.symbol: c for c in result.chunks if c.symbol}
    header = by_symbol["Text.Sample.Reader"]
    assert header.start_line <= 2 and header.end_line == 9  # the module doc comment leads the header
    read = by_symbol["readSample"]
    assert (read.start_line, read.end_line) == (14, 17)  # the signature and both equations
    assert not any(c.start_line <= 10 <= c.end_line for c in result.chunks if c.symbol == "readSample")
