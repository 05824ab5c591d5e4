"""Query intent: which kind of question a query asks, how sure we are, and what it names.

`classify` applies ordered rules, first match wins (see docs/design.md "Intent"):

1. definition keywords ("def X", "class X", "where is X defined", "go to X")  -> find_definition 0.95
2. reference phrases ("who calls X", "usages of X", "where is X used")         -> find_references 0.90
3. impact phrases ("blast radius", "what breaks if I change X")               -> impact_analysis 0.90
4. a quoted string or an error / traceback / format-string line               -> exact_match 0.85-0.90
5. one bare CamelCase, snake_case, dotted or Capitalized identifier          -> find_definition 0.60-0.80
6. "how", "why", "explain", "where do we", "what does"                       -> understand_code 0.75
7. "similar to", "like this", "code like"                                     -> find_similar 0.70
8. anything else                                                              -> understand_code 0.40

Besides the name and confidence, an `Intent` carries the identifier the query names (`symbol`,
backticks removed, `::`/`#` normalized to `.`) and the exact string to match (`exact`). `classify` is
total: empty, huge or control-character input gives an answer, never an exception.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import Literal

from retrievers.base import QueryError

INTENTS = (
    "find_definition",
    "find_references",
    "impact_analysis",
    "exact_match",
    "understand_code",
    "find_similar",
)

# Only this much of a query is analysed (a pasted traceback can be long; the rules need its start/end).
MAX_CLASSIFY_CHARS = 4096


@dataclass(frozen=True)
class Intent:
    """What a query asks for, with the classifier's confidence and the names it extracted."""

    name: str
    confidence: float
    symbol: str | None = None  # identifier the query names ("Session.request"), if any
    exact: str | None = None  # exact string to match (quotes removed), if any
    source: Literal["classifier", "request"] = "classifier"


# ---------------------------------------------------------------------------------------------------
# Identifier shapes

_IDENT = r"[A-Za-z_$][\w$]*"
# A possibly qualified name: a.b.C, Foo::bar, Foo#bar, Foo->bar, Lua's Foo:bar (a method), with an
# optional trailing "()".
_QUALIFIED = rf"{_IDENT}(?:(?:\.|::|#|->|:){_IDENT})*(?:\(\))?"
_TOKEN_RE = re.compile(rf"`[^`\n]{{1,200}}`|{_QUALIFIED}")
_IDENT_ONLY_RE = re.compile(rf"^{_QUALIFIED}$")
_CAMEL_RE = re.compile(r"^_*[A-Z][a-z0-9]+[A-Z]|^_*[a-z][a-z0-9]*[A-Z]|^_*[A-Z]{2,}[a-z]")
_FILE_EXT_RE = re.compile(
    r"\.(py|pyi|js|jsx|mjs|cjs|ts|tsx|go|rs|java|kt|rb|php|c|h|cc|cpp|hpp|cs|lua|sh|scala|swift|"
    r"md|rst|txt|json|ya?ml|toml|ini|cfg|html|css|lock)$",
    re.IGNORECASE,
)
_TITLE_RE = re.compile(r"^[A-Z][a-z0-9]{2,}$")
_CONTROL_RE = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")

# Words that never name a symbol on their own in a question ("who calls the function ...").
_FILLER = frozenset(
    """a an the this that these those all any every some of to for on in at by with from into is are
    was be been being it its i we you me my our your do does did can could would should will may might
    please show find list get give tell me function functions method methods class classes symbol
    symbol's variable field code def func fn where what which who whom whose when how why change
    changing changed modify modifying modified rename renaming renamed remove removing removed delete
    deleting deleted edit editing refactor refactoring touch touching break breaks affected affect
    affects if i the usages usage uses use used references reference callers caller calls call called
    invoked invocations sites site definition declaration defined declared implemented go jump""".split()
)


