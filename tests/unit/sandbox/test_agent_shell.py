"""The session shell's bash loop, driven on the host (no Docker, no agent, no sweep)."""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

import canal.sandbox.agent
from canal.sandbox.agent.shell import Shell, ShellRun, needed_overrides, run_mode
from canal.sandbox.agent.stateless import BASH_NAMES, inline, stateless
from canal.sandbox.docker.agent_program import AGENT_SOURCE


@pytest.fixture
def shell(tmp_path: Path) -> Iterator[Shell]:
    sh = Shell()
    sh.ensure({"PATH": os.environ["PATH"], "HOME": str(tmp_path), "KEEP": "k"}, str(tmp_path))
    yield sh
    sh.reap()


def run(shell: Shell, tmp_path: Path, command: str, *, workdir: str = "",
        env: dict[str, str] | None = None) -> tuple[int | None, bytes, bytes]:
    paths = [str(tmp_path / name) for name in ("in", "out", "err")]
    Path(paths[0]).write_bytes(b"")
    mode = run_mode(command, env or {}, workdir, shell.names(), True)  # as the agent decides
    token = shell.submit([*paths, workdir, command, mode, *(f"{k}={v}" for k, v in (env or {}).items())])
    step = ShellRun(shell, token, held=[])
    while step.on_ready():
        pass
    assert step.lost is None
    return step.status, Path(paths[1]).read_bytes(), Path(paths[2]).read_bytes()


def test_cwd_and_exports_persist_shell_locals_do_not(shell: Shell, tmp_path: Path) -> None:
    (tmp_path / "sub").mkdir()
    assert run(shell, tmp_path, "cd sub; export NEW=$'a\\nb'; LOCAL=1; exit 3")[0] == 3
    state = shell.take_state()
    assert state is not None
    assert state[0] == str(tmp_path / "sub")
    assert (state[1]["NEW"], state[1]["KEEP"], "LOCAL" in state[1]) == ("a\nb", "k", False)
    assert run(shell, tmp_path, 'echo "$PWD|$NEW|${LOCAL-}"') == (0, f"{tmp_path}/sub|a\nb|\n".encode(), b"")


def test_per_command_env_and_workdir_apply_once(shell: Shell, tmp_path: Path) -> None:
    once = {"KEEP": "x", "ONCE": "1"}
    status, out, _ = run(shell, tmp_path, "echo $KEEP $ONCE; pwd", workdir="/", env=once)
    assert (status, out) == (0, b"x 1\n/\n")
    assert run(shell, tmp_path, 'echo "$KEEP [${ONCE-}]"; pwd')[1] == f"k []\n{tmp_path}\n".encode()


def test_an_override_the_session_already_exports_is_not_sent() -> None:
    session = {"GIT_PAGER": "cat", "KEEP": "k", "BASH_ENV": "/x", "SHLVL": "1"}
    asked = {"GIT_PAGER": "cat", "KEEP": "other", "NEW": "1", "BASH_ENV": "/x", "SHLVL": "1"}
    # equal and exported: a no-op in the loop, dropped; the names the loop starts without or sets itself
    # always go through
    assert needed_overrides(asked, session) == {"KEEP": "other", "NEW": "1", "BASH_ENV": "/x", "SHLVL": "1"}


def test_a_dropped_override_behaves_as_a_sent_one(shell: Shell, tmp_path: Path) -> None:
    session = {"PATH": os.environ["PATH"], "HOME": str(tmp_path), "KEEP": "k"}
    asked = {"KEEP": "k"}
    for env in (asked, needed_overrides(asked, session)):  # sent, then dropped as redundant
        assert run(shell, tmp_path, "echo $KEEP; export KEEP=changed", env=env)[1] == b"k\n"
        assert shell.take_state() is not None
        assert run(shell, tmp_path, "echo $KEEP; export KEEP=k")[1] == b"changed\n"
        assert shell.take_state() is not None


def test_a_state_cut_short_is_ignored(shell: Shell) -> None:
    Path(shell.dir, "state").write_bytes(b"/tmp\0A=1\0")
    assert shell.take_state() is None
    assert not Path(shell.dir, "state").exists()


