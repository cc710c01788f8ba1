"""The fast path (policy.cel.fastcel) agrees with cel-python's interpreter everywhere it answers.

For every rule of both shipped profiles and of a generated 100-rule policy, over every segment of both
corpora and every inline example: when the fast path gives a boolean, the interpreter gives the same
boolean without error. Whole decisions with the fast path on and off are identical.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from canal.policy import Policy, build_policy, load_policy
from canal.policy.cel.celenv import (
    Compiled,
    EvalFailure,
    activation,
    compile_combined,
    compile_expression,
    evaluate,
    evaluate_many,
)
from canal.policy.cel.fastcel import run
from canal.policy.cel.fastops import plain
from canal.policy.engine import CompiledRule
from canal.policy.facts import segment_facts
from canal.policy.shell import parse

ROOT = Path(__file__).resolve().parents[3]
CORPUS = ROOT / "tests" / "data" / "corpus"
PROFILES = ROOT / "canal" / "policy" / "profiles"
PROGRAMS = ["ls", "cat", "git", "rm", "grep", "find", "sed", "curl", "python3", "npm", "make", "docker",
            "kubectl", "tar", "cp", "mv", "chmod", "echo", "head", "jq"]


def _commands() -> list[str]:
    adversarial = yaml.safe_load((CORPUS / "policy-adversarial.yaml").read_text())
    benign = yaml.safe_load((CORPUS / "policy-benign.yaml").read_text())
    cmds = [c["cmd"] for group in adversarial.values() for c in group] + [c["cmd"] for c in benign]
    findings = yaml.safe_load((CORPUS / "canal-findings.yaml").read_text())
    cmds += [c["cmd"] for group in findings.values() for c in group]
    for path in sorted(PROFILES.glob("*.yaml")):
        for rule in yaml.safe_load(path.read_text())["rules"]:
            examples = rule.get("examples", {})
            cmds += examples.get("match", []) + examples.get("not_match", [])
    return cmds


COMMANDS = _commands()


def _generated(tmp: Path, per_program: int) -> Policy:
    rules = []
    for i in range(100):
        program = PROGRAMS[i % len(PROGRAMS)] if i < per_program * len(PROGRAMS) else f"tool-{i:02d}"
        rules.append({
            "id": f"gen-{i:03d}", "decision": ["confirm", "deny"][i % 2], "programs": [program],
            "expression": f'"zz{i}" in long_flags || positionals.exists(p, p == "never-{i}")',
            "examples": {"match": [f"{program} --zz{i}"], "not_match": [f"{program} x"]},
        })
    path = tmp / f"gen{per_program}.yaml"
    path.write_text(yaml.safe_dump({"version": 1, "name": "gen100", "default": "allow", "rules": rules}))
    return build_policy([path])


@pytest.fixture(scope="module")
def policies(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Policy]:
    tmp = tmp_path_factory.mktemp("gen")
    return {"standard": load_policy("standard"), "strict": load_policy("strict"),
            "gen5": _generated(tmp, 5), "gen1": _generated(tmp, 1)}


def _activations(policy: Policy) -> Iterator[dict[str, Any]]:
    for cmd in COMMANDS:
        parsed = parse(cmd, cwd="/workspace", checker=policy.checker)
        if not parsed.ok:
            continue
        for unattended in (False, True):
            all_facts = [segment_facts(seg) for seg in parsed.segments]
            command, ctx = policy._command_facts(cmd, all_facts, unattended, None)
            for facts in all_facts:
                yield {**facts, "command": command, "ctx": ctx}
            yield {"command": command, "ctx": ctx}  # what command-scope rules see


def _interpreted(rule: CompiledRule, facts: dict[str, Any]) -> bool | str:
    try:
        return evaluate(rule.compiled, activation(facts, rule.compiled.names))
    except EvalFailure as exc:
        return f"error: {exc}"


_COMBINED: dict[tuple[str, ...], Compiled] = {}


def _interpreted_group(rules: list[CompiledRule], facts: dict[str, Any]) -> list[bool | str]:
    """The interpreter's answer per rule: one combined program (as the engine runs it), one by one
    when that fails, to name each rule's own error."""
    key = tuple(r.compiled.source for r in rules)
    combined = _COMBINED.get(key) or _COMBINED.setdefault(key, compile_combined([r.compiled for r in rules]))
    try:
        return list(evaluate_many(combined, activation(facts, combined.names), len(rules)))
    except EvalFailure:
        return [_interpreted(r, facts) for r in rules]


