"""Intent rules: ordered, first match wins; symbol/exact extraction; totality on bad input."""

from __future__ import annotations

import pytest

from retrievers.base import QueryError
from retrievers.ranking.intent import INTENTS, Intent, classify, override

# (query, intent, symbol) for the rules that name a symbol.
NAMED = [
    # 1. definition keywords -> find_definition 0.95
    ("def parse_config", "find_definition", "parse_config"),
    ("class HttpClient", "find_definition", "HttpClient"),
    ("func NewServer", "find_definition", "NewServer"),
    ("fn spawn_blocking", "find_definition", "spawn_blocking"),
    ("function renderTemplate", "find_definition", "renderTemplate"),
    ("struct Config", "find_definition", "Config"),
    ("interface Logger", "find_definition", "Logger"),
    ("where is load_plugins defined", "find_definition", "load_plugins"),
    ("where's TokenBucket defined?", "find_definition", "TokenBucket"),
    ("where is the class RateLimiter implemented", "find_definition", "RateLimiter"),
    ("definition of Parser.parse_expr", "find_definition", "Parser.parse_expr"),
    ("declaration of `read_frame`", "find_definition", "read_frame"),
    ("go to `Router.handle`", "find_definition", "Router.handle"),
    ("jump to definition of build_index", "find_definition", "build_index"),
    ("the Scheduler class", "find_definition", "Scheduler"),
    ("show me the retry_request function", "find_definition", "retry_request"),
    ("where is ConnectionPool", "find_definition", "ConnectionPool"),
    ("def `__init__`", "find_definition", "__init__"),
    ("fn Vec::with_capacity", "find_definition", "Vec.with_capacity"),
    # 2. references -> find_references 0.90
    ("who calls flush_buffer", "find_references", "flush_buffer"),
    ("who uses `AuthToken`?", "find_references", "AuthToken"),
    ("usages of make_response", "find_references", "make_response"),
    ("uses of DEFAULT_RETRIES", "find_references", "DEFAULT_RETRIES"),
    ("references to Cache.invalidate", "find_references", "Cache.invalidate"),
    ("callers of compute_digest", "find_references", "compute_digest"),
    ("where is open_session used", "find_references", "open_session"),
    ("where is `dispatch` called", "find_references", "dispatch"),
    ("find all references to EventBus", "find_references", "EventBus"),
    ("call sites of Foo::bar()", "find_references", "Foo.bar"),
    ("what calls serialize_row", "find_references", "serialize_row"),
    ("who calls urlparse", "find_references", "urlparse"),
    # 3. impact -> impact_analysis 0.90
    ("impact of changing normalize_path", "impact_analysis", "normalize_path"),
    ("blast radius of Session.close", "impact_analysis", "Session.close"),
    ("what depends on parse_headers", "impact_analysis", "parse_headers"),
    ("what breaks if I rename `load_config`", "impact_analysis", "load_config"),
    ("what would break if I change TokenStore.get", "impact_analysis", "TokenStore.get"),
    ("who depends on encodeFrame", "impact_analysis", "encodeFrame"),
    # 5. bare identifiers -> find_definition 0.60-0.80
    ("RequestHandler", "find_definition", "RequestHandler"),
    ("parse_args", "find_definition", "parse_args"),
    ("getUserById", "find_definition", "getUserById"),
    ("http.server.HTTPServer", "find_definition", "http.server.HTTPServer"),
    ("Session.send()", "find_definition", "Session.send"),
    ("MAX_BODY_SIZE", "find_definition", "MAX_BODY_SIZE"),
    ("`build_graph`", "find_definition", "build_graph"),
    ("XMLParser", "find_definition", "XMLParser"),
    ("Session", "find_definition", "Session"),
    ("who calls Session", "find_references", "Session"),
    ("usages of Router in the app", "find_references", "Router"),
]


@pytest.mark.parametrize(("query", "intent", "symbol"), NAMED)
def test_named_symbol_rules(query: str, intent: str, symbol: str) -> None:
    got = classify(query)
    assert (got.name, got.symbol) == (intent, symbol)
    assert got.source == "classifier"