def _clean_symbol(token: str) -> str:
    """`Foo::bar()` -> `Foo.bar`; backticks and trailing call parens removed."""
    token = token.strip().strip("`").strip()
    if token.endswith("()"):
        token = token[:-2]
    for sep in ("::", "->", "#", ":"):
        token = token.replace(sep, ".")
    return token.strip(".")


_LUA_COLON_RE = re.compile(r"(?<!:):(?!:)")


def _is_strong_identifier(token: str) -> bool:
    """True for tokens that can only be code: snake_case, CamelCase/camelCase, dotted, SCREAMING_CASE.
    A single colon joins a Lua method call only after a capitalized name (`Picker:find`, not
    `host:port`)."""
    if not _IDENT_ONLY_RE.match(token):
        return False
    if _LUA_COLON_RE.search(token) and not token[:1].isupper():
        return False
    if _FILE_EXT_RE.search(token):
        return False
    if "_" in token.strip("_") or any(sep in token for sep in (".", ":", "#", "->")):
        return True
    if token.endswith("()"):
        return True
    return bool(_CAMEL_RE.match(token))


def _identifier_confidence(token: str) -> float:
    """How surely a lone token is an identifier someone wants the definition of (0 = not one).

    A single Capitalized word ("Session", "Router") is most likely a class: 0.60, the lowest tier.
    """
    if _TITLE_RE.match(token):
        return 0.60
    if not _is_strong_identifier(token):
        return 0.0
    bare = token[:-2] if token.endswith("()") else token
    if re.search(r"\.|:|#|->", bare):
        last = re.split(r"\.|::|:|#|->", bare)[-1]
        return 0.80 if _CAMEL_RE.match(last) or last[:1].isupper() else 0.75
    if _CAMEL_RE.match(bare):
        return 0.80
    if bare.isupper():
        return 0.70  # SCREAMING_CASE constant
    return 0.75  # snake_case or name()


def _tokens(text: str) -> list[str]:
    return _TOKEN_RE.findall(text)


# A capitalized word before one of these names a type even as a sentence's first word ("Content
# protocol for encoding bodies"); "type" itself is left out ("MIME type detection").
_KIND_AFTER_RE = re.compile(
    r"^\s*[A-Z][A-Za-z0-9]*\s+(?:protocol|class|struct|interface|trait|enum|typeclass|actor)\b")


def _embedded_symbol(text: str, sentence: bool = True) -> str | None:
    """The strongest identifier named anywhere in `text`: a backticked one first, then by shape.

    In a sentence (not a fragment after "who calls"), a capitalized first word is not a name, unless a
    kind follows it ("Content protocol ...")."""
    best: tuple[float, str] | None = None
    for position, token in enumerate(_tokens(text)):
        if token.startswith("`"):
            inner = token.strip("`").strip()
            if _IDENT_ONLY_RE.match(inner):
                return _clean_symbol(inner)
            continue
        if sentence and position == 0 and _TITLE_RE.match(token) and not _KIND_AFTER_RE.match(text):
            continue  # a sentence's first word is capitalized anyway
        conf = _identifier_confidence(token)
        if _TITLE_RE.match(token):
            conf = 0.50  # "how does Session ...": weaker than any identifier with code shape
        if conf and (best is None or conf > best[0]):
            best = (conf, token)
    return _clean_symbol(best[1]) if best else None


def _symbol_after(fragment: str) -> str | None:
    """The symbol a phrase like "who calls ..." names: the first meaningful token, or a strong one."""
    strong = _embedded_symbol(fragment, sentence=False)
    if strong:
        return strong
    words = [t for t in _tokens(fragment) if t.lower() not in _FILLER]
    # "who calls urlparse", "usages of merge_setting?": a single remaining word is the name.
    if len(words) == 1 and _IDENT_ONLY_RE.match(words[0]):
        return _clean_symbol(words[0])
    return None


# ---------------------------------------------------------------------------------------------------
# Rules

