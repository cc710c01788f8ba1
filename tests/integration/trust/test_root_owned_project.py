"""Finding 6 of issue 15: a root-owned project ran its sandbox as uid 1000, which could not write the
workspace (touch, a confirmed rm -rf after its backup, automated workflow steps all failed). Now the
sandbox runs as the project's owner, uid 0 here, with every capability dropped; the escape suite runs
as uid 0 too (tests/integration/sandbox/test_escape.py)."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from project_helpers import remove_project_containers
from trust_cli import run_cli

from canal.runtime.api import Canal

pytestmark = [pytest.mark.docker,
              pytest.mark.skipif(os.geteuid() != 0, reason="making a root-owned project needs root")]

MANIFEST = '---\nname: write-file\ndescription: "Writes a file"\nversion: "1"\n---\n# write-file\n'
ASK = ('---\nid: ask\ntype: interactive\ntitle: "Ask"\ngate:\n  schema:\n'
       '    value: { type: string, required: true, desc: "anything" }\n---\nAsk for a value.\n')
WRITE = ('---\nid: write\ntype: automated\ntitle: "Write"\nautomation:\n'
         '  run: ["sh", "-c", "echo made > made-by-workflow.txt && cat made-by-workflow.txt"]\n'
         '  result: text\n---\nWrites a file.\n')
ROOT_PROBE = ("id -u; grep -E '^(CapEff|NoNewPrivs):' /proc/self/status | tr -s '\\t ' ' '; "
              "chown 1000 notes.txt 2>/dev/null || echo no-chown; "
              "mknod /tmp/n c 1 3 2>/dev/null || echo no-mknod; "
              "mount -t tmpfs t /tmp 2>/dev/null || echo no-mount; "
              "cat private.txt >/dev/null 2>&1 || echo no-dac-override; "
              "touch /usr/x 2>/dev/null || echo no-rootfs")


@pytest.fixture
def project(host_env: Path, docker_client) -> Iterator[Path]:  # type: ignore[no-untyped-def]
    folder = host_env / "rootproject"
    (folder / "build" / "deep").mkdir(parents=True)
    (folder / "build" / "deep" / "out.bin").write_bytes(b"\x00artifact")
    (folder / "notes.txt").write_text("keep me\n")
    (folder / "private.txt").write_text("another user's file\n")
    os.chown(folder / "private.txt", 1000, 1000)
    os.chmod(folder / "private.txt", 0o600)
    flow = folder / "workflows" / "write-file" / "references"
    flow.mkdir(parents=True)
    (flow.parent / "WorkFlow.md").write_text(MANIFEST)
    (flow / "01-ask.md").write_text(ASK)
    (flow / "02-write.md").write_text(WRITE)
    assert folder.stat().st_uid == 0
    yield folder
    remove_project_containers(docker_client, folder)


def test_touch_and_a_confirmed_rm_rf_work_as_uid_0_without_any_capability(project: Path) -> None:
    with Canal(project) as canal:
        touched = canal.run("touch made.txt && echo ok")
        assert touched.output.strip() == "ok", touched.text
        probe = canal.run(ROOT_PROBE)
        asked = canal.run("rm -rf build")
        assert asked.status == "confirmation_required"
        assert asked.confirmation is not None
        done = canal.run("rm -rf build", confirm=asked.confirmation.token)
    lines = probe.output.strip().split("\n")
    assert lines[:3] == ["0", "CapEff: 0000000000000000", "NoNewPrivs: 1"], probe.text
    assert lines[3:8] == ["no-chown", "no-mknod", "no-mount", "no-dac-override", "no-rootfs"]
    assert (project / "made.txt").stat().st_uid == 0
    assert done.status == "ok", done.text
    assert not (project / "build").exists()
    assert done.backups, "the confirmed rm -rf was backed up first"


def test_an_automated_workflow_step_writes_the_workspace(project: Path) -> None:
    started = run_cli(project, "workflow", "start", "write-file", "--json")
    assert started.returncode == 0, started.stderr
    run_id = json.loads(started.stdout)["run_id"]
    advanced = run_cli(project, "workflow", "advance", run_id, "--gate-data", '{"value": "x"}', "--json")
    assert advanced.returncode == 0, advanced.stderr
    ran = json.loads(advanced.stdout)["ran"]
    assert [(r["id"], r["outcome"], r["exit_code"]) for r in ran] == [("write", "ok", 0)], ran
    assert (project / "made-by-workflow.txt").read_text() == "made\n"