@pytest.mark.parametrize("name", ["standard", "strict", "gen5"])  # gen1 has gen5's expressions
def test_every_rule_on_every_segment_agrees(policies: dict[str, Policy], name: str) -> None:
    policy = policies[name]
    assert all(r.compiled.fast is not None for r in policy.rules), "a rule left the fast path"
    groups: dict[frozenset[str], list[CompiledRule]] = {}
    for rule in policy.rules:
        groups.setdefault(rule.compiled.names, []).append(rule)
    answered = fell_back = 0
    seen: set[str] = set()  # the facts a group reads: distinct evaluations only
    for facts in _activations(policy):
        for names, rules in groups.items():
            rules = [r for r in rules if r.scope != "segment" or "program" in facts]
            key = json.dumps([[r.id for r in rules], {k: facts.get(k) for k in sorted(names)}])
            if not rules or key in seen:
                continue
            seen.add(key)
            slow = _interpreted_group(rules, facts)
            for rule, want in zip(rules, slow, strict=True):
                fast = run(rule.compiled.fast, facts) if rule.compiled.fast else None
                answered, fell_back = answered + (fast is not None), fell_back + (fast is None)
                assert fast is None or fast is want, (rule.id, facts.get("text"), fast, want)
    assert answered > 10 * max(fell_back, 1), (answered, fell_back)


@pytest.mark.parametrize("name", ["standard", "strict", "gen5", "gen1"])
def test_decisions_identical_with_and_without_fast_path(policies: dict[str, Policy], name: str) -> None:
    policy = policies[name]
    policy.cache_enabled = False
    try:
        for cmd in COMMANDS:
            for unattended in (False, True):
                policy.fast_eval = True
                fast = policy.decide(cmd, unattended=unattended).to_json()
                policy.fast_eval = False
                slow = policy.decide(cmd, unattended=unattended).to_json()
                fast.pop("elapsed_ms")
                slow.pop("elapsed_ms")
                assert fast == slow, cmd
    finally:
        policy.fast_eval = True
        policy.cache_enabled = True


FACTS: dict[str, Any] = {"s": "abc", "n": 3, "b": True, "l": ["a", "b"], "e": [], "ints": [1, 2],
                         "m": {"k": "v"}, "mixed": ["a", 1], "none": None, "big": 2**62}

# Expressions whose evaluation errors, mixes types or returns a non-boolean, next to clean ones.
EDGE_CASES = [
    "s == 1", "s != 1", "1 in l", "'a' in mixed", "'x' in mixed", "none == 'a'", "l[5] == 'a'",
    "l[-1] == 'b'", "m.missing == 'v'", "m['missing'] == 'v'", "unknown", "s", "n", "!n", "-s > 0",
    "false && s", "s && false", "true || s", "s || true", "true && s", "false || s", "b ? s : n",
    "s ? true : false", "l.exists(x, x)", "l.exists(x, x == 'a')", "mixed.exists(x, x == 'a')",
    "mixed.all(x, x == 'a')", "l.exists_one(x, x == 'b')", "l.filter(x, x != 'a') == ['b']",
    "l.map(x, x + '!')[0] == 'a!'", "s.matches('(')", "s.matches('^a(b|c)')", "s.matches(n)",
    "big + big > 0", "big * 4 > 0", "n - 5 < 0", "-n == -3", "size(l) == 2", "l.size() == 2",
    "size(n) == 1", "s.size() == 3", "m.size() == 1", "s.startsWith('a')", "s.endsWith(1)",
    "s.contains('b')", "l.contains('a')", "l.join(',') == 'a,b'", "mixed.join(',') == 'a,1'",
    "join(l, '') == 'ab'", "split(s, '') == ['a']", "split(s, 'b') == ['a', 'c']",
    "lower('ABC') == 'abc'", "s.upperAscii() == 'ABC'", "trim(' a ') == 'a'", "basename('/x/y') == 'y'",
    "replace(s, 'b', 'x') == 'axc'", "'k' in m", "1 in m", "s < 'b'", "s < n", "b == true", "b == 1",
    "n == 3 && l == ['a', 'b']", "[1, 2] + [3] == [1, 2, 3]", "s + n == 'abc3'", "e.all(x, x == 1)",
    "e.exists(x, x)", "s.exists(x, x == 'a')", "m.exists(k, k == 'k')", "has(m.k)", "int(s) == 1",
    "1u == 1u", "3.0 > 1.0", "n / 0 == 1", "n % 2 == 1", "'\\x41' == 'A'", "r'\\d' == '\\\\d'",
    "'''a''' == 'a'", "0x10 == 16", "m.k == 'v'", "m['k'] == 'v'", "m.k.size() == 1",
    "-9223372036854775808 < 0", "size(l + l) == 4", "'c' in l + ['c']", "(l + ints).size() == 4",
    "s + s == 'abcabc'", "!(b && s.matches('z'))", "ints.exists(i, i > 1)",
]


