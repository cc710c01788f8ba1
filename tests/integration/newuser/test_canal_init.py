"""``canal init``: a commented canal.yaml, the profile offered at a terminal, never over an existing file."""

from __future__ import annotations

import json

import yaml
from first_hour import User, at_terminal


def test_init_writes_a_commented_canal_yaml_that_takes_effect(user: User) -> None:
    root = user.project("app", {"src/app.py": "print(1)\n"})
    done = user.canal(root, "init", "--profile", "strict", "--json")
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert out["project"] == {"dir": str(root), "found_by": "canal.yaml"}
    text = (root / "canal.yaml").read_text()
    assert yaml.safe_load(text) == {"policy": {"profile": "strict"}}
    assert text.count("\n#") >= 8  # the other settings are there, commented, with their defaults
    assert (root / "canal.yaml").stat().st_uid == root.stat().st_uid
    # strict only tightens the defaults: it applies without a person's approval, from src/ too
    status = json.loads(user.canal(root / "src", "config", "status", "--json").stdout)
    assert status["state"] == "tightened"
    asked = user.canal(root / "src", "run", "--", "python3", "-c", "1")
    assert asked.returncode == 120, asked.stdout + asked.stderr  # strict: code execution is confirmed
    again = user.canal(root, "init")
    assert again.returncode == 2
    assert again.stderr.startswith("CONFIG_EXISTS\n")
    assert yaml.safe_load((root / "canal.yaml").read_text()) == {"policy": {"profile": "strict"}}


def test_init_offers_the_profile_and_the_preset_at_a_terminal(user: User) -> None:
    root = user.project("app", {"pyproject.toml": "[project]\nname = 'app'\n"})
    code, shown = at_terminal(root, user.env, ["init"], [
        ("Policy profile", "strict"), ("Image preset", ""), ("Approve these settings now?", "y")])
    assert code == 0, shown
    assert "standard" in shown
    assert "python" in shown  # suggested from pyproject.toml: Enter takes it
    assert yaml.safe_load((root / "canal.yaml").read_text()) == {"policy": {"profile": "strict"},
                                                                  "image": {"preset": "python"}}
    status = json.loads(user.canal(root, "config", "status", "--json").stdout)
    assert status["state"] == "approved"


def test_init_without_a_terminal_says_who_approves_the_image(user: User) -> None:
    root = user.project("web", {"package.json": "{}\n"})
    done = user.canal(root, "init", "--json")
    out = json.loads(done.stdout)
    assert (out["preset"], out["config"]) == ("node", "unapproved")
    text = user.canal(root, "config", "status").stdout
    assert 'image.preset: null -> "node"' in text


def test_init_refuses_the_home_folder(user: User) -> None:
    done = user.canal(user.home, "init", "--profile", "standard")
    assert done.returncode == 2
    assert done.stderr.startswith("NO_PROJECT\n")
    assert not (user.home / "canal.yaml").exists()
