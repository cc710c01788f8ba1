"""Issue 32, finding 7: bare ``canal`` (the index) prints each command's whole description, wrapped,
never cut with "..."."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import click

from canal.cli.main import cli, load_command


def test_the_index_prints_whole_descriptions_wrapped(tmp_path: Path) -> None:
    env = {**os.environ, "CANAL_STATE_DIR": str(tmp_path / "state"), "CANAL_CONFIG_DIR": str(tmp_path / "c")}
    done = subprocess.run([sys.executable, "-m", "canal.cli"], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert not [ln for ln in lines if ln.rstrip().endswith("...") or "... (" in ln], done.stdout
    assert max(len(ln) for ln in lines) <= 110, done.stdout
    joined = " ".join(ln.strip() for ln in lines)
    for name in cli.list_commands(click.Context(cli)):
        cmd = load_command(name)
        assert cmd is not None
        if cmd.hidden:
            continue
        whole = " ".join(cmd.get_short_help_str(limit=10_000).split())
        assert f"{name}: {whole}" in joined, name