@pytest.mark.parametrize("expression", EDGE_CASES)
def test_edge_cases_match_the_interpreter(expression: str) -> None:
    compiled = compile_expression(expression)
    fast = run(compiled.fast, FACTS) if compiled.fast is not None else None
    try:
        slow: bool | str = evaluate(compiled, activation(FACTS, compiled.names))
    except EvalFailure as exc:
        slow = f"error: {exc}"
    if fast is not None:
        assert fast is slow


def test_the_fast_path_answers_the_common_forms() -> None:
    answered = [e for e in EDGE_CASES
                if (c := compile_expression(e)).fast is not None and run(c.fast, FACTS) is not None]
    assert "s.matches('^a(b|c)')" in answered
    assert "l.exists(x, x == 'a')" in answered
    assert "false && s" not in answered  # an operand of the wrong type: the interpreter decides
    assert "l[-1] == 'b'" not in answered
    assert len(answered) >= 25


def test_plain_values_only() -> None:
    assert plain({"a": ["x", 1, True, None, {"b": []}]})
    for odd in (1.5, ("a",), 2**63, {1: "a"}, {"a": {"x"}}, object()):
        assert not plain({"a": odd}), odd


def test_odd_context_values_go_to_the_interpreter(policies: dict[str, Policy]) -> None:
    policy = policies["strict"]
    policy.cache_enabled = False
    try:
        got = []
        for fast in (True, False):
            policy.fast_eval = fast
            decision = policy.decide("cat README.md", context={"step": 1.5, "mounts": ("a",)}).to_json()
            decision.pop("elapsed_ms")
            got.append(decision)
        assert got[0] == got[1]
        assert got[0]["action"] == "allow"
    finally:
        policy.fast_eval = True
        policy.cache_enabled = True


def _literal_by_interpreter(text: str) -> Any:
    """A literal's value as cel-python's interpreter gives it: the text compiled and evaluated whole."""
    from celpy import celtypes

    from canal.policy.cel.celenv import environment

    env = environment()
    value = env.program(env.compile(text)).evaluate({})
    for cel_type, plain_type in ((celtypes.BoolType, bool), (celtypes.IntType, int),
                                 (celtypes.StringType, str)):
        if type(value) is cel_type:
            return plain_type(value)
    return None


def _literal_tokens(text: str) -> Iterator[Any]:
    from lark import Token

    from canal.policy.cel.celenv import environment

    for tree in environment().compile(text).iter_subtrees():
        if tree.data == "literal" and len(tree.children) == 1 and isinstance(tree.children[0], Token):
            yield tree.children[0]


EDGE_LITERALS = ['"plain"', "'single'", r'"esc \" \\ \n \t \x41 \u00e9 \U0001F600 \101"', r'r"raw \n \x41"',
                 r"R'raw'", '"""long "quoted" text"""', "'''long\nlines'''", r'r"""raw long \t"""', '""', "0",
                 "42", "-7", "0x1F", "true", "false", "9223372036854775807"]


def test_a_literal_token_is_read_as_the_interpreter_reads_its_text() -> None:
    """The fast path reads each literal from its token (no parse and evaluation of the literal alone,
    which was half of a policy's compile time): every literal of every shipped profile, and escapes,
    raw and long strings, ints and booleans, give the interpreter's value."""
    from canal.policy.cel.celenv import literal_value

    texts = list(EDGE_LITERALS)
    for path in sorted(PROFILES.glob("*.yaml")):
        texts += [rule["expression"] for rule in yaml.safe_load(path.read_text())["rules"]]
    checked = 0
    for text in texts:
        for token in _literal_tokens(text):
            if token.type in {"INT_LIT", "STRING_LIT", "MLSTRING_LIT", "BOOL_LIT"}:
                expected = _literal_by_interpreter(str(token))
                got = literal_value(token)
                assert (type(got), got) == (type(expected), expected), str(token)
                checked += 1
    assert checked > 250  # 284 when written: the three profiles and the edge cases
