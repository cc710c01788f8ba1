"""Quote removal and ANSI-C decoding for tree-sitter-bash word nodes.

A word built from parameter expansions, substitutions or arithmetic is not literal: its text is kept
as written and ``literal`` is False, so rules can treat it as opaque. Unknown node types are opaque too.
"""

from __future__ import annotations

import re

from tree_sitter import Node

from canal.policy.shell.model import Word

_SUBSTITUTIONS = {"command_substitution", "process_substitution"}
_EXPANSIONS = {"simple_expansion", "expansion", "arithmetic_expansion"} | _SUBSTITUTIONS
_ANSI_SIMPLE = {"n": "\n", "t": "\t", "r": "\r", "a": "\a", "b": "\b", "f": "\f", "v": "\v",
                "e": "\x1b", "E": "\x1b", "\\": "\\", "'": "'", '"': '"', "?": "?"}
_ANSI_RE = re.compile(r"\\(x[0-9A-Fa-f]{1,2}|u[0-9A-Fa-f]{1,4}|U[0-9A-Fa-f]{1,8}|[0-7]{1,3}|c.|.)", re.S)
_BRACE_RE = re.compile(r"\{[^{}]*(,|\.\.)[^{}]*\}")


def node_text(node: Node) -> str:
    return (node.text or b"").decode("utf-8", "surrogateescape")


def unescape_unquoted(text: str) -> str:
    """Backslash removal outside quotes: ``\\x`` is ``x``; a backslash-newline disappears."""
    out: list[str] = []
    i = 0
    while i < len(text):
        ch = text[i]
        if ch == "\\" and i + 1 < len(text):
            if text[i + 1] != "\n":
                out.append(text[i + 1])
            i += 2
            continue
        out.append(ch)
        i += 1
    return "".join(out)


def unescape_double(text: str) -> str:
    """Inside double quotes a backslash only escapes $ ` " \\ and newline."""
    return re.sub(r'\\([$`"\\\n])', lambda m: "" if m.group(1) == "\n" else m.group(1), text)


def decode_ansi_c(body: str) -> str:
    def repl(m: re.Match[str]) -> str:
        esc = m.group(1)
        head = esc[0]
        if head in "xuU" and len(esc) > 1:
            return chr(min(int(esc[1:], 16), 0x10FFFF))
        if head.isdigit():
            return chr(int(esc, 8) & 0xFF)
        if head == "c" and len(esc) == 2:
            return chr(ord(esc[1].upper()) ^ 0x40)
        return _ANSI_SIMPLE.get(esc, "\\" + esc)

    return _ANSI_RE.sub(repl, body)


def _join(parts: list[Word], text: str) -> Word:
    literal = all(p.literal for p in parts)
    return Word(
        text="".join(p.text for p in parts) if literal else text,
        literal=literal,
        substitution=any(p.substitution for p in parts),
        glob=any(p.glob for p in parts),
        substitution_only=not literal and all(p.literal or p.substitution_only for p in parts),
    )


def _string(node: Node) -> Word:
    """Double-quoted string: walk children by offset so text between them is kept."""
    parts: list[Word] = []
    raw = node.text or b""
    pos = node.start_byte + 1
    end = node.end_byte - 1
    for child in node.named_children:
        if child.start_byte > pos:
            gap = raw[pos - node.start_byte: child.start_byte - node.start_byte]
            parts.append(Word(unescape_double(gap.decode("utf-8", "surrogateescape"))))
        if child.type == "string_content":
            parts.append(Word(unescape_double(node_text(child))))
        else:
            parts.append(resolve(child))
        pos = child.end_byte
    if end > pos:
        gap = raw[pos - node.start_byte: end - node.start_byte]
        parts.append(Word(unescape_double(gap.decode("utf-8", "surrogateescape"))))
    return _join(parts, node_text(node))


def _plain(text: str) -> Word:
    glob = any(c in text for c in "*?[") or bool(_BRACE_RE.search(text))
    return Word(unescape_unquoted(text), glob=glob)


def resolve(node: Node) -> Word:
    """The value of one word-like node after quote removal, or an opaque Word."""
    kind = node.type
    text = node_text(node)
    if kind in ("word", "number", "command_name", "variable_name", "test_operator", "regex",
                "extglob_pattern"):
        if kind == "command_name" and node.named_child_count == 1:
            return resolve(node.named_children[0])
        if kind == "command_name" and node.named_child_count > 1:
            return _join([resolve(c) for c in node.named_children], text)
        return _plain(text)
    if kind == "raw_string":
        return Word(text[1:-1])
    if kind == "ansi_c_string":
        return Word(decode_ansi_c(text[2:-1]))
    if kind in ("string", "translated_string"):
        inner = node.named_children[0] if kind == "translated_string" and node.named_children else node
        return _string(inner)
    if kind == "concatenation":
        joined = _join([resolve(c) for c in node.named_children], text)
        if not joined.glob and _BRACE_RE.search(text):  # {a,b} split over several nodes
            return Word(joined.text, joined.literal, joined.substitution, glob=True)
        return joined
    if kind in _EXPANSIONS:
        return Word(text, literal=False, substitution=kind in _SUBSTITUTIONS or _has_subst(node),
                    substitution_only=kind in _SUBSTITUTIONS)
    return Word(text, literal=False, substitution=_has_subst(node))


def _has_subst(node: Node) -> bool:
    stack = list(node.named_children)
    while stack:
        n = stack.pop()
        if n.type in _SUBSTITUTIONS:
            return True
        stack.extend(n.named_children)
    return False
