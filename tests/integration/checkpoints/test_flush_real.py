"""The agent cannot flush the undo history: after a destructive `python3 -c` (allowed under standard
because undo covers it), 110 cheap commands and the agent's own `canal checkpoints --prune` leave the
checkpoint before it in place, and `canal undo` brings the file back."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

from project_helpers import chown_tree

from canal.runtime.api import Canal


def test_a_hundred_and_ten_commands_and_the_agents_prune_do_not_flush_the_undo(
        host_env: Path, open_canal: Callable[[Path], Canal]) -> None:
    project = host_env / "project"
    project.mkdir()
    (project / "precious.txt").write_text("irreplaceable\n")
    chown_tree(project)
    canal = open_canal(project)
    destroyed = canal.run("python3 -c \"import os; os.remove('precious.txt')\"")
    assert destroyed.status == "ok", destroyed.text
    assert destroyed.checkpoint is not None
    cp = destroyed.checkpoint.id
    for i in range(110):
        canal.run(f"echo {i} > t")
    pruned = subprocess.run([sys.executable, "-m", "canal.cli", "checkpoints", "--prune", "--json"],
                            cwd=project, env=os.environ.copy(), capture_output=True, text=True, timeout=120,
                            stdin=subprocess.DEVNULL, check=False)  # no terminal: the agent
    assert pruned.returncode == 0, pruned.stderr
    assert cp not in json.loads(pruned.stdout)["pruned"]
    canal.undo(cp)
    assert (project / "precious.txt").read_text() == "irreplaceable\n"
