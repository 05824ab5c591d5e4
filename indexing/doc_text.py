"""Text taken from tree-sitter nodes for definitions: a node's text, one-line collapsed text, and the
first line of a declaration's doc (a Python docstring, else the comments directly above it).

Doc lines lose their comment markers (`///`, `/**`, `--`, `#`, quotes...), C#-style XML doc tags,
and Haddock header fields (`Module : ...`); a gap of more than one blank line (two with `/**`) ends
the comment block above a declaration, and attributes or decorators between them are skipped.
"""

from __future__ import annotations

import re

from tree_sitter import Node

from indexing.languages import LangSpec

__all__ = ["collapse", "docstring", "first_doc_line", "leading_comment", "node_text"]

# XML documentation tags (C# `/// <summary>`, VB/F# alike); other angle-bracket text in a doc line,
# such as "an RSS `<item>`" or "List<T>", is content and stays.
_XML_TAG = re.compile(
    r"</?(?:summary|remarks|param|paramref|typeparam|typeparamref|returns|value|see|seealso|c|code|para"
    r"|example|exception|inheritdoc|include|permission)\b[^<>]*>"
)
# Field lines of a module header comment (Haskell's Haddock `Module : ...`, `License : ...`): metadata,
# not the description that follows them.
_DOC_FIELD = re.compile(r"(?:Module|Copyright|License|Maintainer|Stability|Portability)\s*:\s")


def node_text(source: bytes, node: Node) -> str:
    return source[node.start_byte : node.end_byte].decode("utf-8", errors="replace")


def collapse(text: str, limit: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def docstring(body: Node, source: bytes) -> str:
    first = body.named_children[0] if body.named_child_count else None
    if first is not None and first.type == "expression_statement" and first.named_child_count:
        first = first.named_children[0]  # older grammars wrap the string in an expression statement
    if first is None or first.type != "string":
        return ""
    return first_doc_line(node_text(source, first))


def leading_comment(outer: Node, source: bytes, spec: LangSpec) -> str:
    """First line of the comments directly above the declaration (skipping attributes)."""
    for comment in leading_comment_nodes(outer, source, spec):
        line = first_doc_line(node_text(source, comment))
        if line:
            return line
    return ""


def leading_comment_nodes(outer: Node, source: bytes, spec: LangSpec) -> list[Node]:
    """The comments directly above the declaration, top first: attributes are skipped, a gap of two
    blank lines ends the block (three after a `/**` comment)."""
    comments: list[Node] = []
    current = outer
    sibling = outer.prev_named_sibling
    while sibling is not None:
        if sibling.type in spec.attach_next:
            pass
        elif sibling.type in spec.comments or sibling.type.endswith("comment"):
            gap = current.start_point.row - sibling.end_point.row
            if gap > 2 or (gap == 2 and not source.startswith(b"/**", sibling.start_byte)):
                break
            comments.append(sibling)
        else:
            break
        current = sibling
        sibling = sibling.prev_named_sibling
    return comments[::-1]


def first_doc_line(text: str) -> str:
    for raw in text.splitlines():
        line = raw.strip()
        for marker in ('r"""', "r'''", 'b"""', '"""', "'''", "/**", "/*!", "/*", "*/", "///", "//!", "//",
                       "--[[", "-- |", "-- ^", "{- |", "{-|", "{-", "---", "--", "#", "*", '"', "'"):
            if line.startswith(marker):
                line = line[len(marker):].strip()
        if _DOC_FIELD.match(line):
            continue
        for marker in ('"""', "'''", "*/", "]]", "-}", '"', "'"):
            if line.endswith(marker):
                line = line[: -len(marker)].strip()
        line = _XML_TAG.sub("", line).strip()
        if line:
            return collapse(line, 200)
    return ""
