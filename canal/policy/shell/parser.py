"""Parse a shell command into segments: every simple command anywhere in it, wrappers unwrapped.

tree-sitter-bash builds the tree; the host's ``bash -n`` must agree that the text parses; ERROR and
MISSING nodes, oversize input and deep nesting are failures. Callers decide failures fail-closed.
"""

from __future__ import annotations

import dataclasses
import posixpath
from collections.abc import Callable

import tree_sitter_bash
from tree_sitter import Language, Node, Parser

from canal.policy.shell import heredoc
from canal.policy.shell.analysis import analyse
from canal.policy.shell.code import code_kind
from canal.policy.shell.model import (
    MAX_ARG_CHARS,
    MAX_ARGV,
    MAX_COMMAND_CHARS,
    MAX_NODE_DEPTH,
    MAX_SCRIPT_NESTING,
    MAX_SEGMENTS,
    ParseResult,
    Redirect,
    Segment,
    ShellParseFailure,
    Word,
)
from canal.policy.shell.produce import literal_output
from canal.policy.shell.redirects import file_redirect, herestring
from canal.policy.shell.redirects import heredoc as heredoc_redirect
from canal.policy.shell.syntax import SyntaxChecker, bash_n
from canal.policy.shell.unwrap import Unwrapped, basename, unwrap
from canal.policy.shell.variables import arithmetic_assigned
from canal.policy.shell.words import node_text, resolve

_LANGUAGE = Language(tree_sitter_bash.language())
PARSER_VERSION = "tree-sitter-bash-0.25/canal-2"
_LABELS = {"subshell": "subshell", "compound_statement": "group", "if_statement": "if",
           "while_statement": "loop", "for_statement": "loop", "c_style_for_statement": "loop",
           "case_statement": "case", "negated_command": "negated"}
_TEST_LEAVES = {"word", "string", "raw_string", "concatenation", "simple_expansion", "expansion",
                "command_substitution", "process_substitution", "number", "test_operator", "ansi_c_string",
                "regex", "arithmetic_expansion"}


@dataclasses.dataclass(frozen=True)
class _Ctx:
    context: tuple[str, ...] = ()
    redirects: tuple[Redirect, ...] = ()
    wrappers: tuple[str, ...] = ()
    functions: tuple[str, ...] = ()
    stdin_piped: bool = False
    piped_text: str | None = None  # what the previous pipeline stage visibly prints
    dynamic: bool = False  # commands get arguments at run time (a program run by sort --compress-program)
    background: bool = False
    nesting: int = 0

    def inside(self, label: str, **changes: object) -> _Ctx:
        return dataclasses.replace(self, context=(*self.context, label), **changes)  # type: ignore[arg-type]


def _fail(reason: str) -> ShellParseFailure:
    return ShellParseFailure(reason)


def _check_tree(root: Node) -> None:
    stack = [(root, 0)]
    while stack:
        node, depth = stack.pop()
        if depth > MAX_NODE_DEPTH:
            msg = f"nested deeper than {MAX_NODE_DEPTH} syntax levels"
            raise _fail(msg)
        if node.is_error or node.is_missing:
            kind = "missing token" if node.is_missing else "syntax error"
            msg = f"{kind} at offset {node.start_byte}: {node_text(node)[:40]!r}"
            raise _fail(msg)
        stack.extend((c, depth + 1) for c in node.children)


