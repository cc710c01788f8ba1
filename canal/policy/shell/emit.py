"""Segments out of simple commands: limits, what each hides (analysis), what it wraps (unwrap), and the
scripts it carries, parsed in turn. Also keeps the working directory literal ``cd``s lead to."""

from __future__ import annotations

import dataclasses
import posixpath
from collections.abc import Callable

from tree_sitter import Node

from canal.policy.shell.analysis import analyse, sink
from canal.policy.shell.code import code_kind
from canal.policy.shell.context import Ctx, fail, strongest
from canal.policy.shell.model import (
    MAX_ARG_CHARS,
    MAX_ARGV,
    MAX_SCRIPT_NESTING,
    MAX_SEGMENTS,
    Redirect,
    Segment,
    ShellParseFailure,
    Word,
)
from canal.policy.shell.produce import literal_output
from canal.policy.shell.unwrap import Unwrapped, basename, unwrap
from canal.policy.shell.words import node_text

ScriptParser = Callable[[str, Ctx], None]
_IN_SHELL = ("builtin", "command")  # run a builtin in this shell: `builtin cd /` moves it too
_HERE = ("eval", "source", ".")  # run their script in this shell: a cd in it holds after


class Emitter:
    """Collects the segments of one parse. ``script`` parses a nested script (into this emitter)."""

    def __init__(self, cwd: str, script: ScriptParser) -> None:
        self.cwd = cwd
        self.script = script
        self.segments: list[Segment] = []
        self.produced: dict[str, str] = {}  # substitution text -> what it visibly prints
        self.deferred: list[tuple[Segment, str, Ctx]] = []  # subscripts that run only if data is evaluated
        self.stores_data = False  # an assignment of a value known only at run time
        # functions and aliases defined in the command whose body changes folder: name -> (from, to)
        self.moves: dict[str, tuple[str, str]] = {}

    def finish(self) -> None:
        """Check the deferred strings if the command evaluates or stores run-time data anywhere."""
        while self.deferred and (self.stores_data or any(sink(s) for s in self.segments)):
            pending, self.deferred = self.deferred, []
            for seg, script, ctx in pending:
                self.probe(seg, script, ctx)

    def add(self, words: list[Word], node: Node, ctx: Ctx, assigns: list[tuple[str, str]],
            redirects: list[Redirect], *, assigned: list[str] | None = None, opaque: str = "") -> None:
        if len(words) > MAX_ARGV or any(len(w.text) > MAX_ARG_CHARS for w in words):
            msg = f"a command has more than {MAX_ARGV} words or a word over {MAX_ARG_CHARS} characters"
            raise fail(msg)
        seg = Segment(words=tuple(words), text=node_text(node), assignments=tuple(assigns),
                      redirects=tuple(redirects), context=ctx.context, wrappers=ctx.wrappers,
                      stdin_piped=ctx.stdin_piped, background=ctx.background, functions=ctx.functions,
                      cwd=self.cwd, assigned=tuple(assigned or ()), opaque_reason=opaque,
                      dynamic_args=ctx.dynamic)
        self.emit(seg, ctx)
        self.track_cd(seg)

    def track_cd(self, seg: Segment) -> None:
        words = _in_shell(seg.words)
        name = basename(words[0]) if words else ""
        if name in self.moves:  # a function or alias of this command that changes folder
            start, end = self.moves[name]
            self.cwd = end if self.cwd == start else ""
            return
        if name == "popd":
            self.cwd = ""
        if name not in ("cd", "pushd"):
            return
        args = [w for w in words[1:] if w.text not in ("-P", "-L", "-n", "--")]
        if (len(args) == 1 and args[0].literal and not args[0].glob and self.cwd and args[0].text != "-"
                and not args[0].text.startswith(("+", "-"))):
            target = args[0].text
            home_rel = target.startswith("~")
            self.cwd = "" if home_rel else posixpath.normpath(posixpath.join(self.cwd, target))
        else:
            self.cwd = ""

    def define(self, name: str, start: str, end: str) -> None:
        """``name`` (a function or alias) was defined in ``start`` and its body ends in ``end``."""
        if end != start:
            self.moves[name] = (start, end)
        else:
            self.moves.pop(name, None)

    def printed(self, before: int) -> str | None:
        """What the one command emitted since ``before`` visibly prints, if it is a literal producer."""
        new = self.segments[before:]
        return literal_output(new[0]) if len(new) == 1 else None

    def remember(self, node: Node, before: int) -> None:
        out = self.printed(before)
        if out is not None:
            self.produced[node_text(node)] = out.rstrip("\n") if node.type == "command_substitution" else out

    def emit(self, seg: Segment, ctx: Ctx) -> None:
        if len(self.segments) >= MAX_SEGMENTS:
            msg = f"more than {MAX_SEGMENTS} commands"
            raise fail(msg)
        if len(seg.wrappers) > 4 * MAX_SCRIPT_NESTING:
            msg = "wrappers nested too deep"
            raise fail(msg)
        found = analyse(seg)
        seg = found.segment
        for script in found.scripts:
            self.nested(seg, "value", script, ctx)
        for probe in found.probes:
            self.probe(seg, probe, ctx)
        self.deferred += [(seg, probe, ctx) for probe in found.deferred]
        unwrapped = unwrap(seg.words) if seg.words and seg.words[0].literal else None
        if unwrapped is None:
            self.segments.append(dataclasses.replace(seg, code_exec=strongest(found.code, code_kind(seg))))
            return
        self.expand(dataclasses.replace(seg, code_exec=found.code), unwrapped, ctx)

    def probe(self, seg: Segment, script: str, ctx: Ctx) -> None:
        """Substitutions bash would run inside a string (a subscript, a startup variable's value).

        tree-sitter cannot read some subscripts inside substitutions (``$( ( a[$(cmd)] ) )``); then the
        brackets go (they hold no command) and it tries again. Unreadable either way: opaque code."""
        before = len(self.segments)
        for attempt in (script, script.replace("[", " ").replace("]", " ")):
            try:
                self.nested(seg, "expansion", Word(attempt), ctx)
            except ShellParseFailure:
                del self.segments[before:]
                continue
            return
        self.segments.append(dataclasses.replace(seg, code_exec="embedded",
                                                 opaque_reason="code in a string the parser cannot read"))

    def expand(self, seg: Segment, u: Unwrapped, ctx: Ctx) -> None:
        if u.keep_outer or u.code or u.writes or u.deletes:
            code = strongest(seg.code_exec, u.code, self.stdin_code(seg, u), code_kind(seg))
            self.segments.append(dataclasses.replace(seg, code_exec=code, extra_writes=u.writes,
                                                     deletes=u.deletes))
        cwd = moved(seg.cwd, u.cwd)
        for inner in u.inners:
            self.emit(dataclasses.replace(seg, words=inner, wrappers=(*seg.wrappers, u.wrapper),
                                          dynamic_args=seg.dynamic_args or u.dynamic,
                                          assignments=seg.assignments + u.assignments, cwd=cwd), ctx)
        run = dataclasses.replace(seg, cwd=cwd)
        names = _alias_names(seg.words) if u.wrapper == "alias" else []
        for i, script in enumerate(u.scripts):
            end = self.nested(run, u.wrapper, script, ctx, dynamic=u.dynamic)
            if i < len(names) and names[i]:
                self.define(names[i], run.cwd, end)
        for source in u.sources:
            self.nested(run, u.wrapper, source, ctx)
        if u.stdin_script:
            feed = _stdin(seg)
            if feed is not None and feed.mode == "read" and feed.target.startswith("<("):
                self.nested(run, u.wrapper, Word(feed.target, literal=False), ctx)  # sh < <(cmd)
            elif feed is not None and feed.mode != "read" and feed.literal:
                self.nested(run, u.wrapper, Word(feed.target), ctx)
            elif feed is None and seg.stdin_piped and ctx.piped_text is not None:
                self.nested(run, u.wrapper, Word(ctx.piped_text), ctx)

    def stdin_code(self, seg: Segment, u: Unwrapped) -> str:
        if not u.stdin_script:
            return ""
        feed = _stdin(seg)
        if feed is not None:
            return "" if feed.mode == "read" or feed.literal else "embedded"
        return "stdin" if seg.stdin_piped else ""

    def nested(self, seg: Segment, wrapper: str, script: Word, ctx: Ctx, *, dynamic: bool = False) -> str:
        """Parse ``script``, run by ``seg`` through ``wrapper``; the folder it ends in ("" unknown)."""
        if (dynamic or seg.dynamic_args or ctx.dynamic) and "{}" in script.text:
            script = Word(script.text, literal=False)  # find/parallel splice run-time names into the code
        if not script.literal:
            seen = self.produced.get(script.text) or self.produced.get(script.text.strip('"'))
            if seen is None:
                self.segments.append(dataclasses.replace(seg, code_exec="embedded"))
                if wrapper in _HERE:
                    self.cwd = ""
                return ""
            script = Word(seen)
        if ctx.nesting + 1 > MAX_SCRIPT_NESTING:
            msg = f"scripts nested more than {MAX_SCRIPT_NESTING} levels deep"
            raise fail(msg)
        outer = tuple(r for r in seg.redirects if r.mode not in ("heredoc", "herestring"))
        inner = Ctx(context=(*seg.context, "script"), redirects=outer, wrappers=(*seg.wrappers, wrapper),
                    functions=seg.functions, stdin_piped=seg.stdin_piped, nesting=ctx.nesting + 1,
                    dynamic=dynamic or ctx.dynamic)
        saved = self.cwd
        self.cwd = seg.cwd  # a wrapper may run it elsewhere (env -C DIR sh -c ...)
        try:
            self.script(script.text, inner)
            return self.cwd
        finally:
            if wrapper not in _HERE:  # eval and source run it in this shell: its cd holds after
                self.cwd = saved