CONFIDENCE = [
    ("def parse_config", 0.95),
    ("who calls flush_buffer", 0.90),
    ("blast radius of Session.close", 0.90),
    ('"connection reset by peer"', 0.90),
    ("RequestHandler", 0.80),
    ("http.server.HTTPServer", 0.80),
    ("parse_args", 0.75),
    ("MAX_BODY_SIZE", 0.70),
    ("Session", 0.60),  # a single Capitalized word: most likely a class
    ("how is the cache invalidated", 0.75),
    ("similar to parse_args", 0.70),
    ("retry backoff jitter", 0.40),
    # a phrase without a name to resolve cannot be answered by the graph alone
    ("who calls the function that writes the lock file", 0.70),
    ("impact of changing the default timeout", 0.70),
]


@pytest.mark.parametrize(("query", "confidence"), CONFIDENCE)
def test_confidence_per_rule(query: str, confidence: float) -> None:
    assert classify(query).confidence == pytest.approx(confidence)


EXACT = [
    ('"connection reset by peer"', "connection reset by peer"),
    ("'max retries exceeded'", "max retries exceeded"),
    ("`verify=False`", "verify=False"),
    ('where do we log "cache miss for key"', "cache miss for key"),
    ("ValueError: invalid literal for int() with base 10", "invalid literal for int() with base 10"),
    ("KeyError: missing required field", "missing required field"),
    ("error: could not lock the index", "could not lock the index"),
    ("Unknown option %s for %r", "Unknown option %s for %r"),
    ("failed to open {path}: {err}", "failed to open {path}: {err}"),
    ("retrying in {} seconds", "retrying in {} seconds"),
    ("logger.warning('Pool is full, discarding connection: %s')", "Pool is full, discarding connection: %s"),
]


@pytest.mark.parametrize(("query", "exact"), EXACT)
def test_exact_strings_and_error_lines(query: str, exact: str) -> None:
    got = classify(query)
    assert got.name == "exact_match"
    assert got.exact == exact
    assert 0.85 <= got.confidence <= 0.90


def test_traceback_takes_the_error_message_and_the_innermost_function() -> None:
    tb = (
        "Traceback (most recent call last):\n"
        '  File "app/main.py", line 12, in <module>\n'
        "    run()\n"
        '  File "app/worker.py", line 40, in process_job\n'
        "    payload = decode(raw)\n"
        "json.decoder.JSONDecodeError: Expecting value: line 1 column 1 (char 0)\n"
    )
    got = classify(tb)
    assert got.name == "exact_match"
    assert got.symbol == "process_job"
    assert got.exact == "Expecting value: line 1 column 1 (char 0)"
    assert got.confidence == pytest.approx(0.90)


def test_traceback_frame_without_message_uses_the_source_line() -> None:
    got = classify('File "lib/io.py", line 7, in read_block\n    data = fh.read(size)')
    assert (got.name, got.symbol, got.exact) == ("exact_match", "read_block", "data = fh.read(size)")


UNDERSTAND = [
    "how does the scheduler pick the next job",
    "why do we retry on 503",
    "explain the token refresh flow",
    "where do we parse the config file",
    "what does the middleware chain do",
    "what happens when a worker dies",
    "where is the proxy configured",
    "which function decides the log level",
    "walk me through request signing",
]


@pytest.mark.parametrize("query", UNDERSTAND)
def test_natural_language_questions_are_understand_code(query: str) -> None:
    got = classify(query)
    assert (got.name, got.confidence) == ("understand_code", 0.75)


def test_embedded_identifiers_become_the_symbol() -> None:
    assert classify("how does `resolve_redirects` handle 301").symbol == "resolve_redirects"
    assert classify("what does HTTPAdapter do with retries").symbol == "HTTPAdapter"
    assert classify("why is cache_key computed twice").symbol == "cache_key"
    assert classify("how are cookies persisted").symbol is None
    assert classify("how does Session keep cookies").symbol == "Session"
    assert classify("Where do we keep cookies").symbol is None  # a sentence's first word
    assert classify("why does Router skip parse_body").symbol == "parse_body"  # code shape beats Title