class _Walker:
    def __init__(self, checker: SyntaxChecker, cwd: str) -> None:
        self.checker = checker
        self.cwd = cwd
        self.segments: list[Segment] = []
        self.heredocs: dict[str, tuple[str, bool]] = {}
        self.produced: dict[str, str] = {}  # substitution text -> what it visibly prints

    def script(self, text: str, ctx: _Ctx) -> None:
        if len(text) > MAX_COMMAND_CHARS:
            msg = f"longer than {MAX_COMMAND_CHARS} characters"
            raise _fail(msg)
        complaint = self.checker(text)
        if complaint:
            msg = f"bash -n rejects it: {complaint}"
            raise _fail(msg)
        parser = Parser(_LANGUAGE)
        source = text.encode("utf-8", "surrogateescape")
        root = parser.parse(source).root_node
        if root.has_error and "<<" in text:
            rewritten = heredoc.rewrite(text)
            if rewritten is not None:
                root = parser.parse(rewritten.text.encode("utf-8", "surrogateescape")).root_node
                self.heredocs.update(rewritten.bodies)
        _check_tree(root)
        self.walk(root, ctx)

    # --- tree walk -------------------------------------------------------------------------------
    def walk(self, node: Node, ctx: _Ctx) -> None:
        kind = node.type
        handler: Callable[[Node, _Ctx], None] | None = getattr(self, "_n_" + kind, None)
        if handler is not None:
            handler(node, ctx)
            return
        if kind == "comment":
            return
        if kind in _LABELS:
            ctx = ctx.inside(_LABELS[kind])
        self.children(node, ctx)

    def children(self, node: Node, ctx: _Ctx) -> None:
        kids = node.children
        for i, child in enumerate(kids):
            if not child.is_named:
                continue
            bg = i + 1 < len(kids) and kids[i + 1].type == "&"
            self.walk(child, dataclasses.replace(ctx, background=True) if bg else ctx)

    def scoped(self, node: Node, ctx: _Ctx) -> None:
        saved = self.cwd
        try:
            self.children(node, ctx)
        finally:
            self.cwd = saved

    def _n_pipeline(self, node: Node, ctx: _Ctx) -> None:
        saved = self.cwd
        piped: str | None = None
        for i, child in enumerate(c for c in node.children if c.is_named):
            before = len(self.segments)
            self.walk(child, ctx.inside("pipeline", stdin_piped=ctx.stdin_piped or i > 0,
                                        piped_text=piped if i > 0 else None))
            piped = self.printed(before)
        self.cwd = saved

    def printed(self, before: int) -> str | None:
        """What the one command emitted since ``before`` visibly prints, if it is a literal producer."""
        new = self.segments[before:]
        return literal_output(new[0]) if len(new) == 1 else None

    def _n_command_substitution(self, node: Node, ctx: _Ctx) -> None:
        before = len(self.segments)
        self.scoped(node, ctx.inside("substitution", redirects=(), stdin_piped=False, background=False,
                                     piped_text=None))
        self.remember(node, before)

    def _n_process_substitution(self, node: Node, ctx: _Ctx) -> None:
        before = len(self.segments)
        self.scoped(node, ctx.inside("process_substitution", redirects=(), stdin_piped=False,
                                     piped_text=None))
        self.remember(node, before)

    def remember(self, node: Node, before: int) -> None:
        out = self.printed(before)
        if out is not None:
            self.produced[node_text(node)] = out.rstrip("\n") if node.type == "command_substitution" else out

    def _n_subshell(self, node: Node, ctx: _Ctx) -> None:
        self.scoped(node, ctx.inside("subshell"))

    def _n_compound_statement(self, node: Node, ctx: _Ctx) -> None:
        if not node.children or node.children[0].type != "((":
            self.children(node, ctx.inside("group"))
            return
        self.arithmetic(node, ctx)

    def _n_c_style_for_statement(self, node: Node, ctx: _Ctx) -> None:
        self.arithmetic(node, ctx)

    def arithmetic(self, node: Node, ctx: _Ctx) -> None:
        """`(( ))` evaluates variables' values as expressions: opaque unless it only holds numbers."""
        self.children(node, ctx.inside("arithmetic"))
        text = node_text(node)
        self.add([Word("(("), Word(text, literal=False)], node, ctx, [], list(ctx.redirects),
                 assigned=arithmetic_assigned(text), opaque="arithmetic on variables' values")

    def _n_for_statement(self, node: Node, ctx: _Ctx) -> None:
        var = node.child_by_field_name("variable")
        if var is not None:
            self.add([], var, ctx, [], [], assigned=[node_text(var)])
        self.children(node, ctx.inside("loop"))

    def _n_function_definition(self, node: Node, ctx: _Ctx) -> None:
        name = node.child_by_field_name("name")
        redirects = tuple(r for c in node.named_children if c.type.endswith("redirect")
                          for r in self.redirect(c, ctx))
        fn = node_text(name) if name is not None else ""
        body_ctx = ctx.inside("function", functions=(*ctx.functions, fn), redirects=ctx.redirects + redirects)
        body = node.child_by_field_name("body")
        if body is not None:
            saved = self.cwd
            self.walk(body, body_ctx)
            self.cwd = saved

    def _n_redirected_statement(self, node: Node, ctx: _Ctx) -> None:
        body = node.child_by_field_name("body")
        redirects: list[Redirect] = []
        for child in node.named_children:
            if child is not body and child.type.endswith("redirect"):
                redirects.extend(self.redirect(child, ctx))
        inner = dataclasses.replace(ctx, redirects=ctx.redirects + tuple(redirects))
        before = len(self.segments)
        if body is not None:
            self.walk(body, inner)
        else:  # `> f` alone still opens (and truncates) f
            self.add([], node, ctx, [], list(inner.redirects))
        self.piped_after_heredoc(node, ctx, self.printed(before))

    def piped_after_heredoc(self, node: Node, ctx: _Ctx, piped: str | None) -> None:
        """`cat <<EOF | sh`: tree-sitter-bash puts the rest of the pipeline inside the heredoc redirect."""
        for redirect in node.named_children:
            for pipe in (c for c in redirect.named_children if c.type == "pipeline"):
                for stage in pipe.named_children:
                    before = len(self.segments)
                    self.walk(stage, ctx.inside("pipeline", stdin_piped=True, piped_text=piped))
                    piped = self.printed(before)

    def redirect(self, node: Node, ctx: _Ctx) -> list[Redirect]:
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

    def _n_heredoc_redirect(self, node: Node, ctx: _Ctx) -> None:
        self.children(node, ctx)

    # --- simple commands ----------------------------------------------------------------------
    def _n_command(self, node: Node, ctx: _Ctx) -> None:
        words: list[Word] = []
        assigns: list[tuple[str, str]] = []
        redirects = list(ctx.redirects)
        for child in node.named_children:
            if child.type == "variable_assignment":
                assigns.append(self.assignment(child, ctx))
            elif child.type.endswith("redirect"):
                redirects.extend(self.redirect(child, ctx))
            else:
                self.walk(child, ctx)
                words.append(resolve(child))
        self.add(words, node, ctx, assigns, redirects)

    def assignment(self, node: Node, ctx: _Ctx) -> tuple[str, str]:
        name = node.child_by_field_name("name")
        value = node.child_by_field_name("value")
        if value is not None:
            self.walk(value, ctx)
        return (node_text(name) if name is not None else "",
                resolve(value).text if value is not None else "")

    def _n_variable_assignment(self, node: Node, ctx: _Ctx) -> None:
        self.add([], node, ctx, [self.assignment(node, ctx)], list(ctx.redirects))

    def _n_variable_assignments(self, node: Node, ctx: _Ctx) -> None:
        assigns = [self.assignment(c, ctx) for c in node.named_children if c.type == "variable_assignment"]
        self.add([], node, ctx, assigns, list(ctx.redirects))

    def _n_declaration_command(self, node: Node, ctx: _Ctx) -> None:
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
        self.add(words, node, ctx, [], list(ctx.redirects))

    _n_unset_command = _n_declaration_command

    def _n_test_command(self, node: Node, ctx: _Ctx) -> None:
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
        self.add([Word(opener), *leaves], node, ctx, [], list(ctx.redirects))

    def add(self, words: list[Word], node: Node, ctx: _Ctx, assigns: list[tuple[str, str]],
            redirects: list[Redirect], *, assigned: list[str] | None = None, opaque: str = "") -> None:
        if len(words) > MAX_ARGV or any(len(w.text) > MAX_ARG_CHARS for w in words):
            msg = f"a command has more than {MAX_ARGV} words or a word over {MAX_ARG_CHARS} characters"
            raise _fail(msg)
        seg = Segment(words=tuple(words), text=node_text(node), assignments=tuple(assigns),
                      redirects=tuple(redirects), context=ctx.context, wrappers=ctx.wrappers,
                      stdin_piped=ctx.stdin_piped, background=ctx.background, functions=ctx.functions,
                      cwd=self.cwd, assigned=tuple(assigned or ()), opaque_reason=opaque,
                      dynamic_args=ctx.dynamic)
        self.emit(seg, ctx)
        self.track_cd(seg)

    def track_cd(self, seg: Segment) -> None:
        name = basename(seg.words[0]) if seg.words else ""
        if name == "popd":
            self.cwd = ""
        if name not in ("cd", "pushd"):
            return
        args = [w for w in seg.words[1:] if w.text not in ("-P", "-L", "-n", "--")]
        if (len(args) == 1 and args[0].literal and not args[0].glob and self.cwd and args[0].text != "-"
                and not args[0].text.startswith(("+", "-"))):
            target = args[0].text
            home_rel = target.startswith("~")
            self.cwd = "" if home_rel else posixpath.normpath(posixpath.join(self.cwd, target))
        else:
            self.cwd = ""

    def emit(self, seg: Segment, ctx: _Ctx) -> None:
        if len(self.segments) >= MAX_SEGMENTS:
            msg = f"more than {MAX_SEGMENTS} commands"
            raise _fail(msg)
        if len(seg.wrappers) > 4 * MAX_SCRIPT_NESTING:
            msg = "wrappers nested too deep"
            raise _fail(msg)
        found = analyse(seg)
        seg = found.segment
        for script in found.scripts:
            self.nested(seg, "value", script, ctx)
        for probe in found.probes:
            self.probe(seg, probe, ctx)
        unwrapped = unwrap(seg.words) if seg.words and seg.words[0].literal else None
        if unwrapped is None:
            self.segments.append(dataclasses.replace(seg, code_exec=_strongest(found.code, code_kind(seg))))
            return
        self.expand(dataclasses.replace(seg, code_exec=found.code), unwrapped, ctx)

    def probe(self, seg: Segment, script: str, ctx: _Ctx) -> None:
        """Substitutions bash would run inside a string (a subscript, a startup variable's value)."""
        try:
            self.nested(seg, "expansion", Word(script), ctx)
        except ShellParseFailure:
            self.segments.append(dataclasses.replace(seg, code_exec="embedded",
                                                     opaque_reason="code in a string the parser cannot read"))

    def expand(self, seg: Segment, u: Unwrapped, ctx: _Ctx) -> None:
        if u.keep_outer or u.code or u.writes or u.deletes:
            code = _strongest(seg.code_exec, u.code, self.stdin_code(seg, u), code_kind(seg))
            self.segments.append(dataclasses.replace(seg, code_exec=code, extra_writes=u.writes,
                                                     deletes=u.deletes))
        for inner in u.inners:
            self.emit(dataclasses.replace(seg, words=inner, wrappers=(*seg.wrappers, u.wrapper),
                                          dynamic_args=seg.dynamic_args or u.dynamic,
                                          assignments=seg.assignments + u.assignments), ctx)
        for script in u.scripts:
            self.nested(seg, u.wrapper, script, ctx, dynamic=u.dynamic)
        for source in u.sources:
            self.nested(seg, u.wrapper, source, ctx)
        if u.stdin_script:
            feed = next((r for r in reversed(seg.redirects) if r.mode in ("heredoc", "herestring")), None)
            if feed is not None and feed.literal:
                self.nested(seg, u.wrapper, Word(feed.target), ctx)
            elif feed is None and seg.stdin_piped and ctx.piped_text is not None:
                self.nested(seg, u.wrapper, Word(ctx.piped_text), ctx)

    def stdin_code(self, seg: Segment, u: Unwrapped) -> str:
        if not u.stdin_script:
            return ""
        feed = next((r for r in reversed(seg.redirects) if r.mode in ("heredoc", "herestring", "read")), None)
        if feed is not None:
            return "" if feed.mode == "read" or feed.literal else "embedded"
        return "stdin" if seg.stdin_piped else ""

    def nested(self, seg: Segment, wrapper: str, script: Word, ctx: _Ctx, *, dynamic: bool = False) -> None:
        if not script.literal:
            seen = self.produced.get(script.text) or self.produced.get(script.text.strip('"'))
            if seen is None:
                self.segments.append(dataclasses.replace(seg, code_exec="embedded"))
                return
            script = Word(seen)
        if ctx.nesting + 1 > MAX_SCRIPT_NESTING:
            msg = f"scripts nested more than {MAX_SCRIPT_NESTING} levels deep"
            raise _fail(msg)
        outer = tuple(r for r in seg.redirects if r.mode not in ("heredoc", "herestring"))
        inner = _Ctx(context=(*seg.context, "script"), redirects=outer, wrappers=(*seg.wrappers, wrapper),
                     functions=seg.functions, stdin_piped=seg.stdin_piped, nesting=ctx.nesting + 1,
                     dynamic=dynamic or ctx.dynamic)
        saved = self.cwd
        self.script(script.text, inner)
        self.cwd = saved


