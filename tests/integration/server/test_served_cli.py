"""The thin client and its server: one sandbox session across separate ``canal`` processes."""

from __future__ import annotations

import json
import re
import subprocess

import pytest
from served_cli import ServedProject

from canal import Canal
from canal.core.errors import CanalError


def test_cwd_and_exports_persist_across_cli_processes(served: ServedProject) -> None:
    first = served.run("run", "--", "cd sub && export GREETING=hello")
    assert first.returncode == 0, first.stderr
    second = served.run("run", "--", 'pwd; echo "$GREETING"')
    assert second.returncode == 0, second.stderr
    assert second.stdout.splitlines()[:2] == ["/workspace/sub", "hello"]
    status = json.loads(served.run("server", "status", "--json").stdout)
    assert status["running"] is True
    assert status["served"] == 2


def test_output_exit_code_and_streams_are_the_commands(shared: ServedProject) -> None:
    served = shared
    done = served.run("run", "--", "echo out; echo err >&2; exit 3")
    assert done.returncode == 3
    assert done.stdout.startswith("out\n--- stderr ---\nerr\n")
    asked = served.run("run", "--", "rm", "-rf", "sub")
    assert asked.returncode == 120
    assert asked.stderr.startswith("CONFIRMATION_REQUIRED")
    assert asked.stdout == ""


def test_server_stop_then_the_next_call_starts_a_new_one(served: ServedProject) -> None:
    assert served.run("run", "--", "true").returncode == 0
    pid = json.loads(served.run("server", "status", "--json").stdout)["pid"]
    stopped = served.run("server", "stop")
    assert stopped.stdout.startswith(f"Stopped the Canal server pid {pid}")
    assert json.loads(served.run("server", "status", "--json").stdout)["running"] is False
    assert served.run("run", "--", "true").returncode == 0
    assert json.loads(served.run("server", "status", "--json").stdout)["pid"] != pid


def test_stdin_reaches_the_command(shared: ServedProject) -> None:
    served = shared
    done = served.run("run", "--", "cat", input="x\n")
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[0] == "x"
    counted = served.run("run", "--", "wc -l", input="a\nb\nc\n")
    assert counted.stdout.splitlines()[0].strip() == "3"
    none = served.run("run", "--", "cat")  # stdin is /dev/null: cat ends at once
    assert none.returncode == 0
    assert none.stdout.startswith("[exit:0")


def test_a_command_ignoring_an_open_stdin_still_ends(shared: ServedProject) -> None:
    served = shared
    """An agent harness may hand canal a stdin pipe it never closes: nothing waits for it."""
    proc = served.popen("run", "--", "echo done", stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                        stderr=subprocess.PIPE)
    try:
        assert proc.wait(timeout=60) == 0
        assert proc.stdout is not None
        assert proc.stdout.read().startswith("done\n")
    finally:
        for stream in (proc.stdin, proc.stdout, proc.stderr):
            if stream is not None:
                stream.close()


def test_the_python_api_through_the_server_shares_the_session(shared: ServedProject,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    served = shared
    for name, value in served.env.items():
        if name.startswith("CANAL_"):
            monkeypatch.setenv(name, value)
    monkeypatch.delenv("CANAL_NO_SERVER", raising=False)
    assert served.run("run", "--", "cd /workspace/sub && export DOOR=cli").returncode == 0
    api = Canal.connect(served.root)
    seen = api.run('pwd; echo "$DOOR"; export DOOR=api')
    assert seen.status == "ok", seen.text
    servers = sorted(p.name for p in served.runtime.glob("server-*.sock"))
    assert seen.output.splitlines() == ["/workspace/sub", "cli"], servers
    assert seen.text.endswith("]")  # the presenter's view, footer included
    assert served.run("run", "--", 'echo "$DOOR"').stdout.startswith("api\n")
    assert api.run("rm -rf sub", unattended=True).status == "denied"
    with pytest.raises(CanalError) as refused:
        Canal.connect(served.root, sandbox="no good").run("true")
    assert refused.value.code == "CONFIG_INVALID"
    assert refused.value.exit_code == 2


def test_the_servers_watched_checkpoints_miss_nothing_undo_needs(served: ServedProject) -> None:
    """The server's checkpoints come from its workspace watch: a folder of empty folders made again by a
    command in the sandbox, with a file at the bottom, is in the next command's checkpoint, so undo
    brings the file back after the folder is deleted."""
    steps = ["mkdir -p e/f",
             "python3 -c \"import os, shutil; shutil.rmtree('e'); os.makedirs('e/f');"
             " open('e/f/x', 'w').write('made again')\"",
             "python3 -c \"import shutil; shutil.rmtree('e')\""]
    footers = []
    for step in steps:
        done = served.run("run", "--", step)
        assert done.returncode == 0, done.stderr
        footers.append(re.findall(r"checkpoint (cp-\d+)", done.stdout))
    assert all(footers), footers
    assert not (served.root / "e").exists()
    undone = served.run("undo", footers[-1][-1])
    assert undone.returncode == 0, undone.stderr
    assert (served.root / "e" / "f" / "x").read_text() == "made again"
