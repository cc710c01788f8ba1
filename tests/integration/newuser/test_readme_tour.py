"""Done-when of #18: the README's tour runs as written, in a fresh Python project with the python preset
(``make test`` on a tiny Makefile included), each line as a person would type it in a shell."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from first_hour import User, at_terminal

README = Path(__file__).resolve().parents[3] / "README.md"
PROJECT = {
    "pyproject.toml": "[project]\nname = \"app\"\nversion = \"0.1.0\"\n",
    "Makefile": "test:\n\tpython3 -m unittest discover -s tests -q\n",
    "src/app.py": "def answer():\n    return 42\n",
    "tests/test_app.py": ("import sys, unittest\nsys.path.insert(0, 'src')\nfrom app import answer\n\n\n"
                          "class T(unittest.TestCase):\n    def test_answer(self):\n"
                          "        self.assertEqual(answer(), 42)\n"),
    "notes.txt": "keep me\n",
    "build/out.o": "object\n",
}
# What a line should exit with when it is not 0, and why.
EXPECTED = {
    "canal run -- rm -rf build/": 120,  # CONFIRMATION_REQUIRED: nothing ran
    "canal policy check -- 'curl x | sh'": 120,  # code from the network into a shell is confirmed
}
# Lines that need the Canal server (a background task outlives the call that starts it): they run with
# it, in this test's runtime folder; every other line runs in-process as the rest of the suite does.
SERVED = ("canal task ",)


def tour() -> list[str]:
    """The tour's commands: each line's command part (before the comment), alternatives split at ' / '."""
    block = README.read_text().split("## A short tour", 1)[1].split("```sh\n", 1)[1].split("```", 1)[0]
    commands = []
    for line in block.splitlines():
        command = re.split(r"\s{2,}#", line, maxsplit=1)[0].strip()
        commands.extend(part.strip() for part in command.split(" / "))
    return commands


def test_the_readme_tour_runs_as_written(user: User) -> None:
    root = user.project("app", PROJECT, git=True)
    (user.home / "src" / "other").mkdir(parents=True)
    env = {**user.env, "PATH": f"{Path(sys.executable).parent}:{user.env['PATH']}"}
    served = {k: v for k, v in env.items() if k != "CANAL_NO_SERVER"}
    try:
        ran = _take_the_tour(root, env, served)
    finally:  # the tour leaves its fork (an overlay mount in the state folder) and its sandboxes
        subprocess.run(["bash", "-c", "canal discard try; canal down"], cwd=root, env=env,
                       capture_output=True, timeout=300, check=False)
        subprocess.run(["canal", "server", "stop"], cwd=root, env=served, capture_output=True, timeout=120,
                       check=False)
    assert "canal run --json -- make test" in ran
    assert len(ran) >= 20


def _take_the_tour(root: Path, env: dict[str, str], served: dict[str, str]) -> list[str]:
    trash_id = ""
    ran = []
    for command in tour():
        line = command.replace(" ID", f" {trash_id}") if command.endswith(" ID") else command
        if line == "canal config approve":
            code, shown = at_terminal(root, env, ["config", "approve"], [("Approve these settings?", "y")])
            assert code == 0, shown
            continue
        done = subprocess.run(["bash", "-c", line], cwd=root, env=served if line.startswith(SERVED) else env,
                              capture_output=True, text=True, input="", timeout=900, check=False)
        ran.append(line)
        want = EXPECTED.get(command, 0)
        assert done.returncode == want, f"{line!r} exited {done.returncode}:\n{done.stdout}\n{done.stderr}"
        if line.startswith("canal rm "):
            trash_id = re.search(r"\b(t\d{8}T\d{6}Z-[0-9a-f]+)\b", done.stdout + done.stderr).group(1)  # type: ignore[union-attr]
        if line == "canal run --json -- make test":
            assert '"status": "ok"' in done.stdout, done.stdout
            assert '"exit_code": 0' in done.stdout
        if line == "canal task wait tests":
            assert done.stdout.startswith("task t-"), done.stdout
            assert " exited (exit 0," in done.stdout, done.stdout
        if line == "canal image show":
            assert "preset   python" in done.stdout, done.stdout
    return ran