def _strongest(*codes: str) -> str:
    for kind in ("embedded", "stdin", "inline"):
        if kind in codes:
            return kind
    return ""


def parse(text: str, *, cwd: str = "/workspace", checker: SyntaxChecker = bash_n) -> ParseResult:
    """Segments of ``text``, or a failure reason. Never raises for bad input."""
    if "\x00" in text:
        return ParseResult(failure="contains a NUL byte")
    walker = _Walker(checker, cwd)
    try:
        walker.script(text, _Ctx())
    except ShellParseFailure as exc:
        return ParseResult(failure=str(exc))
    except RecursionError:
        return ParseResult(failure="nested too deep")
    return ParseResult(segments=tuple(walker.segments))


def expand_argv(words: tuple[Word, ...], *, cwd: str = "/workspace",
                checker: SyntaxChecker = bash_n) -> ParseResult:
    """Segments of an exact argv run without a shell (wrappers and inner scripts still analysed)."""
    walker = _Walker(checker, cwd)
    seg = Segment(words=words, text=" ".join(w.text for w in words), cwd=cwd)
    try:
        walker.emit(seg, _Ctx())
    except ShellParseFailure as exc:
        return ParseResult(failure=str(exc))
    except RecursionError:
        return ParseResult(failure="nested too deep")
    return ParseResult(segments=tuple(walker.segments))
