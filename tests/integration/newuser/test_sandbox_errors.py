"""Finding 9: the sandbox's errors read like bash's own, and Canal's processes are short and named."""

from __future__ import annotations

from first_hour import User


def test_errors_read_like_bash_and_the_shell_is_called_bash(user: User) -> None:
    root = user.project("app")
    done = user.canal(root, "run", "--", "nosuchtool --version")
    assert done.returncode == 127
    assert "bash: line 1: nosuchtool: command not found" in done.stdout, done.stdout
    assert "canal:" not in done.stdout
    multi = user.canal(root, "run", "--", "true\ncd /nonexistent")
    assert "bash: line 2: cd: /nonexistent: No such file or directory" in multi.stdout, multi.stdout
    zero = user.canal(root, "run", "--", "echo $0")
    assert zero.stdout.splitlines()[0] == "bash"


def test_ps_shows_short_clearly_named_canal_processes(user: User) -> None:
    root = user.project("app")
    done = user.canal(root, "run", "--", "ps -eo args")
    assert done.returncode == 0, done.stdout
    lines = done.stdout.splitlines()[:-1]  # the footer last
    assert max(len(line) for line in lines) < 200, max(lines, key=len)[:300]
    assert sum(len(line) for line in lines) < 2000
    assert any("canal-agent" in line for line in lines), lines
    assert any(line.startswith("canal-shell") for line in lines), lines
    assert "omitted" not in done.stdout