_DEF_KEYWORD_RE = re.compile(
    rf"^(?:(?:show|find|open|get)\s+(?:me\s+)?(?:the\s+)?)?"
    rf"(?:def|class|func|fn|function|struct|interface|trait|enum)\s+(`?{_QUALIFIED}`?)\s*[?.!:(]*\s*$",
    re.IGNORECASE,
)
_DEF_SUFFIX_RE = re.compile(
    rf"^(?:(?:show|find|open|get)\s+(?:me\s+)?)?(?:the\s+)?(`?{_QUALIFIED}`?)\s+"
    rf"(?:class|function|method|struct|interface|trait|enum|type|definition)\s*[?.!]*\s*$",
    re.IGNORECASE,
)
_DEF_KEYWORD_ANY_RE = re.compile(rf"\b(?:def|class|func|fn|function)\s+(`{_QUALIFIED}`|{_QUALIFIED})")
_DEF_PHRASE_RES = (
    re.compile(
        rf"\bwhere(?:\s+is|\s+are|'s)?\s+(?:the\s+)?(?:class\s+|function\s+|method\s+)?(`?{_QUALIFIED}`?)"
        rf"\s+(?:is\s+|are\s+)?(?:defined|declared|implemented)\b",
        re.IGNORECASE,
    ),
    re.compile(
        r"\b(?:definition|declaration|implementation|source)\s+(?:of|for)\s+(.+)$", re.IGNORECASE
    ),
    re.compile(r"\b(?:go|jump|navigate)\s*to\s+(?:the\s+)?(?:definition\s+of\s+)?(.+)$", re.IGNORECASE),
    re.compile(r"\bgoto\s+(.+)$", re.IGNORECASE),
)
_WHERE_IS_RE = re.compile(rf"^where(?:\s+is|'s)\s+(`?{_QUALIFIED}`?)\s*\??\s*$", re.IGNORECASE)

_REF_RES = (
    re.compile(r"\bwho\s+(?:calls|uses|invokes|references|imports|instantiates)\b(.*)$", re.IGNORECASE),
    re.compile(
        r"\b(?:usages?|uses|references|refs|callers|call\s*sites|calls|invocations|users)\s+"
        r"(?:of|to|for)\b(.*)$",
        re.IGNORECASE,
    ),
    re.compile(
        r"\bwhere\s+(?:is|are|do\s+we|does\s+\w+)\s+(.+?)\s+(?:used|called|referenced|invoked|imported|"
        r"instantiated)\b",
        re.IGNORECASE,
    ),
    re.compile(r"\b(?:find|show|list)\s+(?:all\s+)?(?:references|usages|callers)\b(.*)$", re.IGNORECASE),
    re.compile(r"\bwhat\s+(?:calls|uses|invokes)\b(.*)$", re.IGNORECASE),
)

_IMPACT_RES = (
    re.compile(r"\bblast\s+radius\b(.*)$", re.IGNORECASE),
    re.compile(r"\bimpact(?:ed)?\b(.*)$", re.IGNORECASE),
    re.compile(r"\b(?:what|who)\s+(?:depends|relies)\s+on\b(.*)$", re.IGNORECASE),
    re.compile(r"\bdependents\s+of\b(.*)$", re.IGNORECASE),
    re.compile(
        r"\bwhat\s+(?:would\s+|will\s+|could\s+|might\s+)?(?:breaks?|break|fails?|be\s+affected|is\s+affected)"
        r"\b(.*)$",
        re.IGNORECASE,
    ),
    re.compile(r"\baffected\s+by\b(.*)$", re.IGNORECASE),
)

