"""git runs programs its repository's configuration names. The sandbox-side override neutralises the
repositories it can read on the host before the command: the workspace's, and every repository inside
the workspace the policy can name (the folder each git command starts in, -C, --git-dir). What it
cannot cover the policy must: repositories elsewhere or named at run time, code-bearing configuration
written or selected by the command itself, and the GIT_* variables and options that bring code in.
Under strict none of these runs without a confirmation; under standard they are confirmed as the code
execution they are (or decided as the command they carry, when it is visible)."""

from __future__ import annotations

import pytest

from canal.policy import Policy

ELSEWHERE = [
    "cd /tmp/repo && git log",
    "cd /tmp/repo && git status",
    "git -C /tmp/repo status",
    "git -C \"$D\" status",
    "cd \"$D\" && git diff",
    "env -C /tmp/repo git show HEAD",
    "git --git-dir=/tmp/r/.git log",
    "git --work-tree=/workspace --git-dir=/tmp/r.git status",
    "cd ~ && git log",
    "git init /tmp/r && cd /tmp/r && git status",
    "ls /tmp | xargs -I{} git -C {} log",
    "for d in */; do git -C \"$d\" status; done",
]
CODE = [
    "git --exec-path=/tmp/ep status",
    "git init --template=/tmp/tpl /tmp/x",
    "git clone --templ=/tmp/tpl https://example.com/r.git",
    "git config --rename-section x filter.y",
    "git config rename-section x filter.y",
    "GIT_ALLOW_PROTOCOL=ext git clone 'ext::sh -c touch% /tmp/p' /tmp/x",
    "export GIT_ALLOW_PROTOCOL=ext",
    "git config alias.x \"!$CMD\" && git x",
    "git config filter.x.clean \"$(cat cmd.txt)\" && git add .",
    "printf '[filter \"x\"]\\n\\tclean = touch p\\n' >> .git/config; git add .",
    "printf '[core]\\n\\tfsmonitor = touch p\\n' >> sub/.git/config; cd sub && git status",
    "cp evil.cfg /tmp/r/.git/config && git -C /tmp/r status",
]
RUNS_VISIBLY = [  # the code git would run is in the text: decided as that command (rm -rf /: deny)
    "git config core.pager 'rm -rf /' && git log",
    "git config alias.x '!rm -rf /' && git x",
    "git clone -c core.fsmonitor='rm -rf /' https://example.com/r.git",
    "git clone --config=core.sshCommand='rm -rf /' git@example.com:r.git",
    "GIT_ASKPASS='rm -rf /' git fetch",
    "GIT_SSH='rm -rf /' git fetch",
    "SSH_ASKPASS='rm -rf /' git fetch",
    "GIT_PAGER='rm -rf /' git log",
    "GIT_EXTERNAL_DIFF='rm -rf /' git diff",
    "GIT_SSH_COMMAND='rm -rf /' git fetch",
    "env GIT_PAGER='rm -rf /' git log",
    "export GIT_EDITOR='rm -rf /'",
]
INSIDE = [  # the override scans these repositories before the command: nothing to confirm
    "git status",
    "cd sub && git status",
    "cd sub/deeper && git log -p -1",
    "git -C sub log",
    "git --git-dir=/workspace/.git log",
    "cd /tmp && git --version",
    "cd /tmp && git clone https://example.com/r.git",
    "git init /tmp/fresh",
    "git config user.name Me && git log",
]


@pytest.mark.parametrize("command", ELSEWHERE + CODE)
def test_git_code_the_override_cannot_cover_is_confirmed(standard: Policy, strict: Policy,
                                                         command: str) -> None:
    assert standard.decide(command).action != "allow", standard.decide(command).to_json()
    assert strict.decide(command).action != "allow", strict.decide(command).to_json()


@pytest.mark.parametrize("command", RUNS_VISIBLY)
def test_git_code_written_in_the_command_is_decided_as_that_command(standard: Policy, strict: Policy,
                                                                  command: str) -> None:
    assert standard.decide(command).action == "deny", standard.decide(command).to_json()
    assert strict.decide(command).action == "deny"


@pytest.mark.parametrize("command", INSIDE)
def test_git_in_a_repository_the_override_scans_is_not_confirmed_for_it(standard: Policy,
                                                                         command: str) -> None:
    assert standard.decide(command).action == "allow", standard.decide(command).to_json()


def test_strict_allows_read_only_git_in_nested_repositories_the_override_scans(strict: Policy) -> None:
    assert strict.decide("cd sub && git status").action == "allow"
    assert strict.decide("cd sub && git log --oneline -3").action == "allow"


def test_the_decision_names_the_repositories_for_the_override(standard: Policy) -> None:
    decision = standard.decide("git status; cd sub && git log; git -C /workspace/a -C b diff; "
                               "git --git-dir=mods/x.git log; ls")
    assert decision.git_starts == ("/workspace", "/workspace/sub", "/workspace/a/b")
    assert decision.git_dirs == ("/workspace/sub/mods/x.git",)  # the cd holds for the rest of the line
    assert standard.decide("ls && make").git_starts == ()
    elsewhere = standard.decide("cd /tmp/r && git log", cwd="/workspace")
    assert elsewhere.git_starts == ("/tmp/r",)  # the host skips what is outside the workspace


@pytest.mark.parametrize(("env", "command"), [
    ({"GIT_DIR": "/tmp/r/.git"}, "git log"),  # exported earlier in the session
    ({"GIT_DIR": "$X"}, "git status"),
    ({}, "GIT_COMMON_DIR=/tmp/r/.git git status"),
    ({}, "cd /tmp/r && git help -w log"),  # help reads the repository's browser and man commands
    ({}, "git -C /tmp/r log --help"),
])
def test_a_repository_the_session_or_git_variables_name_elsewhere_is_confirmed(
        standard: Policy, strict: Policy, env: dict[str, str], command: str) -> None:
    assert standard.decide(command, env=env).action != "allow"
    assert strict.decide(command, env=env).action != "allow"


def test_the_session_git_dir_inside_the_workspace_is_named_for_the_override(standard: Policy) -> None:
    decision = standard.decide("git log", env={"GIT_DIR": "mods/x.git"}, cwd="/workspace/sub")
    assert decision.git_dirs == ("/workspace/sub/mods/x.git",)
    assert decision.git_starts == ()
    assert standard.decide("GIT_DIR=/workspace/y.git git log", env={"GIT_DIR": "/tmp/x"}).git_dirs == (
        "/workspace/y.git",)  # the command's own assignment beats the session's
