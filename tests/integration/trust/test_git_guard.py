"""Finding 4 of issue 15: repository configuration the agent could write (.git/config, hooks,
.gitattributes, ~/.gitconfig) made "read-only" git run programs under strict. Now every command runs
with overrides for the code-running keys, the drivers and aliases the repository names, and no
~/.gitconfig; Canal's file operations refuse .git/ and .gitattributes."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from project_helpers import chown_tree, remove_project_containers
from trust_cli import run_cli

from canal.runtime.api import Canal

pytestmark = pytest.mark.docker

FIRE = "touch /workspace/FIRED."
CONFIG = f"""\
[core]
\trepositoryformatversion = 0
\tfilemode = true
\tbare = false
\tfsmonitor = "{FIRE}fsmonitor; false"
\tpager = "{FIRE}pager; cat"
\teditor = "{FIRE}editor"
\tsshCommand = "{FIRE}ssh"
\thooksPath = .git/hooks
[diff]
\texternal = "{FIRE}external #"
[diff "evil"]
\ttextconv = "sh -c '{FIRE}textconv; cat \\"$1\\"' --"
[filter "evil"]
\tclean = "sh -c '{FIRE}clean; cat'"
\tsmudge = "sh -c '{FIRE}smudge; cat'"
[alias] st = "!{FIRE}alias"
[pager]
\tlog = "{FIRE}pagerlog; cat"
[credential]
\thelper = "!{FIRE}credential"
"""
HOOK = f"#!/bin/sh\n{FIRE}hook\n"
# The guarded commands again with every GIT_* variable of the sandbox's environment unset (the guard's
# overrides live there), as if Canal had no git guard.
UNGUARDED = ("for v in $(env | sed -n 's/^\\(GIT_[A-Za-z0-9_]*\\)=.*/\\1/p'); do unset \"$v\"; done; "
             "git status; git diff; git log -p; git -p log -1; git diff --textconv; git st; git show HEAD; "
             "true")
# What those commands reach with the guard off: the triggers the guarded run proves it stops.
REACHED = {"alias", "clean", "external", "fsmonitor", "hook", "smudge", "textconv"}


@pytest.fixture
def project(host_env: Path, docker_client) -> Iterator[Path]:  # type: ignore[no-untyped-def]
    folder = host_env / "project"
    folder.mkdir()
    (folder / "canal.yaml").write_text("policy: {profile: strict}\n")
    (folder / "a.txt").write_text("one\n")
    chown_tree(folder)
    with Canal(folder, config=None) as canal:
        setup = canal._services.config.policy.profile
        assert setup == "strict"
    yield folder
    remove_project_containers(docker_client, folder)


def plant(project: Path) -> None:
    """The repository as an agent left it (e.g. from the shell under standard, before strict)."""
    git = project / ".git"
    (git / "config").write_text(CONFIG)
    for hook in ("pre-commit", "post-checkout", "post-index-change", "reference-transaction"):
        (git / "hooks" / hook).write_text(HOOK)
        (git / "hooks" / hook).chmod(0o755)
    (project / ".gitattributes").write_text("*.txt diff=evil filter=evil\n")
    (project / "a.txt").write_text("two\n")
    chown_tree(project)


def test_canal_edit_cannot_write_git_config_hooks_or_attributes(project: Path) -> None:
    with Canal(project) as canal:
        init = canal.run("git init -q . && git add a.txt canal.yaml && git -c user.email=a@b -c user.name=a "
                         "commit -qm init && echo ok")
    assert init.status in ("ok", "confirmation_required", "denied"), init.text
    for path in (".git/config", ".git/hooks/pre-commit", ".gitattributes"):
        done = run_cli(project, "write", path, stdin="[alias]\n\tx = !id\n")
        assert done.stderr.startswith("PATH_PROTECTED"), (path, done.stderr)


def test_git_status_diff_and_log_run_nothing_the_repository_names(project: Path, docker_client) -> None:  # type: ignore[no-untyped-def]
    from canal.host.paths import project_key

    with Canal(project) as canal:
        canal.up()
        container = docker_client.containers.get(f"canal-{project_key(project)}-default")
        init = container.exec_run(["sh", "-c", "git init -q . && git add a.txt && git -c user.email=a@b "
                                   "-c user.name=a commit -qm init"], workdir="/workspace")
        assert init.exit_code == 0, init.output
        plant(project)
        results = [canal.run(command) for command in (
            "git status", "git diff", "git log -p", "git -p log -1", "git diff --textconv", "git st",
            "git show HEAD")]
    fired = sorted(p.name for p in project.glob("FIRED.*"))
    assert fired == [], (fired, [r.text for r in results])
    statuses = [r.status for r in results]
    assert statuses[:3] == ["ok", "ok", "ok"], [r.text for r in results]
    # the positive control (issue 35): the same commands without the guard's variables fire these
    # triggers, so "nothing fired" above covers each of them
    unguarded = container.exec_run(["sh", "-c", UNGUARDED], workdir="/workspace", user="1000:1000")
    fired_unguarded = sorted(p.name.removeprefix("FIRED.") for p in project.glob("FIRED.*"))
    assert set(fired_unguarded) >= REACHED, (" ".join(fired_unguarded), unguarded.output[-200:])


def test_git_in_a_repository_nested_in_the_workspace_runs_nothing_it_names(project: Path,
                                                                            docker_client) -> None:  # type: ignore[no-untyped-def]
    """A repository the agent made inside the workspace (sub/.git) is read before each command whose git
    starts in it: from the command's cd, and from the session's cwd."""
    from canal.host.paths import project_key

    sub = project / "sub"
    sub.mkdir()
    (sub / "a.txt").write_text("one\n")
    chown_tree(project)
    with Canal(project) as canal:
        canal.up()
        container = docker_client.containers.get(f"canal-{project_key(project)}-default")
        init = container.exec_run(["sh", "-c", "git init -q . && git add a.txt && git -c user.email=a@b "
                                   "-c user.name=a commit -qm init"], workdir="/workspace/sub")
        assert init.exit_code == 0, init.output
        plant(sub)
        results = [canal.run(command) for command in (
            "cd sub && git status", "cd /workspace/sub && git diff",
            "cd /workspace && cd sub/. && git log -p", "cd /workspace", "cd sub", "git diff", "git status")]
    fired = sorted(p.name for p in sub.glob("FIRED.*")) + sorted(p.name for p in project.glob("FIRED.*"))
    assert fired == [], (fired, [r.text for r in results])
    statuses = [r.status for r in results]
    assert statuses == ["ok"] * 7, [r.text for r in results]
