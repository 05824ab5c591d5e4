"""Local type evidence for call receivers, read from the same tree the call sites come from.

The language queries capture `@local` (an assignment, a variable declaration or an annotated
parameter) with `@local.name` and `@local.value` or `@local.type`, and `@local.field` (a typed
class or struct field). Each becomes one piece of evidence in the scope of the innermost enclosing
definition (`self.x = ...` / `this.x = ...` and fields go to the enclosing class instead). A call
`x.m()` then carries what the nearest scope says `x` is, as a short string the call graph resolves
(`CallSite.receiver_type`):

- `T:<type>`: a type as written (`T:Session`, `T:pkg.Foo`) from `new Foo()`, `Foo{}`, an annotation;
- `C:<callee>`: the value a call returns (`C:Session`, `C:make_app`, `C:Foo::new`): a class call is
  an instance, a function's declared return type is the type;
- `B:<kind>`: a builtin value (a Python `{}`, `[]`, a string, a number), so the receiver is not
  project code (a JS object or function literal says nothing: methods get assigned to it later);
- `S`: an alias of `self` / `this` (`var self = this`);
- `D`: a Python name subscripted with a string key (`proxies["http"]`): a mapping, so a call of a
  `dict` method on it (`proxies.get()`) is the builtin's, unless other evidence says more;
- `L` (on a bare call `f()`): `f` is a parameter or a local variable, not a definition.

Two different pieces of evidence for one name in one scope cancel out (no evidence); `None`/`null`
assignments say nothing. Nothing here resolves names: that is the call graph's job.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Protocol, TypeVar

from tree_sitter import Node

CONFLICT = "?"
PARAMETER = "P"  # a parameter with no annotation: a local name, type unknown
DICT_USED = "D"  # subscripted with a string key (`headers["Host"]`): a mapping, unless more is known
ALIAS = "V:"  # while filing: the value is another local name; resolved against the scope
LOCAL = "L"  # on a bare call: the callee is a parameter or local variable, not a definition
_SELF_ROOTS = ("self.", "this.", "cls.")
_LITERALS = {
    "dictionary": "dict", "dictionary_comprehension": "dict", "list": "list", "list_comprehension": "list",
    "set": "set", "set_comprehension": "set", "tuple": "tuple", "string": "str", "concatenated_string": "str",
    "integer": "number", "float": "number", "array": "array", "template_string": "str",
    "number": "number", "regex": "regexp", "lambda": "function",
    # JS objects and functions get methods assigned later (`mixin(app, proto)`): no evidence
    "object": "", "arrow_function": "", "function_expression": "", "function": "",
    "interpreted_string_literal": "str",
    "raw_string_literal": "str", "string_literal": "str", "array_expression": "array",
    "integer_literal": "number", "float_literal": "number", "generator_expression": "generator",
    "f_string": "str", "binary_operator": "", "comparison_operator": "bool", "true": "bool",
    "false": "bool", "not_operator": "bool", "closure_expression": "function", "func_literal": "function",
}
_NOTHING = frozenset({"none", "null", "undefined", "nil"})
_SELF_VALUES = frozenset({"this", "self"})
_CALLEE = re.compile(r"^[A-Za-z_$][\w$]*(?:(?:\.|::)[A-Za-z_$][\w$]*)*$")
_OPTIONAL = re.compile(r"^(?:typing\.)?Optional\[(.*)\]$")
_BUILTIN_TYPES = {
    "dict": "dict", "Dict": "dict", "Mapping": "dict", "MutableMapping": "dict", "list": "list",
    "List": "list", "Sequence": "list", "str": "str", "bytes": "str", "set": "set", "Set": "set",
    "tuple": "tuple", "Tuple": "tuple", "int": "number", "float": "number", "bool": "bool",
    "string": "str", "number": "number", "boolean": "bool", "Record": "object", "Array": "array",
    "Map": "map", "Promise": "promise", "any": "", "unknown": "", "object": "object", "Any": "",
}


class DefLike(Protocol):
    """What the evidence sweep needs from a definition (`indexing.symbols.DefNode`)."""

    node: Node
    kind: str
    qualified: str
    scope_name: str | None
    parent: str | None
    signature: str


def _text(source: bytes, node: Node) -> str:
    return source[node.start_byte:node.end_byte].decode("utf-8", errors="replace")


def type_evidence(text: str) -> str | None:
    """`T:<name>` for a written type, `B:<kind>` for a builtin one, None when it says nothing."""
    text = " ".join(text.strip().lstrip(":").split()).strip("\"'")
    while text.startswith(("&", "*", "mut ", "'")):
        text = re.sub(r"^(?:&|\*|mut |'\w+ )", "", text).strip()
    m = _OPTIONAL.match(text)
    if m:
        text = m.group(1).strip()
    if "|" in text:
        parts = [p.strip() for p in text.split("|") if p.strip() not in ("None", "null", "undefined")]
        if len(parts) != 1:
            return None
        text = parts[0]
    if text.endswith("[]") or text.startswith(("[", "map[", "{", "(", "chan ")):
        return "B:array" if text.endswith("[]") or text.startswith("[") else "B:object"
    base = re.split(r"[\[<(]", text, maxsplit=1)[0].strip()
    if base == "Self":
        return "S"
    if not base or not _CALLEE.match(base):
        return None
    if base in _BUILTIN_TYPES:
        kind = _BUILTIN_TYPES[base]
        return f"B:{kind}" if kind else None
    return f"T:{base.replace('::', '.')}"


def value_evidence(node: Node, source: bytes, depth: int = 0) -> str | None:
    """Evidence from an assigned value (see the module docstring), None when it says nothing."""
    t = node.type
    if depth > 4:
        return None
    if t in ("parenthesized_expression", "await", "await_expression", "non_null_expression"):
        inner = node.named_children[-1] if node.named_child_count else None
        return value_evidence(inner, source, depth + 1) if inner is not None else None
    if t in ("boolean_operator", "binary_expression"):  # `x = x or {}`, `a = b || new Foo()`
        op = node.child_by_field_name("operator")
        if op is None or _text(source, op) not in ("or", "||", "??"):
            return None
        right = node.child_by_field_name("right")
        return value_evidence(right, source, depth + 1) if right is not None else None
    if t in _LITERALS:
        kind = _LITERALS[t]
        return f"B:{kind}" if kind else None
    if t in ("new_expression", "object_creation_expression"):
        ctor = node.child_by_field_name("constructor") or node.child_by_field_name("type")
        return type_evidence(_text(source, ctor)) if ctor is not None else None
    if t in ("composite_literal", "struct_expression"):
        typ = node.child_by_field_name("type") or node.child_by_field_name("name")
        return type_evidence(_text(source, typ)) if typ is not None else None
    if t == "unary_expression" and node.named_child_count:  # Go `&Foo{}`
        return value_evidence(node.named_children[-1], source, depth + 1)
    if t in ("as_expression", "type_assertion_expression"):
        return type_evidence(_text(source, node.named_children[-1])) if node.named_child_count > 1 else None
    if t in ("call", "call_expression", "method_invocation"):
        fn = node.child_by_field_name("function")
        if t == "method_invocation":
            obj, name = node.child_by_field_name("object"), node.child_by_field_name("name")
            text = (_text(source, obj) + "." if obj is not None else "") + (
                _text(source, name) if name is not None else "")
        elif fn is None:
            return None
        else:
            text = _text(source, fn)
        if text == "require" or len(text) > 100 or not _CALLEE.match(text):
            return None
        return f"C:{text}"
    if t == "macro_invocation":
        return "B:macro"
    text = _text(source, node).strip()
    if text.lower() in _NOTHING:
        return None
    if text in _SELF_VALUES:
        return "S"
    if t == "identifier":  # `self.command = command`: what the scope knows of `command`
        return f"{ALIAS}{text}"
    return None


class Evidence:
    """Evidence per scope: local names per definition index, fields per owner name."""

    def __init__(self) -> None:
        self.scopes: dict[int, dict[str, str]] = {}
        self.fields: dict[str, dict[str, str]] = {}

    @staticmethod
    def _put(table: dict[str, str], name: str, ev: str) -> None:
        old = table.get(name)
        if old is None or old == PARAMETER or (old == DICT_USED and ev != PARAMETER):
            table[name] = ev
        elif ev not in (PARAMETER, DICT_USED) and old != ev:
            table[name] = CONFLICT

    def lookup(self, name: str, chain: Sequence[int]) -> str | None:
        """What the innermost scope of `chain` knowing `name` says (None: nothing, or a conflict)."""
        for scope in reversed(chain):
            ev = self.scopes.get(scope, {}).get(name)
            if ev is not None:
                return None if ev in (CONFLICT, PARAMETER) else ev
        return None

    def is_local(self, name: str, chain: Sequence[int]) -> bool:
        """Whether `name` is a parameter or assigned variable of a definition in `chain`."""
        return any(name in self.scopes.get(scope, ()) for scope in chain)

    def add_local(self, scope: int, name: str, ev: str) -> None:
        self._put(self.scopes.setdefault(scope, {}), name, ev)

    def add_field(self, owner: str, name: str, ev: str) -> None:
        self._put(self.fields.setdefault(owner, {}), name, ev)

    def receiver(self, receiver: str, chain: Sequence[int], owner: str | None,
                 class_body: bool) -> str | None:
        """Evidence for a receiver text seen inside the definitions `chain` (outermost first)."""
        if receiver.startswith(_SELF_ROOTS):
            field = receiver.split(".", 1)[1]
            ev = self.fields.get(owner or "", {}).get(field) if owner else None
            return None if ev in (None, CONFLICT) else ev
        if not _CALLEE.match(receiver) or "." in receiver or "::" in receiver:
            return None
        for scope in reversed(chain):
            ev = self.scopes.get(scope, {}).get(receiver)
            if ev is not None:
                return None if ev in (CONFLICT, PARAMETER) else ev
        ev = self.scopes.get(-1, {}).get(receiver)  # module level
        if ev is None and class_body and owner:
            ev = self.fields.get(owner, {}).get(receiver)
        return None if ev in (None, CONFLICT) else ev


def owner_of(chain: Sequence[DefLike], class_kinds: frozenset[str]) -> str | None:
    """Whose fields `self.x` / `this.x` are in the innermost definition of `chain`."""
    for d in reversed(chain):
        if d.kind in class_kinds:
            return d.qualified
        if d.scope_name:  # `Foo.prototype.m = function`, Go `func (s *Foo) m()`
            return d.scope_name
        if d.kind == "method" and d.parent:  # a method in a Rust `impl Foo` block
            return d.parent
    if chain and chain[-1].kind == "function":  # an ES5 constructor function
        return chain[-1].qualified
    return None


def add_local(out: list[tuple[Node, str, str, bool]], source: bytes, caps: dict[str, list[Node]]) -> None:
    """One `@local` / `@local.field` match as (node, name, evidence, is a field), if it says anything."""
    field = "local.field" in caps
    node = caps["local.field"][0] if field else caps.get("local", caps.get("local.dictuse", [None]))[0]
    if node is None:
        return
    if "local.dictuse" in caps:
        ev: str | None = DICT_USED
    elif "local.value" in caps:
        ev = value_evidence(caps["local.value"][0], source)
    elif "local.type" in caps:
        ev = type_evidence(_text(source, caps["local.type"][0]))
    else:
        ev = PARAMETER
    if ev is not None:
        out.append((node, _text(source, caps["local.name"][0]), ev, field))


D = TypeVar("D", bound=DefLike)


def sweep_to(pos: int, defs: Sequence[D], stack: list[D], di: int) -> int:
    """Advance a sweep over `defs` (sorted by start) to byte `pos`: `stack` then holds the definitions
    around `pos`, outermost first; returns the index of the next definition not yet reached."""
    while di < len(defs) and defs[di].node.start_byte <= pos:
        while stack and stack[-1].node.end_byte <= defs[di].node.start_byte:
            stack.pop()
        stack.append(defs[di])
        di += 1
    while stack and stack[-1].node.end_byte <= pos:
        stack.pop()
    return di


def file_evidence(raw: list[tuple[Node, str, str, bool]], defs: Sequence[DefLike],
                  class_kinds: frozenset[str]) -> Evidence:
    """File the evidence under the innermost definition around it (fields under their owner)."""
    evidence = Evidence()
    raw.sort(key=lambda r: r[0].start_byte)
    stack: list[DefLike] = []
    index = {id(d): k for k, d in enumerate(defs)}
    di = 0
    for node, name, ev, is_field in raw:
        di = sweep_to(node.start_byte, defs, stack, di)
        chain = [index[id(d)] for d in stack]
        if ev.startswith(ALIAS):  # `x = y`: what is known of y here
            found = evidence.lookup(ev[len(ALIAS):], chain)
            if found is None:
                continue
            ev = found
        if stack and stack[-1].kind in class_kinds:  # `command: Command` in a class body
            is_field = True
        if is_field or "." in name:  # a typed field, or `self.x = ...` / `this.x = ...`
            root, _, attr = name.rpartition(".")
            owner = owner_of(stack, class_kinds)
            if owner and (is_field or root in ("self", "this")):
                evidence.add_field(owner, attr if root else name, ev)
            continue
        evidence.add_local(chain[-1] if chain else -1, name, ev)
    return evidence


CLASS_BODY_LANGS = frozenset({"java", "csharp", "kotlin", "scala", "cpp", "swift"})
_GO_RECEIVER = re.compile(r"^func\s*\(\s*([A-Za-z_]\w*)\s")


def receiver_type(receiver: str, stack: Sequence[DefLike], evidence: Evidence, index: dict[int, int],
                  class_body: bool, class_kinds: frozenset[str]) -> str | None:
    """Evidence for the receiver text of a call inside the definitions `stack` (outermost first)."""
    if stack and stack[-1].scope_name and _is_go_method(stack[-1]):
        m = _GO_RECEIVER.match(stack[-1].signature)
        if m and receiver.startswith(m.group(1) + "."):
            receiver = "self." + receiver[len(m.group(1)) + 1:]
    return evidence.receiver(receiver, [index[id(d)] for d in stack], owner_of(stack, class_kinds),
                             class_body)


def _is_go_method(d: DefLike) -> bool:
    return d.node.type == "method_declaration" and d.signature.startswith("func")
