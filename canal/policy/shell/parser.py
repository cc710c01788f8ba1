"""Parse a shell command into segments: every simple command anywhere in it, wrappers unwrapped.

tree-sitter-bash builds the tree; the host's ``bash -n`` must agree that the text parses; ERROR and
MISSING nodes, oversize input and deep nesting are failures. Callers decide failures fail-closed.
The walk over the tree is ``walker``; turning simple commands into segments (and parsing the scripts
they carry, back through ``_Parse.script``) is ``emit``.
"""

from __future__ import annotations

import tree_sitter_bash
from tree_sitter import Language, Node, Parser

from canal.policy.shell import heredoc
from canal.policy.shell.context import Ctx, fail
from canal.policy.shell.emit import Emitter
from canal.policy.shell.model import (
    MAX_COMMAND_CHARS,
    MAX_NODE_DEPTH,
    ParseResult,
    Segment,
    ShellParseFailure,
    Word,
)
from canal.policy.shell.syntax import SyntaxChecker, bash_n
from canal.policy.shell.walker import Walker
from canal.policy.shell.words import node_text

_LANGUAGE = Language(tree_sitter_bash.language())
PARSER_VERSION = "tree-sitter-bash-0.25/canal-2"


def _check_tree(root: Node) -> None:
    stack = [(root, 0)]
    while stack:
        node, depth = stack.pop()
        if depth > MAX_NODE_DEPTH:
            msg = f"nested deeper than {MAX_NODE_DEPTH} syntax levels"
            raise fail(msg)
        if node.is_error or node.is_missing:
            kind = "missing token" if node.is_missing else "syntax error"
            msg = f"{kind} at offset {node.start_byte}: {node_text(node)[:40]!r}"
            raise fail(msg)
        stack.extend((c, depth + 1) for c in node.children)


class _Parse:
    """One parse: the emitter collects segments, the walker walks each (nested) script's tree."""

    def __init__(self, checker: SyntaxChecker, cwd: str) -> None:
        self.checker = checker
        self.out = Emitter(cwd, self.script)
        self.walker = Walker(self.out)

    def script(self, text: str, ctx: Ctx) -> None:
        if len(text) > MAX_COMMAND_CHARS:
            msg = f"longer than {MAX_COMMAND_CHARS} characters"
            raise fail(msg)
        complaint = self.checker(text)
        if complaint:
            msg = f"bash -n rejects it: {complaint}"
            raise fail(msg)
        parser = Parser(_LANGUAGE)
        source = text.encode("utf-8", "surrogateescape")
        root = parser.parse(source).root_node
        if root.has_error and "<<" in text:
            rewritten = heredoc.rewrite(text)
            if rewritten is not None:
                root = parser.parse(rewritten.text.encode("utf-8", "surrogateescape")).root_node
                self.walker.heredocs.update(rewritten.bodies)
        _check_tree(root)
        self.walker.walk(root, ctx)


def parse(text: str, *, cwd: str = "/workspace", checker: SyntaxChecker = bash_n) -> ParseResult:
    """Segments of ``text``, or a failure reason. Never raises for bad input."""
    if "\x00" in text:
        return ParseResult(failure="contains a NUL byte")
    run = _Parse(checker, cwd)
    try:
        run.script(text, Ctx())
        run.out.finish()
    except ShellParseFailure as exc:
        return ParseResult(failure=str(exc))
    except RecursionError:
        return ParseResult(failure="nested too deep")
    return ParseResult(segments=tuple(run.out.segments))


def expand_argv(words: tuple[Word, ...], *, cwd: str = "/workspace",
                checker: SyntaxChecker = bash_n) -> ParseResult:
    """Segments of an exact argv run without a shell (wrappers and inner scripts still analysed)."""
    run = _Parse(checker, cwd)
    seg = Segment(words=words, text=" ".join(w.text for w in words), cwd=cwd)
    try:
        run.out.emit(seg, Ctx())
        run.out.finish()
    except ShellParseFailure as exc:
        return ParseResult(failure=str(exc))
    except RecursionError:
        return ParseResult(failure="nested too deep")
    return ParseResult(segments=tuple(run.out.segments))