def test_a_first_word_followed_by_a_kind_names_a_type() -> None:
    assert classify("Content protocol for encoding and decoding bodies").symbol == "Content"
    assert classify("Job interface and coroutine lifecycle management").symbol == "Job"
    assert classify("MIME type detection from file extensions").symbol is None  # "type" is a word
    assert classify("Where do we keep cookies").symbol is None


def test_a_how_question_about_go_to_definition_is_a_question() -> None:
    assert classify("how zls provides goto definition for symbols").name == "understand_code"
    got = classify("how is the definition of parse_args found")  # code-shaped: still the lookup
    assert (got.name, got.symbol) == ("find_definition", "parse_args")
    assert classify("go to definition of Session").symbol == "Session"


def test_lua_method_calls_are_qualified_names() -> None:
    # Lua calls a method as Picker:find; it is defined (and indexed) as Picker.find
    assert classify("how Picker:find opens a floating window").symbol == "Picker.find"
    assert classify("Sorter:score").symbol == "Sorter.score"
    assert classify("how Foo::bar works").symbol == "Foo.bar"  # `::` stays one separator
    assert classify("see the note: details").symbol is None  # a colon then a space joins nothing
    assert classify("how the proxy splits host:port pairs").symbol is None  # not a Lua method call


SIMILAR = ["similar to parse_args", "code like this loop", "find code similar to the tokenizer",
           "functions that look like this one", "duplicates of merge_dicts"]


@pytest.mark.parametrize("query", SIMILAR)
def test_similar(query: str) -> None:
    assert classify(query).name == "find_similar"


PLAIN = ["proxy", "retry backoff jitter", "sessions.py", "connection pooling", "auth"]


@pytest.mark.parametrize("query", PLAIN)
def test_plain_words_are_concepts_not_identifiers(query: str) -> None:
    got = classify(query)
    assert (got.name, got.confidence, got.symbol) == ("understand_code", 0.40, None)


def test_rule_order_first_match_wins() -> None:
    # a definition keyword beats the quoted string inside it
    assert classify("def `parse`").name == "find_definition"
    # references beat impact words and quotes
    assert classify('who calls "close"').name == "find_references"
    # a natural-language sentence with a function keyword in it is not a definition lookup
    assert classify("how does the function handle redirects").name == "understand_code"
    # apostrophes are not quotes
    assert classify("why doesn't the client's pool shrink").name == "understand_code"


@pytest.mark.parametrize(
    "text",
    ["", "   ", "\x00\x01\x02", "x" * 10_000, "how " * 5_000, "[a-z]+(foo|bar)*", "((((((", "\"'`",
     "`" * 300, "%" * 500, "def", "who calls", "\u200b\ufeff", "🙂 emoji query", "a\r\nb\tc"],
)
def test_classify_is_total(text: str) -> None:
    got = classify(text)
    assert got.name in INTENTS
    assert 0.0 <= got.confidence <= 1.0


def test_empty_query_has_zero_confidence() -> None:
    assert classify("  \n ") == Intent("understand_code", 0.0)


def test_override_keeps_extraction_and_marks_the_request_as_source() -> None:
    got = override("find_references", "parse_header_links")
    assert (got.name, got.symbol, got.confidence, got.source) == (
        "find_references", "parse_header_links", 1.0, "request")
    assert override("exact_match", "retry budget exhausted").exact == "retry budget exhausted"
    assert override("impact_analysis", "`proxy`").symbol == "proxy"
    assert override("understand_code", "def build").symbol == "build"


def test_override_rejects_unknown_intents() -> None:
    with pytest.raises(QueryError, match="unknown intent 'find_everything'"):
        override("find_everything", "x")
    with pytest.raises(QueryError):
        override("", "x")