_QUOTED_RES = (
    re.compile(r'"([^"\n]{1,500})"'),
    re.compile(r"(?:^|(?<=[\s(\[=:,]))'([^'\n]{1,500})'(?=$|[\s)\].,;:?!])"),
    re.compile(r"`([^`\n]{1,500})`"),
)
_TRACEBACK_RE = re.compile(r"^\s*Traceback \(most recent call last\)", re.MULTILINE)
_TB_FILE_RE = re.compile(r'^\s*File "([^"\n]+)", line (\d+)(?:, in ([\w<>.$]+))?', re.MULTILINE)
_ERROR_LINE_RE = re.compile(
    r"^\s*(?:[\w.]+\.)?(\w*(?:Error|Exception|Warning|Exit|Interrupt|Fault|Panic)|panic|fatal|error|FATAL|"
    r"ERROR)\s*:\s*(.+?)\s*$",
    re.MULTILINE,
)
_FORMAT_RE = re.compile(r"%[-+ 0#]*\d*(?:\.\d+)?[sdrfixXegc]|\{\}|\{[A-Za-z_]\w*(?:[!:][^{}]*)?\}|\{\d+\}")

_UNDERSTAND_RE = re.compile(
    r"^(?:how|why|explain|describe|walk\s+me\s+through)\b|\b(?:how\s+(?:do|does|is|are|can|to)|why\s+"
    r"(?:do|does|is|are)|where\s+do\s+we|where\s+does|what\s+does|what\s+happens|when\s+(?:do|does|is)|"
    r"what\s+is\s+the\s+(?:purpose|role|point)|where\s+(?:is|are)\s+(?:the|a|an)\b|"
    r"which\s+(?:function|method|class|code|file|module|part)s?|what\s+(?:handles|decides|controls)|explain)\b",
    re.IGNORECASE,
)
_SIMILAR_RE = re.compile(
    r"\b(?:similar\s+to|like\s+this|code\s+like|looks\s+like|same\s+as|duplicates?\s+of|resembl\w*|"
    r"other\s+places\s+(?:that|where))\b",
    re.IGNORECASE,
)


def _sanitize(text: str) -> str:
    text = text if isinstance(text, str) else str(text)
    text = _CONTROL_RE.sub(" ", text[:MAX_CLASSIFY_CHARS]).replace("\r\n", "\n").replace("\r", "\n")
    return text.strip()


_QUESTION_START_RE = re.compile(r"^\s*(?:how|why|explain|describe)\b", re.IGNORECASE)


def _definition_rule(text: str) -> Intent | None:
    m = _DEF_KEYWORD_RE.match(text) or _DEF_SUFFIX_RE.match(text)
    if m and m.group(1).lower() not in _FILLER:
        return Intent("find_definition", 0.95, symbol=_clean_symbol(m.group(1)))
    m = _WHERE_IS_RE.match(text)  # "where is X?" names a definition only when X is clearly code
    if m and (m.group(1).startswith("`") or _is_strong_identifier(m.group(1))):
        return Intent("find_definition", 0.95, symbol=_clean_symbol(m.group(1)))
    m = _DEF_KEYWORD_ANY_RE.search(text)
    if m and (m.group(1).startswith("`") or _is_strong_identifier(m.group(1))):
        return Intent("find_definition", 0.95, symbol=_clean_symbol(m.group(1)))
    question = _QUESTION_START_RE.match(text)
    for regex in _DEF_PHRASE_RES:
        m = regex.search(text)
        if m:
            symbol = _symbol_after(m.group(1))
            # inside a how/why question a plain word names a topic ("how zls provides goto definition
            # for symbols"), not a definition to go to
            if symbol and (not question or _is_strong_identifier(symbol)):
                return Intent("find_definition", 0.95, symbol=symbol)
    return None


def _phrase_rule(text: str, regexes: tuple[re.Pattern[str], ...], name: str) -> Intent | None:
    for regex in regexes:
        m = regex.search(text)
        if m:
            symbol = _symbol_after(m.group(1)) or _embedded_symbol(text)
            # Without a name to resolve, the graph cannot answer alone: fuse instead of routing direct.
            return Intent(name, 0.90 if symbol else 0.70, symbol=symbol)
    return None


