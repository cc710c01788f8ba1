"""The tree walk: every simple command anywhere in a tree-sitter-bash tree, with the context it runs in
(pipelines, substitutions, groups, loops, functions, redirects), handed to the emitter."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

from tree_sitter import Node

from canal.policy.shell.context import Ctx
from canal.policy.shell.emit import Emitter
from canal.policy.shell.model import Redirect, Word
from canal.policy.shell.redirects import file_redirect, herestring
from canal.policy.shell.redirects import heredoc as heredoc_redirect
from canal.policy.shell.variables import arithmetic_assigned
from canal.policy.shell.words import node_text, resolve

_LABELS = {"subshell": "subshell", "compound_statement": "group", "if_statement": "if",
           "while_statement": "loop", "for_statement": "loop", "c_style_for_statement": "loop",
           "case_statement": "case", "negated_command": "negated"}
_TEST_LEAVES = {"word", "string", "raw_string", "concatenation", "simple_expansion", "expansion",
                "command_substitution", "process_substitution", "number", "test_operator", "ansi_c_string",
                "regex", "arithmetic_expansion"}


class Walker:
    def __init__(self, out: Emitter) -> None:
        self.out = out
        self.heredocs: dict[str, tuple[str, bool]] = {}  # bodies cut out by the two-heredoc fallback
        self.descriptors: set[int] = set()  # start bytes of `0` words that are a redirect's descriptor

    def walk(self, node: Node, ctx: Ctx) -> None:
        kind = node.type
        handler: Callable[[Node, Ctx], None] | None = getattr(self, "_n_" + kind, None)
        if handler is not None:
            handler(node, ctx)
            return
        if kind == "comment":
            return
        if kind in _LABELS:
            ctx = ctx.inside(_LABELS[kind])
        self.children(node, ctx)

    def children(self, node: Node, ctx: Ctx) -> None:
        kids = node.children
        for i, child in enumerate(kids):
            if not child.is_named:
                continue
            bg = i + 1 < len(kids) and kids[i + 1].type == "&"
            self.walk(child, dataclasses.replace(ctx, background=True) if bg else ctx)

    def scoped(self, node: Node, ctx: Ctx) -> None:
        saved = self.out.cwd
        try:
            self.children(node, ctx)
        finally:
            self.out.cwd = saved

    # --- compound commands ----------------------------------------------------------------------
    def _n_pipeline(self, node: Node, ctx: Ctx) -> None:
        saved = self.out.cwd
        piped: str | None = None
        for i, child in enumerate(c for c in node.children if c.is_named):
            before = len(self.out.segments)
            self.walk(child, ctx.inside("pipeline", stdin_piped=ctx.stdin_piped or i > 0,
                                        piped_text=piped if i > 0 else None))
            piped = self.out.printed(before)
        self.out.cwd = saved

    def _n_command_substitution(self, node: Node, ctx: Ctx) -> None:
        before = len(self.out.segments)
        inner = ctx.inside("substitution", redirects=(), stdin_piped=False, background=False, piped_text=None)
        named = node.named_children
        if named and all(c.type.endswith("redirect") for c in named):
            # `$(< f)` reads f (bash's shortcut for `$(cat f)`), `$(> f)` truncates it: a segment each
            found = [r for c in named for r in self.redirect(c, inner)]
            self.out.add([], node, inner, [], found)
        else:
            self.scoped(node, inner)
        self.out.remember(node, before)

    def _n_process_substitution(self, node: Node, ctx: Ctx) -> None:
        before = len(self.out.segments)
        self.scoped(node, ctx.inside("process_substitution", redirects=(), stdin_piped=False,
                                     piped_text=None))
        self.out.remember(node, before)

    def _n_subshell(self, node: Node, ctx: Ctx) -> None:
        self.scoped(node, ctx.inside("subshell"))

    def _n_compound_statement(self, node: Node, ctx: Ctx) -> None:
        if not node.children or node.children[0].type != "((":
            self.children(node, ctx.inside("group"))
            return
        self.arithmetic(node, ctx)

    def _n_c_style_for_statement(self, node: Node, ctx: Ctx) -> None:
        self.arithmetic(node, ctx)

    def arithmetic(self, node: Node, ctx: Ctx) -> None:
        """`(( ))` evaluates variables' values as expressions: opaque unless it only holds numbers."""
        self.children(node, ctx.inside("arithmetic"))
        text = node_text(node)
        self.out.add([Word("(("), Word(text, literal=False)], node, ctx, [], list(ctx.redirects),
                     assigned=arithmetic_assigned(text), opaque="arithmetic on variables' values")

    def _n_for_statement(self, node: Node, ctx: Ctx) -> None:
        """Each word of the list is assigned to the variable in turn: decided as assignments."""
        var = node.child_by_field_name("variable")
        if var is not None:
            name = node_text(var)
            values = [resolve(v) for v in node.children_by_field_name("value")]
            self.out.stores_data = self.out.stores_data or not all(v.literal for v in values)
            self.out.add([], var, ctx, [(name, v.text) for v in values], [], assigned=[name])
        self.children(node, ctx.inside("loop"))

    def _n_function_definition(self, node: Node, ctx: Ctx) -> None:
        name = node.child_by_field_name("name")
        redirects = tuple(r for c in node.named_children if c.type.endswith("redirect")
                          for r in self.redirect(c, ctx))
        fn = node_text(name) if name is not None else ""
        body_ctx = ctx.inside("function", functions=(*ctx.functions, fn), redirects=ctx.redirects + redirects)
        body = node.child_by_field_name("body")
        if body is not None:
            saved = self.out.cwd
            self.walk(body, body_ctx)
            self.out.define(fn, saved, self.out.cwd)
            self.out.cwd = saved

    # --- redirects ------------------------------------------------------------------------------
    def _n_redirected_statement(self, node: Node, ctx: Ctx) -> None:
        body = node.child_by_field_name("body")
        redirects: list[Redirect] = []
        for child in node.named_children:
            if child is not body and child.type.endswith("redirect"):
                redirects.extend(self.redirect(child, ctx))
        fd = _glued_descriptor(body, node)
        if fd is not None and redirects:  # `cmd 0< f`: tree-sitter-bash reads the 0 as an argument
            self.descriptors.add(fd.start_byte)
            redirects[0] = dataclasses.replace(redirects[0], fd=node_text(fd))
        inner = dataclasses.replace(ctx, redirects=ctx.redirects + tuple(redirects))
        before = len(self.out.segments)
        if body is not None:
            self.walk(body, inner)
        else:  # `> f` alone still opens (and truncates) f
            self.out.add([], node, ctx, [], list(inner.redirects))
        self.piped_after_heredoc(node, ctx, self.out.printed(before))

    def piped_after_heredoc(self, node: Node, ctx: Ctx, piped: str | None) -> None:
        """`cat <<EOF | sh`: tree-sitter-bash puts the rest of the pipeline inside the heredoc redirect."""
        for redirect in node.named_children:
            for pipe in (c for c in redirect.named_children if c.type == "pipeline"):
                for stage in pipe.named_children:
                    before = len(self.out.segments)
                    self.walk(stage, ctx.inside("pipeline", stdin_piped=True, piped_text=piped))
                    piped = self.out.printed(before)

    def redirect(self, node: Node, ctx: Ctx) -> list[Redirect]:
        for child in node.children:  # substitutions inside the target or an unquoted heredoc body
            if child.is_named and child.type != "pipeline":
                self.walk(child, ctx)
        if node.type == "heredoc_redirect":
            value, nested = heredoc_redirect(node)
            more = [file_redirect(n) if n.type == "file_redirect" else herestring(n) for n in nested]
            return [value, *more]
        if node.type == "herestring_redirect":
            value = herestring(node)
            if value.target in self.heredocs:
                body, literal = self.heredocs[value.target]
                return [Redirect(op="<<", fd=value.fd, target=body, mode="heredoc", literal=literal)]
            return [value]
        return [file_redirect(node)]

    def _n_heredoc_redirect(self, node: Node, ctx: Ctx) -> None:
        self.children(node, ctx)

    # --- simple commands ------------------------------------------------------------------------
    def _n_command(self, node: Node, ctx: Ctx) -> None:
        words: list[Word] = []
        assigns: list[tuple[str, str]] = []
        redirects = list(ctx.redirects)
        kids = node.named_children
        for i, child in enumerate(kids):
            if child.type == "variable_assignment":
                assigns.append(self.assignment(child, ctx))
            elif child.type.endswith("redirect"):
                found = self.redirect(child, ctx)
                glued = i > 0 and kids[i - 1].type == "number" and kids[i - 1].end_byte == child.start_byte
                if glued and found:  # `cmd 0<<<x`: the 0 is the redirect's descriptor
                    words.pop()
                    found[0] = dataclasses.replace(found[0], fd=node_text(kids[i - 1]))
                redirects.extend(found)
            elif child.type != "number" or child.start_byte not in self.descriptors:
                self.walk(child, ctx)
                words.append(resolve(child))
        self.out.add(words, node, ctx, assigns, redirects)

    def assignment(self, node: Node, ctx: Ctx) -> tuple[str, str]:
        name = node.child_by_field_name("name")
        value = node.child_by_field_name("value")
        if value is None:
            return node_text(name) if name is not None else "", ""
        self.walk(value, ctx)
        word = resolve(value)
        self.out.stores_data = self.out.stores_data or not word.literal
        return node_text(name) if name is not None else "", word.text

    def _n_variable_assignment(self, node: Node, ctx: Ctx) -> None:
        self.out.add([], node, ctx, [self.assignment(node, ctx)], list(ctx.redirects))

    def _n_variable_assignments(self, node: Node, ctx: Ctx) -> None:
        assigns = [self.assignment(c, ctx) for c in node.named_children if c.type == "variable_assignment"]
        self.out.add([], node, ctx, assigns, list(ctx.redirects))

    def _n_declaration_command(self, node: Node, ctx: Ctx) -> None:
        words = [Word(node.children[0].type)] if node.children else []
        for child in node.named_children:
            if child.type == "variable_assignment":
                name, value = self.assignment(child, ctx)
                raw = child.child_by_field_name("value")
                literal = raw is None or resolve(raw).literal
                words.append(Word(f"{name}={value}", literal=literal))
                continue
            self.walk(child, ctx)
            words.append(resolve(child))
        self.out.add(words, node, ctx, [], list(ctx.redirects))

    _n_unset_command = _n_declaration_command

    def _n_test_command(self, node: Node, ctx: Ctx) -> None:
        self.children(node, ctx)
        leaves: list[Word] = []
        stack = list(reversed(node.named_children))
        while stack:
            current = stack.pop()
            if current.type in _TEST_LEAVES or not current.named_children:
                leaves.append(resolve(current))
            else:
                stack.extend(reversed(current.named_children))
        opener = "[[" if node_text(node).startswith("[[") else "["
        self.out.add([Word(opener), *leaves], node, ctx, [], list(ctx.redirects))


def _glued_descriptor(body: Node | None, statement: Node) -> Node | None:
    """The ``number`` argument that ends right where the statement's first redirect starts (``0<``)."""
    if body is None or body.type != "command" or not body.named_children:
        return None
    last = body.named_children[-1]
    first = next((c for c in statement.named_children if c is not body and c.type.endswith("redirect")), None)
    glued = last.type == "number" and first is not None and last.end_byte == first.start_byte
    return last if glued else None
