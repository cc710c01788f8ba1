"""Issue 39: a request's environment is decided as the same variables typed before the command
(tests/data/corpus/request-env.yaml), under strict and standard: never looser, never read-only when
the typed form is not. The dangerous part of each case is only in the environment."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from canal.policy.decision import Decision
from canal.policy.engine import Policy
from canal.policy.loader import load_policy
from canal.runtime.run.typed import as_typed

CASES: list[dict[str, Any]] = yaml.safe_load(
    (Path(__file__).parents[2] / "data" / "corpus" / "request-env.yaml").read_text())
SEVERITY = {"allow": 0, "confirm": 1, "deny": 2}


@pytest.fixture(scope="module", params=["strict", "standard"])
def policy(request: pytest.FixtureRequest) -> Policy:
    return load_policy(str(request.param))


def _decide(policy: Policy, command: str | list[str]) -> Decision:
    return policy.decide(command) if isinstance(command, str) else policy.decide_argv(command)


@pytest.mark.parametrize("case", CASES, ids=[c["id"] for c in CASES])
def test_a_requests_env_is_decided_as_typed(policy: Policy, case: dict[str, Any]) -> None:
    command = case.get("argv") or case["command"]
    typed = policy.decide(case["typed"])
    got = _decide(policy, list(as_typed(command, case["env"])) if isinstance(command, list)
                  else str(as_typed(command, case["env"])))
    assert SEVERITY[got.action] >= SEVERITY[typed.action], (got, typed)
    assert got.read_only <= typed.read_only, (got, typed)
    bare = _decide(policy, command)
    if case["family"] != "harmless-variable":  # the environment is the whole difference
        assert (got.action, got.read_only) != (bare.action, bare.read_only) or not bare.read_only


def test_only_execution_relevant_variables_are_written_out() -> None:
    assert as_typed(["ls"], {"LANG": "C", "TERM": "dumb"}) == ["ls"]
    assert as_typed("ls", None) == "ls"
    assert as_typed(["git", "diff"], {"GIT_PAGER": "a b", "LANG": "C"}) == [
        "env", "--", "GIT_PAGER=a b", "git", "diff"]
    assert as_typed("git log | head", {"PAGER": "x'y"}) == "export PAGER='x'\"'\"'y'; git log | head"


def test_an_argv_that_looks_like_an_assignment_stays_the_program() -> None:
    """``env --`` then the variables: a first word holding ``=`` would be taken as one more variable
    by ``env``, so the argv form must not depend on it; the decision is at least the bare command's."""
    strict = load_policy("strict")
    bare = strict.decide_argv(["./FOO=x"])
    typed = strict.decide_argv(list(as_typed(["./FOO=x"], {"PAGER": "cat"})))
    assert SEVERITY[typed.action] >= SEVERITY[bare.action]
