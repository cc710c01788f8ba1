"""Issue 36, finding 1 (high): in a root-owned project, whose sandbox runs as uid 0 with no capabilities,
standard allowed `cp /bin/bash rootsh && chmod 4755 rootsh`, and any local user then got euid 0 from
`./rootsh -p`; under gVisor too, and checkpoints restored the bit. Now the agent's seccomp filter refuses
the bits (canal/sandbox/agent/seccomp.py) and restores drop them. A second OS user, made here, is the
local user who tries the file; a project owned by that user runs through that user's own `canal`."""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from project_helpers import remove_project_containers

from canal.host.approvals import Approver
from canal.runtime.api import Canal
from canal.runtime.services import Services

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "approvals"))

from os_users import OsUser, made_team

pytestmark = [pytest.mark.docker,
              pytest.mark.skipif(os.geteuid() != 0, reason="a root-owned project and OS users need root")]

ROOTSH = "cp /bin/bash rootsh && chmod 4755 rootsh"


@pytest.fixture(scope="module")
def team(docker_client: Any, sandbox_image: str) -> Iterator[Any]:
    with made_team(docker_client, "canal-setuid-") as made:
        yield made


@pytest.fixture
def root_project(host_env: Path, docker_client: Any, runtime: str) -> Iterator[Path]:
    base = Path(tempfile.mkdtemp(prefix="canal-rootproject-", dir="/tmp"))
    base.chmod(0o755)  # the other user may look in, as in a shared checkout
    folder = base / "rootproject"
    folder.mkdir(mode=0o755)
    (folder / "canal.yaml").write_text(f"sandbox:\n  runtime: {runtime}\n")
    services = Services(folder)
    services.trust.approve(Approver(user="alice", how="tty"), services.trust.status().snapshot.digest)
    assert folder.stat().st_uid == 0
    yield folder
    remove_project_containers(docker_client, folder)
    shutil.rmtree(base, ignore_errors=True)


def _euid_of(user: OsUser, program: Path) -> str:
    shown = user.run(str(program), "-p", "-c", "id -u", cwd=program.parent)
    return shown.stdout.strip() or shown.stderr.strip()


def test_a_root_setuid_shell_never_reaches_the_host(root_project: Path, team: Any, runtime: str) -> None:
    with Canal(root_project) as canal:
        made = canal.run(ROOTSH)
        alt = canal.run("install -m 4755 /bin/bash rootsh2; python3 -c \"import os; "
                        "os.close(os.open('rootsh3', os.O_CREAT | os.O_WRONLY, 0o6755))\"")
        canal.down()  # gVisor's gofer may hold the copy open for writing (ETXTBSY) while it runs
    assert made.exit_code == 1, made.text
    assert "Operation not permitted" in made.text
    assert alt.exit_code != 0, alt.text
    for name in ("rootsh", "rootsh2", "rootsh3"):
        path = root_project / name
        assert not path.exists() or path.stat().st_mode & 0o6000 == 0, (name, oct(path.stat().st_mode))
    assert (root_project / "rootsh").stat().st_uid == 0  # root's file, but no privilege in it
    other = team.approver
    assert _euid_of(other, root_project / "rootsh") == str(other.uid)


def test_undo_puts_a_persons_setuid_file_back_without_its_bit(root_project: Path) -> None:
    tool = root_project / "tool"
    tool.write_bytes(Path("/bin/true").read_bytes())
    tool.chmod(0o4755)  # the person's own, made on the host
    with Canal(root_project) as canal:
        removed = canal.run("rm tool")
        assert removed.checkpoint is not None, removed.text
        undone = canal.undo(removed.checkpoint.id)
    assert tool.is_file()
    assert tool.stat().st_mode & 0o7777 == 0o755
    assert undone.stripped == ["tool"]


def test_a_user_owned_project_gets_no_setuid_file_of_its_user(team: Any) -> None:
    agent = team.agent
    shown = agent.canal("-C", str(team.project), "run", "--", "touch mine && chmod u+s,g+s mine")
    assert shown.returncode == 1, shown.stdout + shown.stderr
    assert "Operation not permitted" in shown.stdout + shown.stderr
    mine = team.project / "mine"
    assert mine.stat().st_uid == agent.uid
    assert mine.stat().st_mode & 0o6000 == 0
