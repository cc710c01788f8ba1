"""Policy: decide allow | confirm | deny for a command, strictest wins, failing closed."""

from __future__ import annotations

import json
import time
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from canal.policy.cel.celenv import (
    Compiled,
    EvalFailure,
    activation,
    compile_combined,
    evaluate,
    evaluate_many,
)
from canal.policy.cel.fastcel import run
from canal.policy.cel.fastops import plain
from canal.policy.decision import STRICTNESS, Action, Decision, Source
from canal.policy.facts import DEFAULT_SESSION, Session, segment_facts
from canal.policy.gitplace import repositories
from canal.policy.outside import WORKSPACE
from canal.policy.readonly import command_read_only
from canal.policy.shell import PARSER_VERSION, Segment, parse
from canal.policy.shell.model import MAX_ARG_CHARS, MAX_ARGV, MAX_COMMAND_CHARS, Word
from canal.policy.shell.parser import expand_argv
from canal.policy.shell.syntax import SyntaxChecker, bash_n
from canal.policy.targets import segment_targets
from canal.policy.toolcalls import ToolCall

CACHE_SIZE = 4096
COMBINED_CACHE_SIZE = 512


@dataclass(frozen=True)
class CompiledRule:
    id: str
    decision: Action
    compiled: Compiled
    programs: tuple[str, ...]
    when: tuple[str, ...]
    scope: str
    message: str
    file: str


@dataclass(frozen=True)
class SegmentReport:
    """One segment's facts and what each rule said about it (for `canal policy explain`)."""

    facts: dict[str, Any]
    matched: tuple[str, ...]
    errors: tuple[str, ...]
    action: Action


@dataclass
class _Outcome:
    action: Action = "allow"
    source: Source = "no_match"
    rule_ids: list[str] = field(default_factory=list)
    reasons: list[str] = field(default_factory=list)
    segment: str = ""


# command, cwd, workspace, unattended, the session's changed variables
_CacheKey = tuple[str, str, str, bool, tuple[tuple[str, str], ...]]


