"""Next actions are data below the front ends, and each front end words every kind in its own way."""

from __future__ import annotations

import ast
import re
from pathlib import Path
from typing import get_args

import pytest

from canal.cli.words import error_text as cli_error
from canal.cli.words import say as cli_say
from canal.core.errors import CanalError
from canal.core.next import Kind, NextAction, act, say_all
from canal.mcp.words import OPERATOR, Words
from canal.mcp.words import error_text as mcp_error

ROOT = Path(__file__).resolve().parents[2] / "canal"
SAMPLE = {"run_id": "wr_1", "token": "c_1", "name": "deploy", "path": "src/app.py", "trash_id": "t1",
          "checkpoint": "cp-3", "command": "rm -rf build", "file": "rules.yaml", "key_id": "k-1",
          "sandbox": "default", "approval": "agent", "id": "check", "type": "automated"}
# A CLI command line for a next action: what must never be written below the front ends.
CLI_TEXT = re.compile(r"\bcanal (run|task|port-forward|view|edit|write|rm|restore|trash|workflow|tool|image|"
                      r"policy|discover|egress|key|audit|state|config|approve|undo|checkpoints|diff|fork|changes|apply|"
                      r"discard|up|down|ps|gc|doctor|mcp|help|server)\b")
# Everything below the front ends (the CLI and MCP packages, and the command table they share), and
# the files Canal writes for people to read (a canal.yaml template, the tool index).
FRONT_ENDS = ("cli/", "mcp/", "console/", "runtime/run/commands.py", "error_catalog.py")
ON_DISK_FOR_PEOPLE = ("workflows/tools/discover.py", "workflows/tools/index.py",
                      "runtime/settings/scaffold.py")


@pytest.mark.parametrize("kind", get_args(Kind))
def test_every_front_end_words_every_kind(kind: Kind) -> None:
    action = NextAction(kind, SAMPLE)
    cli = cli_say(action)
    assert cli, kind
    assert cli.startswith("canal ") or kind in ("retry",), cli
    mcp = Words("run_command")(action)
    assert mcp, kind
    if kind in OPERATOR:
        assert mcp.startswith("ask the user to run `canal "), mcp
    else:
        assert mcp.startswith("call "), mcp


def test_a_workflow_step_reads_as_a_command_in_the_cli_and_a_tool_call_in_mcp() -> None:
    advance = act("workflow.advance", run_id="wr_1", gate={"directory": "<string>"})
    assert cli_say(advance) == "canal workflow advance wr_1 --gate-data '{\"directory\": \"<string>\"}'"
    assert Words("workflow")(advance) == (
        'call workflow {"action": "advance", "run_id": "wr_1", "gate_data": {"directory": "<string>"}}')


def test_an_error_is_worded_by_the_front_end_that_shows_it() -> None:
    exc = CanalError("step x is not done", hint="fix the files", next=act("workflow.validate", name="w"))
    assert cli_error(exc, redact=str).endswith("Next: fix the files, then run: canal workflow validate w")
    assert mcp_error(exc, redact=str).endswith(
        "Next: fix the files, then: ask the user to run `canal workflow validate w` in a terminal")


def test_confirmation_names_the_token_and_who_gives_it() -> None:
    agent = act("confirm", token="c_1", approval="agent", command="rm -rf build", sandbox="default")
    assert say_all([agent], cli_say, lead="ask the user") == (
        "ask the user, then run: canal run --confirm c_1 -- rm -rf build")
    assert Words("run_command")(agent) == (
        'call run_command again with the same arguments, adding confirm_token "c_1"')
    human = act("confirm", token="c_2", approval="human", secret=True)
    assert "canal approve c_2" in cli_say(human)
    assert "<the same command>" in cli_say(human)  # a command holding a secret is not repeated
    assert "canal approve c_2 --for" in (Words("run_command")(human) or "")


def _literals(path: Path) -> list[str]:
    """Every string constant of a module, docstrings and error codes' summaries (for docs/errors.md,
    ``register(Family, CODE, summary)``) left out."""
    tree = ast.parse(path.read_text())
    docs = {id(node.body[0].value) for node in ast.walk(tree)
            if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef)
            and node.body and isinstance(node.body[0], ast.Expr)
            and isinstance(node.body[0].value, ast.Constant)}
    docs |= {id(node.args[2]) for node in ast.walk(tree)
             if isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
             and node.func.id in ("register", "register_code") and len(node.args) >= 3}
    return [n.value for n in ast.walk(tree)
            if isinstance(n, ast.Constant) and isinstance(n.value, str) and id(n) not in docs]


def test_no_cli_command_line_is_written_below_the_front_ends() -> None:
    found = []
    for path in sorted(ROOT.rglob("*.py")):
        rel = path.relative_to(ROOT).as_posix()
        if rel.startswith(FRONT_ENDS) or rel in ON_DISK_FOR_PEOPLE:
            continue
        found += [f"{rel}: {text!r}" for text in _literals(path) if CLI_TEXT.search(text)]
    assert found == [], "return next actions (canal.core.next) instead:\n" + "\n".join(found)
