"""Issue 32, finding 2: every hint is something the reader of that front end can do as written."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from canal.cli.words import say as cli_say
from canal.core.next import say_all
from canal.mcp.words import Words
from canal.presenter import PresenterConfig, present
from canal.runtime.run.hints import failure_hints, soft_deletes
from canal.sandbox.result import CapturedOutput, ExecResult


def _result(stdout: bytes, stderr: bytes, code: int) -> ExecResult:
    return ExecResult(CapturedOutput.of(stdout), CapturedOutput.of(stderr), code, 0.5)


def _seq(n: int) -> bytes:
    return "".join(f"line {i}\n" for i in range(1, n + 1)).encode()


def test_overflow_hints_are_cli_commands(tmp_path: Path) -> None:
    p = present(_result(_seq(1000), b"", 0), config=PresenterConfig(), output_dir=tmp_path, say=cli_say)
    note = p.text.splitlines()[-2]
    assert "Next: canal run -- 'grep -n PATTERN /canal/output/" in note, note
    assert "or canal run -- 'sed -n '\"'\"'51,150p'\"'\"' /canal/output/" in note, note


def test_overflow_hints_are_mcp_tool_calls(tmp_path: Path) -> None:
    p = present(_result(_seq(1000), b"", 0), config=PresenterConfig(), output_dir=tmp_path,
                say=Words("run_command"))
    note = p.text.splitlines()[-2]
    assert 'Next: call run_command {"command": "grep -n PATTERN /canal/output/' in note, note


def test_binary_hints_are_cli_commands(tmp_path: Path) -> None:
    p = present(_result(b"\x89PNG\r\n\x1a\n" + bytes(200), b"", 0), config=PresenterConfig(),
                output_dir=tmp_path, say=cli_say)
    assert "[Next: canal run -- file /canal/output/" in p.text, p.text
    assert "or redirect it to a file in /workspace" in p.text


def test_a_recursive_delete_denied_suggests_the_soft_delete() -> None:
    actions = soft_deletes(("/workspace/build",), ("rm-recursive",), "/workspace")
    assert [cli_say(a) for a in actions] == ["canal rm -r build"]
    assert Words("run_command")(actions[0]) == 'call remove {"path": "build", "recursive": true}'
    assert soft_deletes(("/workspace/build/*",), ("rm-recursive",), "/workspace") == []
    assert soft_deletes(("/etc",), ("rm-recursive",), "/workspace") == []


def test_noexec_tmp_gets_a_hint() -> None:
    result = _result(b"", b"bash: line 1: /tmp/venv/bin/pip: Permission denied\n", 126)
    hints = failure_hints("/tmp/venv/bin/pip install x", result, cwd="/workspace", workdir="/workspace")
    assert len(hints) == 1
    said = say_all(hints[0].next, cli_say, lead=hints[0].text)
    assert said.startswith("/tmp is mounted noexec in the sandbox")
    assert "canal run -- python3 -m venv /workspace/.venv" in said
    elsewhere = _result(b"", b"bash: line 1: ./x: Permission denied\n", 126)
    assert failure_hints("./x", elsewhere, cwd="/workspace", workdir="/workspace") == []


def test_a_missing_tool_a_preset_has_gets_a_hint() -> None:
    result = _result(b"", b"bash: line 1: make: command not found\n", 127)
    hints = failure_hints("make test", result, cwd="/workspace", workdir="/workspace")
    assert len(hints) == 1
    assert "the image presets node, python have it" in hints[0].text
    assert "image: {preset: node} or image: {preset: python}" in hints[0].text
    assert say_all(hints[0].next, cli_say, lead=hints[0].text).endswith("then run: canal config approve")
    assert "ask the user to run `canal config approve`" in (Words("run_command")(hints[0].next[0]) or "")
    assert failure_hints("ls", _result(b"", b"ls: x: No such file\n", 2), cwd="/", workdir="/") == []
    dash = _result(b"", b"sh: 1: gcc: not found\n", 127)
    hints = failure_hints("gcc", dash, cwd="/", workdir="/")
    assert "the image presets node, python have it" in hints[0].text
    for stderr in (b"bash: line 1: grep -n line: command not found\n",
                   b"bash: line 1: mkae: command not found\n"):
        assert failure_hints("x", _result(b"", stderr, 127), cwd="/", workdir="/") == []


def test_egress_log_denied_on_an_allowlist_project_with_no_denials(tmp_path: Path) -> None:
    project = tmp_path / "proj"
    project.mkdir()
    (project / "canal.yaml").write_text("sandbox:\n  network:\n    mode: allowlist\n    allow: [pypi.org]\n")
    env = {**os.environ, "CANAL_STATE_DIR": str(tmp_path / "state"), "CANAL_CONFIG_DIR": str(tmp_path / "c")}
    argv = [sys.executable, "-m", "canal.cli", "egress", "log", "--denied"]
    done = subprocess.run(argv, cwd=project, env=env, capture_output=True, text=True, timeout=120,
                          check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "no denied attempts recorded (sandbox.network is an allowlist)"
    assert "CONFIG_UNAPPROVED" in done.stderr  # it still reads, and says what it could not read


def test_config_approve_without_a_terminal_in_a_new_project_says_what_is_true(tmp_path: Path) -> None:
    """Finding 4: no approvers are named, so the first settings need a person at a terminal; the
    message does not speak of approvers named in an approved canal.yaml."""
    project = tmp_path / "proj"
    project.mkdir()
    (project / "canal.yaml").write_text("sandbox:\n  network:\n    mode: allowlist\n    allow: [pypi.org]\n")
    env = {**os.environ, "CANAL_STATE_DIR": str(tmp_path / "state"), "CANAL_CONFIG_DIR": str(tmp_path / "c")}
    argv = [sys.executable, "-m", "canal.cli", "config", "approve", "--yes"]
    done = subprocess.run(argv, cwd=project, env=env, capture_output=True, text=True, timeout=120,
                          check=False, stdin=subprocess.DEVNULL)
    assert done.returncode != 0
    assert "approvers named in the approved canal.yaml" not in done.stderr, done.stderr
    assert "no approvers are named yet" in done.stderr, done.stderr
    assert "a person at a terminal" in done.stderr
