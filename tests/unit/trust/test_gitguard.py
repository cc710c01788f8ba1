"""The git overrides: every driver, alias and pager the repository names is overridden; includes that
leave the workspace are refused."""

from __future__ import annotations

from pathlib import Path

import pytest

from canal.runtime.sandboxes.gitguard import GIT_CONFIG_UNSAFE, NO_HOOKS, guard_env
from tests.error_codes import raises_code


def pairs(env: dict[str, str]) -> dict[str, str]:
    count = int(env["GIT_CONFIG_COUNT"])
    return {env[f"GIT_CONFIG_KEY_{i}"]: env[f"GIT_CONFIG_VALUE_{i}"] for i in range(count)}


def repo(tmp_path: Path, config: str) -> Path:
    (tmp_path / ".git").mkdir()
    (tmp_path / ".git" / "config").write_text(config)
    return tmp_path


def test_without_a_repository_only_the_fixed_keys_and_pinned_variables() -> None:
    env = guard_env(None)
    assert pairs(env)["core.hooksPath"] == NO_HOOKS
    assert pairs(env)["core.fsmonitor"] == "false"
    assert env["GIT_CONFIG_GLOBAL"] == "/dev/null"
    assert env["GIT_CONFIG_PARAMETERS"] == ""
    assert "diff.external" not in pairs(env)


@pytest.mark.parametrize(("config", "key", "value"), [
    ('[filter "lfs"]\n\tclean = x\n', "filter.lfs.clean", ""),
    ('[filter "a.b\\"c"]\n\tsmudge = x\n', 'filter.a.b"c.smudge', ""),
    ("[diff.Evil]\n textconv = x\n", "diff.evil.textconv", "cat"),
    ("[alias] st = !touch /tmp/x\n", "alias.st", ""),
    ("[alias]\n\tLG = !x\n", "alias.lg", ""),
    ("[pager]\n\tlog = evil\n", "pager.log", "false"),
    ('[remote "origin"]\n\tuploadpack = evil\n', "remote.origin.uploadpack", "git-upload-pack"),
    ('[credential "https://x"]\n\thelper = evil\n', "credential.https://x.helper", ""),
    ("[diff]\n\texternal = evil\n", "diff.external", "sh -c"),
])
def test_named_drivers_and_keys_are_overridden(tmp_path: Path, config: str, key: str, value: str) -> None:
    found = pairs(guard_env(repo(tmp_path, config)))
    assert found[key].startswith(value) if value else found[key] == ""


def test_an_include_inside_the_workspace_is_read_too(tmp_path: Path) -> None:
    (tmp_path / "shared.cfg").write_text('[filter "inc"]\n\tclean = x\n')
    found = pairs(guard_env(repo(tmp_path, "[include]\n\tpath = ../shared.cfg\n")))
    assert found["filter.inc.clean"] == ""


@pytest.mark.parametrize("target", ["~/evil", "/tmp/evil", "../../tmp/evil", "%(prefix)/../tmp/x"])
def test_an_include_outside_the_workspace_is_refused(tmp_path: Path, target: str) -> None:
    with raises_code(GIT_CONFIG_UNSAFE, match="outside the workspace"):
        guard_env(repo(tmp_path, f'[includeIf "gitdir:/"]\n\tpath = "{target}"\n'))


def test_a_git_file_pointing_outside_the_workspace_is_refused(tmp_path: Path) -> None:
    (tmp_path / ".git").write_text("gitdir: /tmp/elsewhere\n")
    with raises_code(GIT_CONFIG_UNSAFE, match="outside the workspace"):
        guard_env(tmp_path)


def nested(tmp_path: Path, where: str, config: str) -> Path:
    """The workspace's own repository (no drivers) and another one at ``where`` inside it."""
    repo(tmp_path, "[core]\n\tbare = false\n")
    (tmp_path / where / ".git").mkdir(parents=True)
    (tmp_path / where / ".git" / "config").write_text(config)
    return tmp_path


def test_a_repository_inside_the_workspace_is_read_where_git_starts_in_it(tmp_path: Path) -> None:
    project = nested(tmp_path, "sub", '[diff "evil"]\n\ttextconv = x\n[alias]\n\tst = !x\n')
    assert "diff.evil.textconv" not in pairs(guard_env(project))
    for start in ("/workspace/sub", "/workspace/sub/deeper/still", "/workspace/sub/.git/.."):
        found = pairs(guard_env(project, starts=[start]))
        assert found["diff.evil.textconv"] == "cat"
        assert found["alias.st"] == ""
    assert "diff.evil.textconv" not in pairs(guard_env(project, starts=["/workspace", "/tmp/sub"]))


def test_a_repository_given_by_git_dir_is_read_and_a_git_file_followed(tmp_path: Path) -> None:
    project = nested(tmp_path, "mods/x.git", '[filter "f"]\n\tclean = x\n')
    (project / "mods" / "x.git" / ".git").rename(project / "mods" / "x")
    (project / "mods" / "x.git").rmdir()
    assert pairs(guard_env(project, git_dirs=["/workspace/mods/x"]))["filter.f.clean"] == ""
    (project / "w").mkdir()
    (project / "w" / ".git").write_text("gitdir: ../mods/x\n")  # a linked work tree
    assert pairs(guard_env(project, starts=["/workspace/w"]))["filter.f.clean"] == ""


def test_a_start_reached_through_a_symlink_is_refused(tmp_path: Path) -> None:
    project = nested(tmp_path, "real", '[filter "f"]\n\tclean = x\n')
    (project / "link").symlink_to("/tmp")
    with raises_code(GIT_CONFIG_UNSAFE, match="symlink"):
        guard_env(project, starts=["/workspace/link/repo"])
    (project / "real" / "gitlink").symlink_to(project / "real" / ".git")
    with raises_code(GIT_CONFIG_UNSAFE, match="symlink"):
        guard_env(project, git_dirs=["/workspace/real/gitlink"])


def test_an_external_diff_the_session_or_request_would_pass_on_is_pinned_to_gits_own() -> None:
    """Issue 39: GIT_EXTERNAL_DIFF beats diff.external; a tool's env or a session's export named a
    workspace script. Pinned only when something sets it: its own value would change every diff."""
    from canal.runtime.sandboxes.gitguard import GIT_DIFF

    assert "GIT_EXTERNAL_DIFF" not in guard_env(None)
    assert guard_env(None, given=["GIT_EXTERNAL_DIFF", "LANG"])["GIT_EXTERNAL_DIFF"] == GIT_DIFF
