"""One ``CANAL_STATE_DIR`` for two projects: a root with one folder per project, never one mixed folder
(issue 30, finding 1). An old flat folder is moved into its project's folder, or refused when it holds
two projects' state (nothing moved, nothing deleted)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from canal.cli.main import cli
from canal.host.paths import project_key, state_path_for
from canal.runtime.services import Services


@pytest.fixture
def two(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path, Path]:
    root = tmp_path / "shared-state"
    monkeypatch.setenv("CANAL_STATE_DIR", str(root))
    monkeypatch.setenv("CANAL_CONFIG_DIR", str(tmp_path / "config"))
    monkeypatch.delenv("CANAL_KEY", raising=False)
    monkeypatch.delenv("CANAL_PROJECT_DIR", raising=False)
    a, b = tmp_path / "alpha", tmp_path / "beta"
    a.mkdir()
    b.mkdir()
    return root, a, b


def canal(*args: str) -> tuple[int, str, str]:
    done = CliRunner().invoke(cli, list(args))
    return done.exit_code, done.stdout, done.stderr


def test_two_projects_under_one_state_dir_keep_their_own_folders(two: tuple[Path, Path, Path]) -> None:
    root, a, b = two
    one, other = Services(a), Services(b)
    assert one.state_dir != other.state_dir
    assert one.state_dir == root / "projects" / project_key(a)
    assert other.state_dir == root / "projects" / project_key(b)
    one.audit.append("test.event", {"n": 1})
    other.audit.append("test.event", {"n": 2})
    for project in (a, b):
        code, out, err = canal("-C", str(project), "audit", "verify", "--json")
        assert code == 0, err
        assert json.loads(out)["status"] == "ok"
    code, out, err = canal("-C", str(b), "doctor", "--json")
    checks = {c["name"]: c for c in json.loads(out)["checks"]}
    assert checks["state_dir"]["ok"], checks["state_dir"]
    assert str(other.state_dir) in checks["state_dir"]["detail"]


def flat_folder(root: Path, *projects: Path) -> None:
    """The layout before: CANAL_STATE_DIR was one project's folder; each project here opened the log
    (the first) or wrote an approval record in it (the others)."""
    (root / "audit").mkdir(parents=True)
    first = {"seq": 0, "event": "audit.opened", "data": {"project_id": project_key(projects[0])}}
    (root / "audit" / "audit.jsonl").write_text(json.dumps(first) + "\n")
    for other in projects[1:]:
        (root / "trusted-config.json").write_text(json.dumps({"project": str(other.resolve())}))


def test_an_old_flat_folder_of_one_project_moves_into_its_folder(two: tuple[Path, Path, Path]) -> None:
    root, a, _ = two
    flat_folder(root, a)
    folder = Services(a).state_dir
    assert folder == state_path_for(a)
    assert (folder / "audit" / "audit.jsonl").is_file()
    assert not (root / "audit").exists()


def test_a_flat_folder_mixing_two_projects_is_refused_and_kept(two: tuple[Path, Path, Path]) -> None:
    root, a, b = two
    flat_folder(root, a, b)
    code, _out, err = canal("-C", str(b), "audit", "verify")
    assert code != 0
    assert err.splitlines()[0] == "STATE_DIR_MIXED"
    assert project_key(a) in err
    assert project_key(b) in err
    assert "Next: " in err
    assert "mv " in err
    assert (root / "audit" / "audit.jsonl").is_file()  # nothing moved, nothing deleted
    assert (root / "trusted-config.json").is_file()
    assert not (root / "projects").exists()
    code, out, _ = canal("-C", str(a), "doctor", "--json")
    state = next(c for c in json.loads(out)["checks"] if c["name"] == "state_dir")
    assert not state["ok"]
    assert "STATE_DIR_MIXED" in state["detail"] or "two projects" in state["detail"]