def test_the_agent_ships_as_its_package_and_needs_nothing_else_of_canal(tmp_path: Path) -> None:
    """The program the sandbox runs imports the agent package from what it carries, in an interpreter
    that sees no Canal install (``-I``, another folder): every module of the package (the background
    agent's, which a session's agent imports only in that mode, with it), nothing more."""
    package = Path(canal.sandbox.agent.__file__).parent
    expected = {"canal", "canal.sandbox", "canal.sandbox.agent"} | {
        f"canal.sandbox.agent.{p.stem}" for p in package.glob("*.py") if p.stem != "__init__"}
    entry = "canal.sandbox.agent.main.main()\n"
    assert AGENT_SOURCE.endswith(entry)
    probe = AGENT_SOURCE.removesuffix(entry) + (
        "import json, canal.sandbox.agent.main as m, canal.sandbox.agent.bg\n"
        "print(json.dumps([sorted(k for k in sys.modules if k.split('.')[0] == 'canal'),"
        " m.__spec__.origin is None, m.__file__]))\n")
    done = subprocess.run([sys.executable, "-I", "-c", probe], cwd=tmp_path, capture_output=True, text=True,
                          check=True, timeout=30)
    loaded, no_origin, where = json.loads(done.stdout)
    assert set(loaded) == expected
    assert no_origin  # served from memory, not from a file inside the sandbox
    assert where == "canal/sandbox/agent/main.py"


def test_a_sessions_agent_loads_no_module_it_does_not_use_to_start(tmp_path: Path) -> None:
    """A session's start pays for every module its agent imports (tests/unit/sandbox/test_agent_program):
    typing (annotations only), secrets (a random token) and hashlib (OpenSSL, for one SHA-256) cost about
    6 ms of a 70-80 ms start in the sandbox."""
    entry = "canal.sandbox.agent.main.main()\n"
    probe = AGENT_SOURCE.removesuffix(entry) + (
        "import canal.sandbox.agent.main as m\n"
        "m.state_digest('/', ['A'], '/usr/bin')\n"
        "print(repr(sorted(sys.modules)))\n")
    done = subprocess.run([sys.executable, "-I", "-S", "-c", probe], cwd=tmp_path, capture_output=True,
                          text=True, check=True, timeout=30)
    loaded = set(ast.literal_eval(done.stdout))
    assert loaded & {"typing", "secrets", "hashlib", "_hashlib"} == set()


def test_a_shell_that_waits_for_input_it_never_got_is_stuck(shell: Shell, tmp_path: Path) -> None:
    paths = [str(tmp_path / name) for name in ("in", "out", "err")]
    Path(paths[0]).write_bytes(b"")
    busy = ShellRun(shell, shell.submit([*paths, "", "sleep 2", ""]), held=[])
    # Whether the shell has read its input yet or already forked the command, it is busy.
    assert (beats(busy, 3), busy.lost) == ([False, False, False], None)
    while busy.on_ready():
        pass
    assert busy.status == 0
    never = ShellRun(shell, "a-token-the-shell-never-got", held=[])  # as if its input was stolen
    assert (beats(never, 2), never.lost) == ([False, True], "stuck")


def beats(run: ShellRun, count: int) -> list[bool]:
    """``wedged()`` as the pump calls it: once per heartbeat (shortened here)."""
    seen = []
    for _ in range(count):
        seen.append(run.wedged())
        time.sleep(0.1)
    return seen


# Commands that change the shell's folder or an exported variable, each in a disguise a text check could
# take for a plain program run: every one must still persist through the loop.
STATE_CHANGES = [
    "cd sub", "'cd' sub", 'c"d" sub', "2>/dev/null cd sub", "true && cd sub", "false || cd sub",
    "true; cd sub", "echo x | cat; cd sub", "builtin cd sub", "command cd sub", "eval cd sub",
    "{ cd sub; }", "time cd sub", "pushd sub", "set -- sub; cd $1", "cd $(echo sub)", "cd `echo sub`",
    "c\\d sub", "if true; then cd sub; fi", "for d in sub; do cd $d; done", "source ./go", ". ./go",
    "KEEP=changed", "export KEEP=changed", "declare -gx KEEP=changed", "typeset -gx KEEP=changed",
    "read KEEP < ./value", "mapfile -t KEEP < ./value", "printf -v KEEP changed", "let KEEP=7",
    "((KEEP=7))", ": ${KEEP:=x} && unset KEEP", "unset KEEP", "KEEP+=more", "export -n KEEP",
    "readonly KEEP=changed", "getopts a: KEEP -a",
    "cat <<EOF >/dev/null\nx\nEOF\ncd sub", "cd sub # a comment",
]


@pytest.mark.parametrize("command", STATE_CHANGES)
def test_a_command_that_changes_state_keeps_it_however_it_is_written(shell: Shell, tmp_path: Path,
                                                                      command: str) -> None:
    (tmp_path / "sub").mkdir()
    (tmp_path / "go").write_text("cd sub\n")
    (tmp_path / "value").write_text("changed\n")
    run(shell, tmp_path, command)
    state = shell.take_state()
    assert state is not None, f"{command!r} changed the shell's state but it was not kept"
    cwd, env = state
    assert cwd != str(tmp_path) or env.get("KEEP") != "k"


