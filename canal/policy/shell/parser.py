"""Parse a shell command into segments: every simple command anywhere in it, wrappers unwrapped.

tree-sitter-bash builds the tree; the host's ``bash -n`` must agree that the text parses; ERROR and
MISSING nodes, oversize input and deep nesting are failures. Callers decide failures fail-closed.
The walk over the tree is ``walker``; turning simple commands into segments (and parsing the scripts
they carry, back through ``_Parse.script``) is ``emit``.
"""

from __future__ import annotations

import dataclasses
import re

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
PARSER_VERSION = "tree-sitter-bash-0.25/canal-3"
# tree-sitter-bash splits words on CR, VT and FF, which bash keeps inside a word (`ls\rnpm` is one
# program name to bash); other control characters are where the two may disagree next. A script holding
# any (tab and newline aside) is decided as opaque, program name included: fail closed, not guessed.
_BASH_DISAGREES = re.compile(r"[\x01-\x08\x0b-\x1f\x7f]")
UNSURE_REASON = "a control character: where bash splits its words is not what the parser saw"


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
        self.unsure = False  # some (nested) script held a character bash and the parser read apart

    def segments(self) -> tuple[Segment, ...]:
        if not self.unsure:
            return tuple(self.out.segments)
        return tuple(dataclasses.replace(s, name_unknown=True, opaque_reason=s.opaque_reason or UNSURE_REASON)
                     for s in self.out.segments)

    def script(self, text: str, ctx: Ctx) -> None:
        if len(text) > MAX_COMMAND_CHARS:
            msg = f"longer than {MAX_COMMAND_CHARS} characters"
            raise fail(msg)
        self.unsure = self.unsure or bool(_BASH_DISAGREES.search(text))
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
    return ParseResult(segments=run.segments())


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
    return ParseResult(segments=run.segments())
