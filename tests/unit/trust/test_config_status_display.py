"""``canal config status`` (and the question ``config approve`` asks) shows each changed setting with its
hidden characters escaped: the approver of the settings reads what takes effect (issue 39's rule)."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from canal.cli.main import cli
from tests.hidden_chars import HIDDEN, escaped, leaked


def test_a_changed_setting_is_shown_with_hidden_characters_escaped(tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CANAL_STATE_DIR", str(tmp_path / "state"))
    monkeypatch.setenv("CANAL_CONFIG_DIR", str(tmp_path / "config"))
    project = tmp_path / "project"
    project.mkdir()
    image = "evil" + "".join(f"\\u{ord(c):04x}" for c in HIDDEN) + ":1"
    (project / "canal.yaml").write_text(f'sandbox:\n  image: "{image}"\n')
    monkeypatch.setenv("CANAL_PROJECT_DIR", str(project))
    shown = CliRunner().invoke(cli, ["config", "status"])
    assert shown.exit_code == 0, shown.output
    assert "sandbox.image: " in shown.stdout
    value = shown.stdout.split("sandbox.image: ", 1)[1]
    assert not leaked(value), leaked(value)
    json_escaped = {"\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t"}
    for char in HIDDEN:  # JSON writes the C0 controls (\u0001, \r); visible() the rest (\x85, \u202e)
        form = json_escaped.get(char, f"\\u{ord(char):04x}") if ord(char) < 0x20 else escaped(char)
        assert form in value, form
