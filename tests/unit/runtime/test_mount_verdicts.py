"""Issue 35: the mount allowlist was caught only by integration tests. Each verdict here is pure: the
allowlist (project, mount_roots) and the folders refused whatever canal.yaml says."""

from __future__ import annotations

from pathlib import Path

import pytest

from canal.runtime.settings.mounts import check_user_mounts, verdict
from canal.sandbox.errors import MOUNT_REFUSED
from canal.sandbox.spec import Mount
from tests.error_codes import raises_code


@pytest.fixture
def layout(tmp_path: Path) -> tuple[Path, Path, Path]:
    project, root, state = tmp_path / "project", tmp_path / "shared", tmp_path / "state"
    for folder in (project / "data", root / "models", state):
        folder.mkdir(parents=True)
    return project, root, state


def _rule(source: Path | str, layout: tuple[Path, Path, Path], roots: tuple[Path, ...] = ()) -> str:
    project, _, state = layout
    found = verdict(Mount(source=Path(source), target="/mnt/x"), project, roots, state)
    return found.rule if not found.allowed else "allowed"


def test_inside_the_project_or_a_listed_root_is_allowed(layout: tuple[Path, Path, Path]) -> None:
    project, root, _ = layout
    assert _rule(project / "data", layout) == "allowed"
    assert _rule(root / "models", layout, (root,)) == "allowed"
    assert _rule(root / "models", layout) == "not-allowlisted"  # the same folder, no root listed


@pytest.mark.parametrize(("source", "rule"), [
    ("/", "system"), ("/etc", "system"), ("/usr/lib", "system"), ("/var/log", "system"),
    ("/var/run/docker.sock", "engine"), ("/run/containerd", "engine"), ("/var/lib/docker", "engine"),
])
def test_system_and_engine_folders_are_refused_even_under_a_root(layout: tuple[Path, Path, Path],
                                                                  source: str, rule: str) -> None:
    assert _rule(source, layout, (Path("/"),)) in (rule, "system")
    assert _rule(source, layout, (Path("/"),)) != "allowed"


def test_canal_state_and_credentials_are_refused(layout: tuple[Path, Path, Path]) -> None:
    _, _, state = layout
    assert _rule(state, layout, (state.parent,)) == "canal-state"
    assert _rule(Path.home() / ".ssh", layout, (Path.home(),)) == "credentials"
    assert _rule(Path.home(), layout, (Path.home(),)) in ("home", "canal-state", "canal-install")


def test_a_symlink_in_the_project_is_judged_by_where_it_leads(layout: tuple[Path, Path, Path]) -> None:
    project, _, _ = layout
    (project / "etc-link").symlink_to("/etc")
    assert _rule(project / "etc-link", layout) == "system"
    with raises_code(MOUNT_REFUSED) as info:
        check_user_mounts([Mount(source=project / "etc-link", target="/mnt/e")], project, (), layout[2])
    assert info.value.code == "MOUNT_REFUSED"


def test_the_settings_files_are_bound_read_only_over_themselves(tmp_path: Path) -> None:
    """Issue 35: caught only by integration tests before. canal.yaml and each policy file inside the
    project are mounted read-only at their own place."""
    from canal.runtime.sandboxes.start import settings_mounts

    project = tmp_path / "p"
    (project / "policy").mkdir(parents=True)
    (project / "canal.yaml").write_text("policy:\n  files: [policy/extra.yaml]\n")
    (project / "policy" / "extra.yaml").write_text("rules: []\n")
    (project / "policy" / "other.yaml").write_text("rules: []\n")  # not named: not a settings file
    mounts = {m.target: m for m in settings_mounts(project, "/workspace")}
    assert set(mounts) == {"/workspace/canal.yaml", "/workspace/policy/extra.yaml"}
    assert all(m.read_only for m in mounts.values())
    assert mounts["/workspace/canal.yaml"].source == project / "canal.yaml"