def _stdin(seg: Segment) -> Redirect | None:
    """The redirect that feeds the command's input: the last here-document, here-string or ``<``."""
    return next((r for r in reversed(seg.redirects) if r.mode in ("heredoc", "herestring")
                 or (r.mode == "read" and r.fd in ("", "0"))), None)


def _in_shell(words: tuple[Word, ...]) -> tuple[Word, ...]:
    """``words`` without leading ``builtin``/``command`` (which run the builtin in this shell);
    nothing for ``command -v``/``-V`` (a lookup)."""
    i = 0
    while i < len(words) and words[i].text in _IN_SHELL:
        prog, i = words[i].text, i + 1
        while i < len(words) and words[i].text.startswith("-") and words[i].text != "-":
            if prog == "command" and {"v", "V"} & set(words[i].text[1:]):
                return ()
            i += 1
            if words[i - 1].text == "--":
                break
    return words[i:]


def _alias_names(words: tuple[Word, ...]) -> list[str]:
    """The names of ``alias`` operands, in the order special.alias gives their bodies ("" unknown)."""
    names = []
    for word in words[1:]:
        name, eq, _body = word.text.partition("=")
        if eq:
            names.append(name if word.literal else "")
        elif not word.literal:
            names.append("")
    return names


def moved(cwd: str, move: str | None) -> str:
    """The folder a wrapped command starts in: ``move`` (absolute, or relative to ``cwd``), or ``cwd``."""
    if move is None:
        return cwd
    if not move or move.startswith("~") or (not move.startswith("/") and not cwd):
        return ""
    return posixpath.normpath(posixpath.join(cwd, move))
