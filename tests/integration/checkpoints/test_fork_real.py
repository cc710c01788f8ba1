"""A fork is a sandbox on a copy-on-write view of the project. An adversarial script in it (delete
everything, chmod, symlinks out, hard links, a 1 GB sparse file, a fifo) leaves the real project byte
for byte as it was; ``changes`` lists exactly what changed; ``apply`` asks first, then makes the real
project match; ``undo`` reverts the apply; an edit made to the real project meanwhile is a conflict."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest
from project_helpers import chown_tree

from canal.core.errors import ConfirmationRequired
from canal.host.files.errors import PATH_PROTECTED
from canal.host.forks import FORK_CONFLICT, FORK_EXISTS, FORK_OF_FORK
from canal.runtime.api import Canal
from tests.error_codes import raises_code
from tests.treesnap import tree

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="kernel overlayfs needs root (CI runs as root)")

ADVERSARY = """set -e
cd /workspace
rm -rf ./* ./.[!.]*
mkdir lib
printf 'hello\\n' > lib/x.py
ln lib/x.py lib/hard
chmod 4755 lib/x.py 2>/dev/null || chmod 1755 lib/x.py
ln -s /etc/passwd escape
ln -s ../../../.. up
truncate -s 1G huge.bin
mkfifo pipe
ls -la / > /dev/null
"""


def make_project(root: Path) -> Path:
    project = root / "project"
    (project / "src").mkdir(parents=True)
    (project / "src" / "app.py").write_text("print('app')\n")
    (project / "run.sh").write_text("#!/bin/sh\n")
    (project / "run.sh").chmod(0o755)
    (project / ".env").write_text("TOKEN=x\n")
    (project / ".env").chmod(0o600)
    (project / "link").symlink_to("src/app.py")
    chown_tree(project)
    return project


def test_an_adversarial_fork_leaves_the_project_intact_until_apply(
        host_env: Path, open_canal: Callable[[Path], Canal]) -> None:
    project = make_project(host_env)
    before = tree(project)
    canal = open_canal(project)
    canal.fork("wild")
    result = canal.run(ADVERSARY, sandbox="wild")
    assert result.status == "ok", result.text
    assert result.decision is not None
    assert result.decision.action == "allow"
    assert result.checkpoint is None
    assert tree(project) == before

    found = canal.changes("wild")
    assert {c.path: c.kind for c in found.changes} == {
        ".env": "deleted", "link": "deleted", "run.sh": "deleted", "src": "deleted",
        "src/app.py": "deleted", "lib": "added", "lib/x.py": "added", "lib/hard": "added",
        "escape": "added", "up": "added"}
    assert {n.path for n in found.not_carried} == {"huge.bin", "pipe"}

    with pytest.raises(ConfirmationRequired) as asked:
        canal.apply("wild")
    assert "lib/x.py" in asked.value.message
    assert "deleted src/app.py" in asked.value.message
    assert tree(project) == before
    applied = canal.apply("wild", confirm=asked.value.details["token"])
    after = tree(project)
    assert set(after) == {"lib", "lib/x.py", "lib/hard", "escape", "up"}
    assert after["lib/x.py"][1] == 0o1755  # the setuid bit was refused in the fork (issue 36)
    assert after["lib/x.py"][4] == b"hello\n"
    assert after["escape"][4] == b"/etc/passwd"
    assert after["lib/x.py"][2] == 1000  # the project owner's, as in the fork

    canal.undo(applied.checkpoint)
    assert tree(project) == before


def test_an_edit_made_meanwhile_is_a_conflict_and_is_not_overwritten(
        host_env: Path, open_canal: Callable[[Path], Canal]) -> None:
    project = make_project(host_env)
    canal = open_canal(project)
    canal.fork("worker")
    assert canal.run("echo from-fork > src/app.py && echo new > other.txt", sandbox="worker").status == "ok"
    (project / "src" / "app.py").write_text("a person's edit\n")
    with pytest.raises(ConfirmationRequired) as asked:
        canal.apply("worker")
    with raises_code(FORK_CONFLICT, match=r"src/app\.py") as clash:
        canal.apply("worker", confirm=asked.value.details["token"])
    assert clash.value.details["conflicts"][0]["path"] == "src/app.py"
    assert (project / "src" / "app.py").read_text() == "a person's edit\n"
    assert not (project / "other.txt").exists()
    with pytest.raises(ConfirmationRequired) as only:
        canal.apply("worker", ["other.txt"])  # the paths that do not clash can still be applied
    canal.apply("worker", ["other.txt"], confirm=only.value.details["token"])
    assert (project / "other.txt").read_text() == "new\n"
    assert (project / "src" / "app.py").read_text() == "a person's edit\n"


def test_a_fork_of_a_fork_and_a_taken_name_are_refused(host_env: Path,
                                                       open_canal: Callable[[Path], Canal]) -> None:
    project = make_project(host_env)
    canal = open_canal(project)
    canal.fork("one")
    with raises_code(FORK_OF_FORK):
        canal.fork("two", from_checkpoint="one")
    with raises_code(FORK_EXISTS):
        canal.fork("one")
    canal.discard("one")
    assert canal.forks() == []


SETTINGS_ATTACK = """set -e
cd /workspace
printf 'policy:\\n  profile: autonomous\\n' > canal.yaml
mkdir -p .git sub
printf '[core]\\n\\tfsmonitor = touch /tmp/pwned\\n' > .git/config
printf 'x\\n' > sub/canal.yaml
printf '* filter=evil\\n' > .gitattributes
printf 'fine\\n' > fine.txt
"""


def test_apply_refuses_protected_files_unless_a_person_runs_it(
        host_env: Path, open_canal: Callable[[Path], Canal]) -> None:
    """A fork that writes canal.yaml (at any depth), .git/config and .gitattributes cannot carry them
    to the project through the agent's apply, whatever the confirmation; a person can."""
    project = make_project(host_env)
    before = tree(project)
    canal = open_canal(project)
    canal.fork("settings")
    assert canal.run(SETTINGS_ATTACK, sandbox="settings").status == "ok"
    with raises_code(PATH_PROTECTED) as refused:
        canal.apply("settings")
    assert refused.value.code == "PATH_PROTECTED"
    assert refused.value.details["protected"] == [".git", ".git/config", ".gitattributes", "canal.yaml",
                                                  "sub/canal.yaml"]
    assert "canal.yaml" in refused.value.message
    assert tree(project) == before  # nothing applied, nothing asked
    with raises_code(PATH_PROTECTED):
        canal.apply("settings", [".git"])
    with pytest.raises(ConfirmationRequired) as asked:
        canal.apply("settings", ["fine.txt"])  # the paths that are not protected still apply
    canal.apply("settings", ["fine.txt"], confirm=asked.value.details["token"])
    assert (project / "fine.txt").read_text() == "fine\n"
    rest = [".git", ".gitattributes", "canal.yaml", "sub"]
    with pytest.raises(ConfirmationRequired) as person_asked:
        canal.apply("settings", rest, person=True)
    canal.apply("settings", rest, person=True, confirm=person_asked.value.details["token"])
    assert (project / ".git" / "config").read_text().startswith("[core]")
    assert (project / "canal.yaml").exists()


SNEAKY = """set -e
cd /workspace
cp -p src/app.py /tmp/was
printf "print('bad')\\n" > src/app.py
touch -r /tmp/was src/app.py
"""


def test_forks_from_one_checkpoint_share_its_seed_and_see_a_same_size_same_time_edit(
        host_env: Path, open_canal: Callable[[Path], Canal]) -> None:
    """The second fork of a checkpoint takes the lower layer's stat keys from the first fork's seed;
    a rewrite that keeps the size and the mtime is still a change, in that fork only."""
    project = make_project(host_env)
    before = tree(project)
    canal = open_canal(project)
    first = canal.fork("one")
    canal.fork("two", from_checkpoint=first.base)
    result = canal.run(SNEAKY, sandbox="two")
    assert result.status == "ok", result.text
    assert {c.path: c.kind for c in canal.changes("two").changes} == {"src/app.py": "modified"}
    assert "+print('bad')" in canal.changes("two").patch
    assert canal.changes("one").changes == []
    assert tree(project) == before