@pytest.mark.parametrize("command", [
    "true", ":", "ls -la", "git status --short", "python3 -m pytest -q tests/unit --tb=short",
    "grep -rn 'cd sub' src", 'echo "a b" > out.txt', "cat x 2>&1 | head -n 3 && wc -l < x", "make -j2 test",
    "sleep 0 &", "ls *.py ~/x [ab]*",
])
def test_a_plain_command_saves_nothing(shell: Shell, tmp_path: Path, command: str) -> None:
    assert stateless(command)
    run(shell, tmp_path, command)
    assert shell.take_state() is None


INLINE = ["true", ":", "ls -la", "git status --short", "/bin/echo x", "./run.sh a b",
          "echo a && ls | wc -l", "python3 x.py; true", "make test || echo failed", "test -f x", "[ -d sub ]",
          "pwd", "grep -rn 'exit' src", "ls;", "a\nb"]
NOT_INLINE = [
    "exit", "exit 3", "exec ls", "kill 1", "ulimit -n 1", "umask 0", "hash -p /bin/sh ls", "break", "return",
    "shift", "continue", "trap '' INT", "enable -n echo", "type ls", "jobs", "disown", "logout", "times",
    "suspend", "wait", "e*t", "ex?t", "[e]xit", "~", "~/x", "'ex'it", 'e"xi"t', "ls; exit", "true && exit",
    "ls | exit", "ls &", "ls > f", "ls 2>&1", "ls >&3", "cat <&0", "echo x >| f", "__canal_apply",
    "__canal_run", "cd x", "x=1 ls", "then", "done", "{ ls; }", "ls $HOME", "ls `pwd`", "", ";ls", "ls ||",
    "ls;;", "myfunc", "printf x",
]


@pytest.mark.parametrize("command", INLINE)
def test_a_program_or_printing_builtin_may_run_in_the_loop(command: str) -> None:
    assert inline(command, BASH_NAMES | {"myfunc"})


@pytest.mark.parametrize("command", NOT_INLINE)
def test_nothing_else_runs_in_the_loop(command: str) -> None:
    assert not inline(command, BASH_NAMES | {"myfunc"})


def test_inline_needs_the_loops_names_no_variable_no_folder_and_a_folder_that_exists() -> None:
    names = frozenset({"myfunc"})
    assert run_mode("ls", {}, "", names, True) == "inline"
    assert run_mode("ls", {}, "", None, True) == ""  # the loop has not listed its names yet
    assert run_mode("ls", {"A": "1"}, "", names, True) == ""
    assert run_mode("ls", {}, "/tmp", names, True) == ""
    assert run_mode("ls", {}, "", names, False) == ""  # the folder went: a subshell moves to /
    assert run_mode("cd x", {}, "", names, True) == "save"


def test_the_loop_lists_its_builtins_and_functions(shell: Shell, tmp_path: Path) -> None:
    run(shell, tmp_path, "true")  # the first command: the loop has listed them by the time it answers
    names = shell.names()
    assert names is not None
    assert {"exit", "cd", "__canal_run", "__canal_apply", "if"} <= names


def test_an_inline_command_sees_no_descriptor_of_the_loop(shell: Shell, tmp_path: Path) -> None:
    run(shell, tmp_path, "true")
    assert run_mode("ls /proc/self/fd", {}, "", shell.names(), True) == "inline"
    status, out, _ = run(shell, tmp_path, "ls /proc/self/fd")
    assert (status, sorted(out.split())) == (0, [b"0", b"1", b"2", b"3"])  # 3: ls's own listing


def test_inline_commands_leave_the_loop_as_a_subshell_would(shell: Shell, tmp_path: Path) -> None:
    run(shell, tmp_path, "true")
    pid = shell.proc.pid if shell.proc else None
    assert run(shell, tmp_path, "false") == (1, b"", b"")
    assert run(shell, tmp_path, "echo a b; pwd") == (0, f"a b\n{tmp_path}\n".encode(), b"")
    status, _, err = run(shell, tmp_path, "no-such-program-x")
    assert (status, err) == (127, b"bash: line 1: no-such-program-x: command not found\n")
    assert run(shell, tmp_path, "ls /nonexistent | wc -l")[:2] == (0, b"0\n")
    assert shell.alive()
    assert shell.proc is not None
    assert shell.proc.pid == pid
    assert shell.take_state() is None
    assert run(shell, tmp_path, 'echo "$KEEP"')[1] == b"k\n"
