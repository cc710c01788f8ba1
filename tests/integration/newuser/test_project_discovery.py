"""Findings 4, 7 and 8: which folder is the project, and saying so."""

from __future__ import annotations

import json

from first_hour import User


def test_a_subfolder_of_a_repository_is_the_same_project(user: User) -> None:
    root = user.project("app", {"marker.txt": "at the root\n", "src/main.py": "print(1)\n"}, git=True)
    from_src = user.canal(root / "src", "run", "--", "cat", "marker.txt")
    assert from_src.returncode == 0, from_src.stderr
    assert from_src.stdout.startswith("at the root")
    doctor = json.loads(user.canal(root / "src", "doctor", "--json").stdout)
    assert doctor["project"] == {"dir": str(root), "found_by": "repository"}
    listed = json.loads(user.canal(root / "src", "ps", "--json").stdout)
    assert [row["name"] for row in listed["sandboxes"]] == ["default"]


def test_canal_yaml_is_found_before_the_repository_root(user: User) -> None:
    root = user.project("mono", {"svc/canal.yaml": "timeouts: {command: 60}\n", "svc/lib/x.txt": "x\n"},
                        git=True)
    doctor = user.canal(root / "svc" / "lib", "doctor", "--json")
    assert json.loads(doctor.stdout)["project"] == {"dir": str(root / "svc"), "found_by": "canal.yaml"}
    text = user.canal(root / "svc" / "lib", "doctor")
    assert f"project    {root / 'svc'} (the nearest folder upward with canal.yaml)" in text.stdout


def test_the_home_folder_is_not_a_project(user: User) -> None:
    done = user.canal(user.home, "run", "--", "pwd")
    assert done.returncode == 2, done.stdout + done.stderr
    assert done.stderr.startswith("NO_PROJECT\n"), done.stderr
    assert "canal init" in done.stderr
    assert "CANAL_STATE_DIR" not in done.stderr


def test_a_missing_project_dir_is_an_error_not_a_traceback(user: User) -> None:
    done = user.canal(user.home, "run", "--", "ls", env={"CANAL_PROJECT_DIR": "/does/not/exist"})
    assert done.returncode == 2
    assert "Traceback" not in done.stderr
    assert done.stderr.splitlines()[:2] == [
        "NO_PROJECT", "The project folder /does/not/exist (CANAL_PROJECT_DIR) does not exist."]
    as_json = user.canal(user.home, "run", "--json", "--", "ls", env={"CANAL_PROJECT_DIR": "/nope"})
    assert json.loads(as_json.stdout)["code"] == "NO_PROJECT"


def test_doctor_fails_on_a_canal_yaml_with_a_syntax_error(user: User) -> None:
    root = user.project("broken", {"canal.yaml": "policy:\n  profile: [strict\n"})
    done = user.canal(root, "doctor")
    assert done.returncode == 1, done.stdout
    assert "FAIL config" in done.stdout
    assert "canal.yaml" in done.stdout
    assert f"project    {root} (the nearest folder upward with canal.yaml)" in done.stdout
