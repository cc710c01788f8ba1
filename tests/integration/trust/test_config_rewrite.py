"""Finding 1 of issue 15: the agent rewrote canal.yaml (from the sandbox, with `canal edit`, with MCP
`edit`), killed the keepalive to force a rebuild, and the next sandbox ran as root with capabilities,
network and a host folder. Now: the file is read-only inside, Canal's file operations refuse it, and a
changed file takes effect only once a person approves it."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from project_helpers import chown_tree, remove_project_containers
from trust_cli import run_cli

from canal.host.approvals import Approver
from canal.host.files.errors import PATH_PROTECTED
from canal.mcp import schemas
from canal.mcp.operations import Operations
from canal.runtime.api import Canal
from canal.runtime.services import Services
from canal.runtime.trust import ConfigUnapproved
from tests.error_codes import raises_code

pytestmark = pytest.mark.docker

APPROVED = "policy:\n  profile: standard\n  approval: human\n"
LOOSE = """\
policy: {profile: standard, approval: agent}
sandbox:
  user: "0:0"
  network: bridge
  cap_drop_all: false
  no_new_privileges: false
  read_only_root: false
  mounts: [{source: HOST, target: /host, read_only: false}]
"""
PROBE = ("id -u; grep -E '^(CapEff|NoNewPrivs):' /proc/self/status | tr -s '\\t ' ' '; "
         "test -e /host && echo HOST-VISIBLE; touch /probe 2>/dev/null && echo ROOT-WRITABLE; true")


@pytest.fixture
def project(host_env: Path, docker_client) -> Iterator[Path]:  # type: ignore[no-untyped-def]
    folder = host_env / "project"
    folder.mkdir()
    (folder / "canal.yaml").write_text(APPROVED)
    chown_tree(folder)
    hostdir = host_env / "hostdir"
    hostdir.mkdir()
    (hostdir / "secret").write_text("host secret\n")
    services = Services(folder)
    services.trust.approve(Approver(user="alice", how="tty"), services.trust.status().snapshot.digest)
    yield folder
    remove_project_containers(docker_client, folder)


def loose(project: Path) -> str:
    return LOOSE.replace("HOST", str(project.parent / "hostdir"))


def assert_hardened(project: Path) -> None:
    with Canal(project) as canal:
        result = canal.run(PROBE)
    assert result.status == "ok", result.text
    assert result.output.split("\n")[:3] == ["1000", "CapEff: 0000000000000000", "NoNewPrivs: 1"]
    assert "HOST-VISIBLE" not in result.output
    assert "ROOT-WRITABLE" not in result.output


def test_rewrite_from_inside_the_sandbox_fails_and_a_forced_rebuild_stays_hardened(project: Path) -> None:
    text = loose(project)
    with Canal(project) as canal:
        canal.up()
        attempts = [f"cat > canal.yaml <<'YAML'\n{text}YAML", "rm -f canal.yaml", "mv canal.yaml old.yaml",
                    "ln -sf /etc/passwd canal.yaml", "cp notes canal.yaml 2>&1; truncate -s0 canal.yaml"]
        for attempt in attempts:
            canal.run(attempt)
        kill = canal.run("kill -9 $(pgrep -x sleep)")  # the keepalive: the next command rebuilds
    assert (project / "canal.yaml").read_text() == APPROVED, kill.text
    assert_hardened(project)


def test_a_changed_file_is_refused_until_a_person_approves_it(project: Path) -> None:
    (project / "canal.yaml").write_text(loose(project))  # however it got there
    with Canal(project) as canal, pytest.raises(ConfigUnapproved) as info:
        canal.run("true")
    assert "sandbox.user" in info.value.message
    assert [a.kind for a in info.value.next] == ["config.approve"]
    cli = run_cli(project, "run", "--", "id")
    assert cli.returncode == 2
    assert cli.stderr.startswith("CONFIG_UNAPPROVED"), cli.stderr
    assert cli.stdout == ""
    approve = run_cli(project, "config", "approve", "--yes")  # no terminal: not a person
    assert approve.returncode != 0
    assert approve.stderr.startswith("APPROVER_UNVERIFIED")
    (project / "canal.yaml").write_text(APPROVED)  # put back: the approved settings apply again
    assert_hardened(project)


def test_canal_edit_and_mcp_edit_cannot_change_the_settings(project: Path) -> None:
    edit = run_cli(project, "edit", "canal.yaml", "--old", "approval: human", "--new", "approval: agent")
    assert edit.returncode == 2
    assert edit.stderr.startswith("PATH_PROTECTED"), edit.stderr
    write = run_cli(project, "write", "canal.yaml", stdin=loose(project))
    assert write.stderr.startswith("PATH_PROTECTED"), write.stderr
    rm = run_cli(project, "rm", "canal.yaml")
    assert rm.stderr.startswith("PATH_PROTECTED"), rm.stderr
    nested = run_cli(project, "write", "sub/canal.yaml", stdin=loose(project))  # a project root of its own
    assert nested.stderr.startswith("PATH_PROTECTED"), nested.stderr
    with Canal(project) as canal:
        ops = Operations(canal)
        args = schemas.EditArgs.model_validate({"path": "canal.yaml", "old": "approval: human",
                                                "new": "approval: agent"})
        with raises_code(PATH_PROTECTED):
            ops.edit(args)
        with raises_code(PATH_PROTECTED):
            ops.remove(schemas.RemoveArgs.model_validate({"path": ["canal.yaml"]}))
    assert (project / "canal.yaml").read_text() == APPROVED


def test_restore_cannot_put_a_loose_file_back_over_the_settings(project: Path) -> None:
    (project / "stash").mkdir()
    (project / "stash" / "loose.yaml").write_text(loose(project))
    if os.geteuid() == 0:
        chown_tree(project)
    rm = run_cli(project, "rm", "--json", "stash/loose.yaml")
    assert rm.returncode == 0, rm.stderr
    entry = rm.stdout.split('"id": "')[1].split('"')[0]
    restore = run_cli(project, "restore", entry, "--to", "canal.yaml", "--force")
    assert restore.stderr.startswith("PATH_PROTECTED"), restore.stderr
    assert (project / "canal.yaml").read_text() == APPROVED
