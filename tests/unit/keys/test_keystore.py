"""KeyStore: creation, permissions like ssh, env keys, rotation, retirement, derivation."""

from __future__ import annotations

import base64
import multiprocessing
import os
from pathlib import Path

import pytest

from canal.host.keys import (
    KEY_ENV_INVALID,
    KEY_FILE_INSECURE,
    KEY_RETIRE_REFUSED,
    KEY_ROTATE_UNAVAILABLE,
    KEY_UNKNOWN,
    KeyStore,
)
from canal.host.keys.errors import KEY_ERROR_CODES
from tests.error_codes import raises_code


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    return tmp_path / "config" / "keys"


def test_first_use_creates_private_ring(folder: Path) -> None:
    ks = KeyStore(folder, env={})
    assert ks.primary_id.startswith("k-")
    assert (folder / "keyring.json").stat().st_mode & 0o777 == 0o600
    assert folder.stat().st_mode & 0o777 == 0o700
    assert KeyStore(folder, env={}).primary_id == ks.primary_id


def test_derive_is_stable_and_separates_purposes(folder: Path) -> None:
    ks = KeyStore(folder, env={})
    audit = ks.derive("audit-hmac")
    assert len(audit) == 32
    assert audit == KeyStore(folder, env={}).derive("audit-hmac")
    assert audit != ks.derive("approval-token")


@pytest.mark.parametrize("mode", [0o644, 0o640, 0o604, 0o660])
def test_key_file_readable_by_others_is_refused(folder: Path, mode: int) -> None:
    KeyStore(folder, env={}).keys()
    ring = folder / "keyring.json"
    ring.chmod(mode)
    with raises_code(KEY_FILE_INSECURE) as info:
        KeyStore(folder, env={}).keys()
    assert info.value.code == "KEY_FILE_INSECURE"
    assert info.value.hint == f"chmod 600 {ring}"


def test_key_folder_writable_by_others_is_refused(folder: Path) -> None:
    KeyStore(folder, env={}).keys()
    folder.chmod(0o777)
    with raises_code(KEY_FILE_INSECURE, match="write to"):
        KeyStore(folder, env={}).keys()


def test_symlinked_key_file_is_refused(folder: Path, tmp_path: Path) -> None:
    KeyStore(folder, env={}).keys()
    real = tmp_path / "elsewhere.json"
    (folder / "keyring.json").rename(real)
    (folder / "keyring.json").symlink_to(real)
    with raises_code(KEY_FILE_INSECURE, match="not a plain file"):
        KeyStore(folder, env={}).keys()


def test_env_key_is_used_and_never_writes_a_file(folder: Path) -> None:
    raw = os.urandom(32)
    ks = KeyStore(folder, env={"CANAL_KEY": base64.b64encode(raw).decode()})
    assert ks.source == "env"
    assert ks.material(ks.primary_id) == raw
    assert not folder.exists()


@pytest.mark.parametrize("value", ["not base64!", base64.b64encode(b"short").decode()])
def test_bad_env_key_is_refused(folder: Path, value: str) -> None:
    with raises_code(KEY_ENV_INVALID) as info:
        KeyStore(folder, env={"CANAL_KEY": value}).keys()
    assert "CANAL_KEY" in info.value.hint


def test_rotate_keeps_old_key_decrypt_only_until_retired(folder: Path) -> None:
    ks = KeyStore(folder, env={})
    old = ks.primary_id
    old_material = ks.material(old)
    new = ks.rotate()
    assert ks.primary_id == new.id != old
    assert {k.id: k.state for k in ks.keys()} == {old: "decrypt-only", new.id: "primary"}  # noqa: SIM118
    assert ks.material(old) == old_material
    assert set(ks.derive_all("audit-hmac")) == {old, new.id}
    with raises_code(KEY_RETIRE_REFUSED):
        ks.retire(new.id)
    ks.retire(old)
    assert {k.id: k.state for k in ks.keys()} == {old: "retired", new.id: "primary"}  # noqa: SIM118
    with raises_code(KEY_UNKNOWN):
        ks.material(old)
    assert old_material.hex() not in (folder / "keyring.json").read_text()
    assert base64.b64encode(old_material).decode() not in (folder / "keyring.json").read_text()


def test_env_keys_cannot_be_rotated(folder: Path) -> None:
    ks = KeyStore(folder, env={"CANAL_KEY": base64.b64encode(os.urandom(32)).decode()})
    with raises_code(KEY_ROTATE_UNAVAILABLE):
        ks.rotate()


def _primary(folder: str, out: multiprocessing.Queue) -> None:  # type: ignore[type-arg]
    out.put(KeyStore(Path(folder), env={}).primary_id)


def test_concurrent_first_use_agrees_on_one_key(folder: Path) -> None:
    ctx = multiprocessing.get_context("spawn")
    out: multiprocessing.Queue = ctx.Queue()  # type: ignore[type-arg]
    procs = [ctx.Process(target=_primary, args=(str(folder), out)) for _ in range(4)]
    for p in procs:
        p.start()
    ids = {out.get(timeout=60) for _ in procs}
    for p in procs:
        p.join(timeout=60)
    assert len(ids) == 1


def test_error_codes_are_pinned() -> None:
    assert sorted(KEY_ERROR_CODES) == [
        "KEY_ENV_INVALID", "KEY_ERROR", "KEY_FILE_INSECURE", "KEY_FILE_INVALID", "KEY_RETIRE_REFUSED",
        "KEY_ROTATE_UNAVAILABLE", "KEY_UNKNOWN",
    ]