def _exact_rule(text: str) -> Intent | None:
    if _TRACEBACK_RE.search(text) or _TB_FILE_RE.search(text):
        errors = _ERROR_LINE_RE.findall(text)
        frames = _TB_FILE_RE.findall(text)
        symbol = next((f[2] for f in reversed(frames) if f[2] and not f[2].startswith("<")), None)
        exact = errors[-1][1] if errors else None
        if exact is None and frames:
            # The source line printed under the last frame is the most searchable text.
            tail = text[text.rfind(f'line {frames[-1][1]}'):].split("\n")
            exact = tail[1].strip() if len(tail) > 1 and tail[1].strip() else None
        return Intent("exact_match", 0.90, symbol=symbol, exact=exact or text.split("\n")[-1].strip())
    whole = len(text) >= 2 and text[0] == text[-1] and text[0] in "\"'`"
    for regex in _QUOTED_RES:
        m = regex.search(text)
        if not m or not m.group(1).strip():
            continue
        inner = m.group(1)
        if regex.pattern.startswith("`") and _IDENT_ONLY_RE.match(inner.strip()):
            continue  # `name` marks code, not an exact string: the identifier rules handle it
        return Intent("exact_match", 0.90 if whole else 0.85, symbol=_embedded_symbol(inner), exact=inner)
    first_line = text.split("\n", 1)[0]
    m = _ERROR_LINE_RE.match(first_line)
    if m and " " in m.group(2).strip():
        return Intent("exact_match", 0.85, exact=m.group(2).strip())
    if _FORMAT_RE.search(text) and not _UNDERSTAND_RE.search(text):
        return Intent("exact_match", 0.85, exact=text)
    return None


def _identifier_rule(text: str) -> Intent | None:
    token = text.strip().rstrip("?")
    if token.startswith("`") and token.endswith("`") and len(token) > 2:
        inner = token[1:-1].strip()
        if _IDENT_ONLY_RE.match(inner):
            return Intent("find_definition", max(0.75, _identifier_confidence(inner)), _clean_symbol(inner))
    conf = _identifier_confidence(token)
    if conf:
        return Intent("find_definition", conf, symbol=_clean_symbol(token))
    return None


def classify(text: str) -> Intent:
    """The intent of a query: ordered rules, first match wins. Never raises."""
    try:
        clean = _sanitize(text)
    except Exception:  # classify is total by contract
        return Intent("understand_code", 0.0)
    if not clean:
        return Intent("understand_code", 0.0)
    try:
        return _classify(clean)
    except Exception:  # a rule bug must not take the search down
        return Intent("understand_code", 0.40)


def _classify(text: str) -> Intent:
    for rule in (
        _definition_rule,
        lambda t: _phrase_rule(t, _REF_RES, "find_references"),
        lambda t: _phrase_rule(t, _IMPACT_RES, "impact_analysis"),
        _exact_rule,
        _identifier_rule,
    ):
        intent = rule(text)
        if intent is not None:
            return intent
    symbol = _embedded_symbol(text)
    if _UNDERSTAND_RE.search(text):
        return Intent("understand_code", 0.75, symbol=symbol)
    if _SIMILAR_RE.search(text):
        return Intent("find_similar", 0.70, symbol=symbol)
    return Intent("understand_code", 0.40, symbol=symbol)


def override(intent_name: str, text: str) -> Intent:
    """The intent a request names, with symbol/exact extracted from `text`; QueryError if unknown."""
    name = (intent_name or "").strip()
    if name not in INTENTS:
        raise QueryError(f"unknown intent {intent_name!r}; expected one of: {', '.join(INTENTS)}")
    guessed = classify(text)
    clean = _sanitize(text)
    symbol = guessed.symbol
    exact = guessed.exact
    if symbol is None and name in ("find_definition", "find_references", "impact_analysis"):
        bare = clean.strip("`").strip()
        if _IDENT_ONLY_RE.match(bare):
            symbol = _clean_symbol(bare)
    if exact is None and name == "exact_match" and clean:
        exact = clean
    return replace(guessed, name=name, confidence=1.0, symbol=symbol, exact=exact, source="request")
