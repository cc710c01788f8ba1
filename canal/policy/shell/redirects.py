"""Redirect nodes to Redirect values (operator, descriptor, target, mode)."""

from __future__ import annotations

from tree_sitter import Node

from canal.policy.shell.model import Redirect
from canal.policy.shell.words import node_text, resolve

_READ = {"<", "<&"}
_APPEND = {">>", "&>>"}
_DUP = {">&", "<&", ">&-", "<&-"}


def _mode(op: str, target: str) -> str:
    if op in _DUP and (target.isdigit() or target == "-"):
        return "dup"
    if op in _READ:
        return "read"
    if op in _APPEND:
        return "append"
    return "write"  # >, >|, &>, <>, >& file


def file_redirect(node: Node) -> Redirect:
    fd = ""
    op = ""
    target_node: Node | None = None
    for child in node.children:
        if child.type == "file_descriptor":
            fd = node_text(child)
        elif not child.is_named and not op:
            op = child.type
        elif child.is_named and target_node is None:
            target_node = child
    word = resolve(target_node) if target_node is not None else None
    target = word.text if word is not None else ""
    return Redirect(op=op, fd=fd, target=target, mode=_mode(op, target),
                    literal=word.literal if word is not None else False)


def heredoc(node: Node) -> tuple[Redirect, list[Node]]:
    """The heredoc as a stdin redirect, plus redirects nested in it (``cat <<EOF > f``)."""
    start = ""
    body = ""
    literal = True
    nested: list[Node] = []
    for child in node.children:
        if child.type == "heredoc_start":
            start = node_text(child)
        elif child.type == "heredoc_body":
            body = node_text(child)
            literal = not any(c.type not in ("heredoc_content",) for c in child.named_children)
        elif child.type in ("file_redirect", "herestring_redirect"):
            nested.append(child)
    quoted = any(q in start for q in "'\"\\")
    return Redirect(op="<<", fd="", target=body, mode="heredoc", literal=quoted or literal), nested


def herestring(node: Node) -> Redirect:
    value = node.named_children[-1] if node.named_children else None
    word = resolve(value) if value is not None else None
    fd = next((node_text(c) for c in node.children if c.type == "file_descriptor"), "")
    return Redirect(op="<<<", fd=fd, target=word.text if word else "", mode="herestring",
                    literal=word.literal if word else False)
