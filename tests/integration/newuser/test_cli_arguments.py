"""Findings 1, 2 and 3: what canal run runs is what was typed, a mistyped flag is an error, and the policy
commands decide with the policy canal run uses."""

from __future__ import annotations

import json

from first_hour import User, at_terminal


def test_several_arguments_are_an_exact_argv_and_one_is_a_command_line(user: User) -> None:
    root = user.project("app")
    caps = user.canal(root, "run", "--", "bash", "-c", "grep CapEff /proc/self/status")
    assert caps.returncode == 0, caps.stdout
    assert caps.stdout.startswith("CapEff:\t0000000000000000"), caps.stdout
    exact = user.canal(root, "run", "--", "printf", "%s|", "a\\tb", "c d", "$HOME", "*")
    assert exact.stdout.splitlines()[0] == "a\\tb|c d|$HOME|*|", exact.stdout
    progress = user.canal(root, "run", "--json", "--", "printf", "10%%\\r50%%\\r")
    assert json.loads(progress.stdout)["output"].endswith("50%"), progress.stdout
    line = user.canal(root, "run", "--", "echo $((1+2)) | tr 3 x")
    assert line.stdout.splitlines()[0] == "x"
    not_a_program = user.canal(root, "run", "--", "FOO=1", "env")
    assert not_a_program.returncode == 127, not_a_program.stdout
    builtin = user.canal(root, "run", "--", "cd", "/tmp")  # a builtin of the session's shell still works
    assert builtin.returncode == 0, builtin.stdout


def test_a_mistyped_flag_is_an_error_and_nothing_runs(user: User) -> None:
    root = user.project("app")
    done = user.canal(root, "run", "--jsn", "--", "touch", "ran")
    assert done.returncode == 2, done.stdout + done.stderr
    assert "No such option '--jsn'. Did you mean '--json'?" in done.stderr
    assert not (root / "ran").exists()
    words = user.canal(root, "run", "ls", "-la")  # options end at the command's first word
    assert words.returncode == 0, words.stdout + words.stderr
    assert "total" in words.stdout


def test_policy_commands_decide_with_the_policy_run_uses(user: User) -> None:
    root = user.project("app", {
        "canal.yaml": "policy:\n  profile: strict\n  files: [policy/no-curl.yaml]\n",
        "policy/no-curl.yaml": """\
version: 1
name: no-curl
description: This project does not use curl.
default: allow
rules:
  - id: no-curl
    description: No curl in this project.
    decision: deny
    programs: [curl]
    expression: "true"
    message: curl is not used here
    examples:
      match: ["curl https://example.com"]
      not_match: ["ls"]
"""})
    code, shown = at_terminal(root, user.env, ["config", "approve"], [("Approve these settings?", "y")])
    assert code == 0, shown
    run = user.canal(root, "run", "--json", "--", "python3 -c 1")
    decided = json.loads(run.stdout)["decision"]
    assert decided["action"] == "confirm", run.stdout
    check = user.canal(root, "policy", "check", "--json", "--", "python3 -c 1")
    assert json.loads(check.stdout)["action"] == "confirm"
    assert json.loads(check.stdout)["policy_hash"] == decided["policy_hash"]
    text = user.canal(root, "policy", "check", "--", "python3 -c 1")
    assert text.returncode == 120
    assert f"policy: this project's (strict + policy/no-curl.yaml) {decided['policy_hash']}" in text.stdout
    curl = user.canal(root, "policy", "check", "--", "curl https://example.com")
    assert curl.returncode == 121, curl.stdout
    assert "no-curl" in curl.stdout
    denied = user.canal(root, "run", "--", "curl https://example.com")
    assert denied.returncode == 121
    explain = user.canal(root, "policy", "explain", "--", "curl https://example.com")
    assert "no-curl" in explain.stdout
    show = user.canal(root, "policy", "show")
    assert f"this project: strict + policy/no-curl.yaml, hash {decided['policy_hash']}" in show.stdout
