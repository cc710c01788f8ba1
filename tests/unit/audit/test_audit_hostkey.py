from __future__ import annotations

import base64
import stat
from pathlib import Path

import pytest

from runtime.audit import AuditKeyError
from runtime.audit.hostkey import KEY_FILE, host_key


@pytest.fixture(autouse=True)
def config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("CANAL_CONFIG_DIR", str(tmp_path / "config"))
    monkeypatch.delenv("CANAL_KEY", raising=False)
    return tmp_path / "config"


def test_key_file_is_created_private_and_reused(config: Path) -> None:
    first = host_key("audit-hmac")
    path = config / "keys" / KEY_FILE
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    assert host_key("audit-hmac") == first
    assert host_key("approval-hmac")[0] != first[0]  # one subkey per purpose, same key id
    assert host_key("approval-hmac")[1] == first[1]


def test_loose_key_file_is_refused(config: Path) -> None:
    host_key("audit-hmac")
    (config / "keys" / KEY_FILE).chmod(0o644)
    with pytest.raises(AuditKeyError) as info:
        host_key("audit-hmac")
    assert "chmod 600" in info.value.hint


def test_env_key_wins_and_is_checked(monkeypatch: pytest.MonkeyPatch, config: Path) -> None:
    monkeypatch.setenv("CANAL_KEY", base64.b64encode(b"e" * 32).decode())
    key, key_id = host_key("audit-hmac")
    assert len(key) == 32
    assert key_id.startswith("k-")
    assert not (config / "keys" / KEY_FILE).exists()
    monkeypatch.setenv("CANAL_KEY", "not base64!")
    with pytest.raises(AuditKeyError):
        host_key("audit-hmac")
    monkeypatch.setenv("CANAL_KEY", base64.b64encode(b"short").decode())
    with pytest.raises(AuditKeyError) as info:
        host_key("audit-hmac")
    assert "32" in info.value.message
