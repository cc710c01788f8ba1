"""Finding 5 (the part that is this issue's): stdin piped to canal run reaches the command."""

from __future__ import annotations

from first_hour import User


def test_piped_stdin_reaches_the_command(user: User) -> None:
    root = user.project("app")
    done = user.canal(root, "run", "--", "cat", stdin="piped\n")
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.splitlines()[0] == "piped"