class Policy:
    def __init__(self, name: str, default: Action, rules: Sequence[CompiledRule], policy_hash: str,
                 checker: SyntaxChecker = bash_n, *, confirmations: str = "ask") -> None:
        self.name = name
        self.confirmations = confirmations
        self.default: Action = default
        self.rules = tuple(rules)
        self.hash = policy_hash
        self.checker = checker
        self.cache_enabled = True
        self.fast_eval = True  # translated closures (policy.cel.fastcel) where they can vouch for the result
        self._cache: OrderedDict[_CacheKey, Decision] = OrderedDict()
        self._combined: OrderedDict[tuple[str, ...], Compiled] = OrderedDict()
        self._index: dict[str, list[CompiledRule]] = {}
        self._generic: list[CompiledRule] = []
        for rule in self.rules:
            if rule.scope != "segment":
                continue
            if rule.programs:
                for key in rule.programs:
                    self._index.setdefault(key, []).append(rule)
            else:
                self._generic.append(rule)

    # --- public API -------------------------------------------------------------------------------
    def decide(self, command: str, *, cwd: str = WORKSPACE, unattended: bool = False,
               context: Mapping[str, Any] | None = None, env: Mapping[str, str] | None = None,
               workspace: str = WORKSPACE) -> Decision:
        """``cwd`` and ``env``: the session's real working directory and the exported variables it changed
        (name -> value; values matter for PATH only), so the decision is about what will really run;
        ``workspace``: where the sandbox mounts the workspace (canal.yaml's ``sandbox.workdir``)."""
        if len(command) > MAX_COMMAND_CHARS:  # refused before any work whose cost grows with the text
            return self._final(_Outcome("deny", "parse_failure", [], [
                f"the command is {len(command)} characters long; the limit is {MAX_COMMAND_CHARS}"],
                command[:200]), (), 0, unattended, time.monotonic())
        session = Session(cwd=cwd, env=dict(env or {}), workspace=workspace)
        key = (command, cwd, workspace, unattended, tuple(sorted(session.env.items())))
        if self.cache_enabled and context is None and key in self._cache:
            self._cache.move_to_end(key)
            return self._cache[key]
        start = time.monotonic()
        parsed = parse(command, cwd=cwd, checker=self.checker)
        if not parsed.ok:
            decision = self._final(_Outcome("deny", "parse_failure", [], [
                f"the command could not be parsed safely ({parsed.failure}); rewrite it in plain shell "
                "syntax"], command), (), 0, unattended, start)
        else:
            decision = self._decide_segments(command, parsed.segments, unattended, context, start, session)
        if self.cache_enabled and context is None:
            self._cache[key] = decision
            if len(self._cache) > CACHE_SIZE:
                self._cache.popitem(last=False)
        return decision

    def decide_argv(self, argv: Sequence[str], *, cwd: str = WORKSPACE, unattended: bool = False,
                    context: Mapping[str, Any] | None = None,
                    env: Mapping[str, str] | None = None, workspace: str = WORKSPACE) -> Decision:
        """Decide an exact argv run without a shell: facts come from the argv; wrappers still unwrap."""
        start = time.monotonic()
        text = " ".join(argv)
        if not argv or len(argv) > MAX_ARGV or any(len(a) > MAX_ARG_CHARS or "\x00" in a for a in argv):
            return self._final(_Outcome("deny", "parse_failure", [], [
                "the argv is empty, too long or holds a NUL byte"], text), (), 0, unattended, start)
        parsed = expand_argv(tuple(Word(a) for a in argv), cwd=cwd, checker=self.checker)
        if not parsed.ok:
            return self._final(_Outcome("deny", "parse_failure", [], [
                f"an inner script could not be parsed safely ({parsed.failure})"], text), (), 0, unattended,
                start)
        return self._decide_segments(text, parsed.segments, unattended, context, start,
                                     Session(cwd=cwd, env=dict(env or {}), workspace=workspace))

    def explain(self, command: str, *, cwd: str = WORKSPACE, unattended: bool = False,
                context: Mapping[str, Any] | None = None, env: Mapping[str, str] | None = None,
                workspace: str = WORKSPACE) -> tuple[Decision, list[SegmentReport]]:
        if len(command) > MAX_COMMAND_CHARS:
            return self.decide(command, cwd=cwd, unattended=unattended, workspace=workspace), []
        parsed = parse(command, cwd=cwd, checker=self.checker)
        decision = self.decide(command, cwd=cwd, unattended=unattended, context=context or {}, env=env,
                               workspace=workspace)
        if not parsed.ok:
            return decision, []
        session = Session(cwd=cwd, env=dict(env or {}), workspace=workspace)
        all_facts = [segment_facts(seg, session) for seg in parsed.segments]
        cmd, ctx = self._command_facts(command, all_facts, unattended, context)
        reports = []
        for facts in all_facts:
            matched, errors = self._evaluate(self._candidates(facts), facts, cmd, ctx)
            action = self.default if not matched else max((r.decision for r in matched),
                                                          key=STRICTNESS.__getitem__)
            reports.append(SegmentReport(facts, tuple(r.id for r in matched), tuple(errors),
                                         "deny" if errors else action))
        return decision, reports

    def decide_tool(self, call: ToolCall, *, unattended: bool = False) -> Decision:
        """Decide a call to an MCP backend's tool: the ``scope: tool`` rules over its facts
        (``canal.policy.toolcalls``), strictest wins; none matching gives the profile's default."""
        start = time.monotonic()
        out = _Outcome(action="allow", source="no_match")
        matched, errors = self.tool_matches(call, unattended=unattended)
        self._merge(out, call.text, matched, errors)
        return self._final(out, (), 1, unattended, start, read_only=call.read_only)

    def tool_matches(self, call: ToolCall, *,
                     unattended: bool = False) -> tuple[list[CompiledRule], list[str]]:
        rules = [r for r in self.rules if r.scope == "tool"]
        return self._interpret(rules, call.facts(unattended=unattended)) if rules else ([], [])

    def clear_cache(self) -> None:
        self._cache.clear()

    # --- evaluation -------------------------------------------------------------------------------
    def _command_facts(self, text: str, facts: Sequence[Mapping[str, Any]], unattended: bool,
                       context: Mapping[str, Any] | None) -> tuple[dict[str, Any], dict[str, Any]]:
        ctx = {"profile": self.name, "unattended": unattended, "network": "", "mounts": [],
               "workflow": "", "step": ""}
        ctx.update({k: v for k, v in (context or {}).items() if k in ctx})
        programs = [f["program"] for f in facts]
        return {"text": text, "count": len(facts), "programs": programs}, ctx

    def _candidates(self, facts: Mapping[str, Any]) -> list[CompiledRule]:
        program = facts["program"]
        found = list(self._index.get(program, ()))
        if facts["subcommand"]:
            found += self._index.get(f"{program} {facts['subcommand']}", ())
        found += self._generic
        return [r for r in found if all(facts[w] for w in r.when)]

    def _evaluate(self, rules: Sequence[CompiledRule], facts: Mapping[str, Any], cmd: Mapping[str, Any],
                  ctx: Mapping[str, Any]) -> tuple[list[CompiledRule], list[str]]:
        if not rules:
            return [], []
        facts_all = {**facts, "command": cmd, "ctx": ctx}
        if not self.fast_eval or not plain(facts_all):  # e.g. a float or an object in the context
            return self._interpret(rules, facts_all)
        fast = [run(r.compiled.fast, facts_all) if r.compiled.fast is not None else None for r in rules]
        slow = [r for r, hit in zip(rules, fast, strict=True) if hit is None]
        matched, errors = self._interpret(slow, facts_all) if slow else ([], [])
        slow_hits = {r.id for r in matched}
        return [r for r, hit in zip(rules, fast, strict=True) if hit or r.id in slow_hits], errors

    def _interpret(self, rules: Sequence[CompiledRule],
                   facts_all: Mapping[str, Any]) -> tuple[list[CompiledRule], list[str]]:
        """cel-python's interpreter: the authority for rules outside the fast path and for errors."""
        if len(rules) > 1:
            combined = self._combined_for(rules)
            try:
                results = evaluate_many(combined, activation(facts_all, combined.names), len(rules))
                return [r for r, hit in zip(rules, results, strict=True) if hit], []
            except EvalFailure:
                pass  # evaluate one by one to name the failing rule
        matched: list[CompiledRule] = []
        errors: list[str] = []
        for rule in rules:
            try:
                if evaluate(rule.compiled, activation(facts_all, rule.compiled.names)):
                    matched.append(rule)
            except EvalFailure as exc:
                errors.append(f"rule {rule.id} failed to evaluate ({exc})")
        return matched, errors

    def _combined_for(self, rules: Sequence[CompiledRule]) -> Compiled:
        key = tuple(r.id for r in rules)
        found = self._combined.get(key)
        if found is None:
            found = compile_combined([r.compiled for r in rules])
            self._combined[key] = found
            if len(self._combined) > COMBINED_CACHE_SIZE:
                self._combined.popitem(last=False)
        return found

    def _decide_segments(self, text: str, segments: Sequence[Segment], unattended: bool,
                         context: Mapping[str, Any] | None, start: float,
                         session: Session = DEFAULT_SESSION) -> Decision:
        if not segments:
            return self._final(_Outcome("allow", "empty", [], ["nothing to run"], text), (), 0,
                               unattended, start)
        all_facts = [segment_facts(seg, session) for seg in segments]
        cmd, ctx = self._command_facts(text, all_facts, unattended, context)
        out = _Outcome(action="allow", source="no_match")
        targets: list[str] = []
        for seg, facts in zip(segments, all_facts, strict=True):
            targets += [t for t in segment_targets(seg) if t not in targets]
            matched, errors = self._evaluate(self._candidates(facts), facts, cmd, ctx)
            self._merge(out, seg.text, matched, errors)
        cmd_rules = [r for r in self.rules if r.scope == "command" or (r.scope == "step" and ctx["step"])]
        if cmd_rules:
            matched, errors = self._evaluate(cmd_rules, {}, cmd, ctx)
            self._merge(out, text, matched, errors)
        return self._final(out, tuple(targets), len(segments), unattended, start,
                           read_only=command_read_only(segments, all_facts),
                           opaque=any(bool(f["opaque"] or f["substitution"] or s.code_exec or s.dynamic_args)
                                      for s, f in zip(segments, all_facts, strict=True)),
                           git=repositories(segments, session.env))

    def _merge(self, out: _Outcome, seg_text: str, matched: list[CompiledRule], errors: list[str]) -> None:
        if errors:
            if out.source != "eval_error" or out.action != "deny":
                out.segment = seg_text
            out.action, out.source = "deny", "eval_error"
            out.reasons += errors
            return
        if not matched:
            if STRICTNESS[self.default] > STRICTNESS[out.action]:
                out.action, out.source, out.segment = self.default, "no_match", seg_text
                out.reasons.append(f"no {self.name} rule allows `{seg_text[:80]}` (default: {self.default})")
            return
        best = max((r.decision for r in matched), key=STRICTNESS.__getitem__)
        for rule in matched:
            if rule.decision != "allow" and rule.id not in out.rule_ids:
                out.rule_ids.append(rule.id)
                out.reasons.append(f"{rule.id}: {rule.message or rule.id}")
        if out.source == "eval_error":
            return
        if STRICTNESS[best] > STRICTNESS[out.action] or (out.source == "no_match" and best == out.action):
            out.action, out.source, out.segment = best, "rule", seg_text
            if best == "allow":
                out.rule_ids += [r.id for r in matched if r.id not in out.rule_ids]

    def _final(self, out: _Outcome, targets: tuple[str, ...], count: int, unattended: bool,
               start: float, *, read_only: bool = False, opaque: bool = False,
               git: tuple[tuple[str, ...], tuple[str, ...]] = ((), ())) -> Decision:
        action, source, reasons = out.action, out.source, list(out.reasons)
        if self.confirmations == "none" and action == "confirm":
            action = "allow"
            reasons.append(f"{self.name} profile: runs without confirmation (the workspace is a fork)")
        if unattended and action == "confirm":
            action, source = "deny", "unattended"
            reasons.append("unattended run: a command that needs confirmation is denied")
        return Decision(action=action, rule_ids=tuple(out.rule_ids), reasons=tuple(reasons),
                        segment=out.segment, policy_hash=self.hash, source=source, targets=targets,
                        git_starts=git[0], git_dirs=git[1],
                        profile=self.name, segments=count, parser_version=PARSER_VERSION,
                        elapsed_ms=round((time.monotonic() - start) * 1000, 3),
                        read_only=read_only and action != "deny", opaque=opaque)


def canonical(data: Any) -> str:
    return json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=False)

