"""A fork's file names cannot fake what a person is shown (issue 39, findings 3 and 5): the list
``canal apply`` asks a person to confirm and its applied lines show every hidden character of a name
escaped, ``canal changes`` shows none raw, and ``canal changes --patch`` quotes names as git does, so
``git apply`` recreates them exactly. ``canal changes`` says a new setuid, setgid or sticky file's mode.
Through the real CLI, in its own process, on a real fork."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from project_helpers import chown_tree, remove_project_containers

from tests.hidden_chars import HIDDEN, assert_shown_escaped, leaked

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="kernel overlayfs needs root (CI runs as root)")

CANAL = str(Path(sys.executable).with_name("canal"))
SPOOF = "ok\n  deleted nothing (all good)\n..."
CHARS = [c for c in HIDDEN if c != "\x00"]  # a file name cannot hold NUL
FORK = "names"
GROUPS = [CHARS[i:i + 4] for i in range(0, len(CHARS), 4)]  # fewer names than apply lists (50)
NAMES = [SPOOF, *(f"h{i}-" + "-".join(group) + ".txt" for i, group in enumerate(GROUPS))]


def ansi_c(name: str) -> str:
    """``name`` as a bash $'...' word of its bytes."""
    return "$'" + "".join(f"\\x{b:02x}" for b in name.encode("utf-8", "surrogateescape")) + "'"


class Cli:
    def __init__(self, root: Path) -> None:
        self.root = root

    def __call__(self, *args: str) -> tuple[int, str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith("CANAL_")}
        env.update(CANAL_STATE_DIR=str(self.root / "state"), CANAL_CONFIG_DIR=str(self.root / "config"),
                   CANAL_NO_SERVER="1")
        done = subprocess.run([CANAL, *args], cwd=self.root / "project", env=env, capture_output=True,
                              timeout=180, check=False)
        return (done.returncode, done.stdout.decode("utf-8", "surrogateescape"),
                done.stderr.decode("utf-8", "surrogateescape"))


@pytest.fixture
def cli(tmp_path: Path, sandbox_image: str, docker_client: Any) -> Iterator[Cli]:
    project = tmp_path / "project"
    (project / "src").mkdir(parents=True)
    (project / "src" / "app.py").write_text("print('app')\n")
    chown_tree(project)
    made = Cli(tmp_path)
    try:
        yield made
    finally:
        made("discard", FORK)  # unmounts the fork's overlay
        remove_project_containers(docker_client, project)


def test_hidden_characters_in_names_are_escaped_and_the_patch_applies(cli: Cli, tmp_path: Path) -> None:
    assert cli("fork", "names")[0] == 0
    script = "cd /workspace && " + " && ".join(f"printf 'x\\n' > {ansi_c(n)}" for n in NAMES)
    code, out, err = cli("run", "--sandbox", "names", "--", script)
    assert code == 0, out + err

    code, shown, err = cli("changes", "names")
    assert code == 0, err
    assert not leaked(shown), leaked(shown)
    assert "deleted nothing" not in [line.strip() for line in shown.splitlines()]
    assert '"a/ok\\n  deleted nothing (all good)\\n..."' in shown  # quoted as git quotes it

    code, patch, err = cli("changes", "names", "--patch")
    assert code == 0, err
    copy = tmp_path / "copy"
    shutil.copytree(tmp_path / "project", copy)
    applied = subprocess.run(["git", "apply", "-"], cwd=copy, input=patch.encode("utf-8", "surrogateescape"),
                             capture_output=True, check=False)
    assert applied.returncode == 0, applied.stderr.decode()
    for name in NAMES:
        assert (copy / name).read_text() == "x\n", name

    code, out, asked = cli("apply", "names")
    assert code == 120, out + asked
    assert "  deleted nothing (all good)" not in asked.splitlines()
    assert_shown_escaped(asked, CHARS)
    assert "ok\\n  deleted nothing (all good)\\n..." in asked
    token = re.search(r"c_[a-z2-7]{12}", asked).group(0)  # type: ignore[union-attr]
    code, done, err = cli("apply", "names", "--confirm", token)
    assert code == 0, done + err
    assert_shown_escaped(done, CHARS)
    for name in NAMES:
        assert (tmp_path / "project" / name).read_text() == "x\n", name


def test_changes_and_diff_say_a_setuid_setgid_or_sticky_mode_as_apply_does(cli: Cli, tmp_path: Path) -> None:
    """Issue 39, finding 5: canal changes showed a new setuid file only as 'new file mode 100755'. A
    sandbox cannot set setuid or setgid (issue 36), so the fork makes a sticky file, and a process on
    the host makes setuid and setgid files in the project, which canal diff shows."""
    assert cli("fork", FORK)[0] == 0
    script = "cd /workspace && for m in 1755 0755; do printf 'x\\n' > f$m && chmod $m f$m; done"
    code, out, err = cli("run", "--sandbox", FORK, "--", script)
    assert code == 0, out + err
    code, shown, err = cli("changes", FORK)
    assert code == 0, err
    lines = shown.splitlines()
    assert "added f1755 (file, 2 bytes, mode 1755)" in lines, shown
    assert not any(line.startswith("added f0755") for line in lines)  # the patch says 100755
    code, _out, asked = cli("apply", FORK)
    assert code == 120
    assert "  added f1755 (file, 2 bytes, mode 1755)" in asked.splitlines()

    project = tmp_path / "project"
    for mode in (0o4755, 0o2755):
        (project / f"h{mode:o}").write_text("x\n")
        (project / f"h{mode:o}").chmod(mode)
    (project / "src" / "app.py").write_text("y\n")
    (project / "src" / "app.py").chmod(0o4755)
    code, shown, err = cli("diff")
    assert code == 0, err
    lines = shown.splitlines()
    for mode in ("4755", "2755"):
        assert f"added h{mode} (file, 2 bytes, mode {mode})" in lines, shown
    assert "modified src/app.py (mode 0644 -> 4755)" in lines, shown
