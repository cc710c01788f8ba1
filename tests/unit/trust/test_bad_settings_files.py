"""A broken, duplicated-key, non-UTF-8, symlinked or oversized canal.yaml: an error naming file and line."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from canal.runtime.errors import ConfigError
from canal.runtime.settings.safeyaml import MAX_SETTINGS_BYTES
from canal.runtime.trust.snapshot import take_snapshot

HOST_SECRET = "root:$y$j9T$hostsecrethash:20228:0:99999:7:::\ndaemon:*:20228:0:99999:7:::\n"


def error_text(project: Path) -> str:
    with pytest.raises(ConfigError) as info:
        take_snapshot(project)  # how every command reads canal.yaml
    err = info.value
    return f"{err.message}\n{err.hint}\n{err.details}"


def test_a_symlink_is_never_followed_and_nothing_of_its_target_is_shown(tmp_path: Path) -> None:
    secret = tmp_path / "shadow"
    secret.write_text(HOST_SECRET)
    os.symlink(secret, tmp_path / "canal.yaml")
    text = error_text(tmp_path)
    assert "symlink" in text
    assert "root:" not in text
    assert "hostsecret" not in text


def test_an_oversized_file_is_refused_before_reading(tmp_path: Path) -> None:
    (tmp_path / "canal.yaml").write_text("#" * (MAX_SETTINGS_BYTES + 1))
    assert "limit" in error_text(tmp_path)


def test_a_repeated_key_names_both_lines(tmp_path: Path) -> None:
    text = "policy:\n  profile: strict\nunattended: true\npolicy:\n  profile: standard\n"
    (tmp_path / "canal.yaml").write_text(text)
    text = error_text(tmp_path)
    assert "canal.yaml:4:" in text
    assert "duplicate key 'policy' (first on line 1)" in text


def test_non_utf8_names_the_line(tmp_path: Path) -> None:
    (tmp_path / "canal.yaml").write_bytes(b"policy:\n  profile: str\xffict\n")
    assert "canal.yaml:2: not UTF-8" in error_text(tmp_path)


def test_broken_yaml_names_the_line_without_quoting_it(tmp_path: Path) -> None:
    (tmp_path / "canal.yaml").write_text("policy:\n  profile: [strict\nwhat: SECRETVALUE\n")
    text = error_text(tmp_path)
    assert "canal.yaml:" in text
    assert "SECRETVALUE" not in text


def test_a_fifo_is_refused(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "canal.yaml")
    assert "not a regular file" in error_text(tmp_path)
