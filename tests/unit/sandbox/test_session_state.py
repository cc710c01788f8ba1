"""The session state the agent reports and the host's copy agree on their digest; the fake keeps it."""

from __future__ import annotations

import importlib
from pathlib import Path

from canal.sandbox.fake import FakeBackend
from canal.sandbox.result import SessionState
from canal.sandbox.spec import SandboxSpec


def test_agent_and_host_compute_the_same_digest() -> None:
    agent = importlib.import_module("canal.sandbox.agent.main")
    for cwd, changed, path in [("/workspace", [], ""), ("/", ["PATH", "FOO"], "/x:/usr/bin"),
                               ("/w/ü", ["BASH_ENV"], "")]:
        assert agent.state_digest(cwd, changed, path) == SessionState(cwd, tuple(changed), path).digest()


def test_changed_variables_as_the_policy_takes_them() -> None:
    assert SessionState("/", ("PATH", "X"), "/p").env() == {"PATH": "/p", "X": ""}


def test_fake_reports_cwd_and_changed_variables_and_refuses_a_stale_decision() -> None:
    fake = FakeBackend()
    fake.create("canal-t", SandboxSpec(image="x"))
    before = fake.session_state("canal-t")
    assert before is not None
    assert before.cwd == "/workspace"
    fake.exec("canal-t", "cd sub")
    fake.exec("canal-t", "export PATH=/tmp")
    after = fake.session_state("canal-t")
    assert after == SessionState("/workspace/sub", ("PATH",), "/tmp")
    stale = fake.exec("canal-t", "echo hi", expect_state=before.digest())
    assert stale.exit_code == 126
    assert not [c for c in fake.calls if c.argv == ("echo", "hi")]
    assert fake.exec("canal-t", "echo hi", expect_state=after.digest()).exit_code == 0
    assert fake.session_state("canal-nope") is None


def test_a_run_request_with_the_same_variables_as_the_last_sends_them_once() -> None:
    import json

    from canal.sandbox.agent.main import Agent
    from canal.sandbox.docker.session import compact_env

    agent = Agent(init=False)
    guard = {"GIT_PAGER": "cat", "GIT_CONFIG_COUNT": "1"}
    sent: object = {}
    sequence = [("run", guard), ("run", guard), ("spawn_spec", None), ("run", guard), ("run", {}),
                ("run", guard), ("run", None), ("run", guard), ("run", {**guard, "X": "1"}), ("run", guard)]
    same = []
    for op, env in sequence:
        header: dict[str, object] = {"op": op, **({"env": env} if env is not None else {})}
        wire, sent = compact_env(header, sent)
        same.append("env_same" in wire)
        req = json.loads(json.dumps(wire))
        agent.take_env(req)
        assert req.get("env") == env or (env is None and req.get("env") is None)
    assert same == [False, True, False, True, False, False, False, False, False, False]


def test_the_agents_state_is_computed_again_only_when_the_folder_or_variables_change(tmp_path: Path) -> None:
    from canal.sandbox.agent.main import Agent, state_digest

    agent = Agent(init=False)
    agent.cwd = str(tmp_path)
    first = agent.state()
    assert agent.state() is first
    agent.env = {**agent.env, "NEW": "1"}  # what a command that exported NEW leaves (a new dict)
    second = agent.state()
    assert "NEW" in second["changed"]
    assert second["digest"] == state_digest(str(tmp_path), second["changed"], second["path"])
    (tmp_path / "sub").mkdir()
    agent.cwd = str(tmp_path / "sub")
    assert agent.state()["cwd"] == str(tmp_path / "sub")
    (tmp_path / "sub").rmdir()
    assert agent.state()["cwd"] == "/"  # the folder went
