"""Each kind of damage has its own error code, and a failed save never overwrites the file."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from canal.host.keys import KeyStore
from canal.host.sealed import (
    SEALED_DELETED,
    SEALED_ERRORS,
    SEALED_FIELDS_CHANGED,
    SEALED_SWAPPED,
    SEALED_TAMPERED,
    SEALED_TRUNCATED,
    SEALED_UNKNOWN_VERSION,
    SEALED_WRONG_KEY,
    MemoryLedger,
    SealedNotFoundError,
    SealedRevisionConflictError,
    SealedRolledBackError,
    SealedStore,
)
from tests.error_codes import raises_code
from tests.unit.sealed.conftest import run_doc

SENSITIVE = ["gate.deploy.password", "steps.*.result"]


@pytest.fixture
def saved(store: SealedStore) -> Path:
    store.save("run-1", run_doc(), sensitive_paths=SENSITIVE, expected_revision=0)
    return store.path_for("run-1")


def _edit(path: Path, change: Any) -> None:
    data = json.loads(path.read_text())
    change(data)
    path.write_text(json.dumps(data))


def _expect(store: SealedStore, error: Any, path: Path) -> None:
    before = path.read_bytes() if path.exists() else None
    with raises_code(error):
        store.load("run-1")
    with raises_code(error):
        store.save("run-1", run_doc(), sensitive_paths=SENSITIVE, expected_revision=1)
    assert (path.read_bytes() if path.exists() else None) == before  # nothing overwritten


def test_wrong_key(saved: Path, tmp_path: Path, ledger: MemoryLedger) -> None:
    other = SealedStore(saved.parent, KeyStore(tmp_path / "other-keys", env={}), ledger)
    _expect(other, SEALED_WRONG_KEY, saved)


def _flip(enc: str) -> str:
    head, rest = enc.split("data:", 1)
    return head + "data:" + ("A" if rest[0] != "A" else "B") + rest[1:]


def test_tampered_ciphertext(store: SealedStore, saved: Path) -> None:
    def flip(d: dict[str, Any]) -> None:
        deploy = d["doc"]["gate"]["deploy"]
        deploy["password"] = _flip(deploy["password"])
    _edit(saved, flip)
    _expect(store, SEALED_TAMPERED, saved)


def test_tampered_wrapped_data_key(store: SealedStore, saved: Path) -> None:
    _edit(saved, lambda d: d.update(data_key="A" + d["data_key"][1:] if d["data_key"][0] != "A"
                                    else "B" + d["data_key"][1:]))
    _expect(store, SEALED_TAMPERED, saved)


def test_swapped_values(store: SealedStore, saved: Path) -> None:
    def swap(d: dict[str, Any]) -> None:
        steps = d["doc"]["steps"]
        steps[0]["result"], steps[1]["result"] = steps[1]["result"], steps[0]["result"]
    _edit(saved, swap)
    _expect(store, SEALED_SWAPPED, saved)


@pytest.mark.parametrize("change", [
    lambda d: d["doc"].pop("approved_by"),
    lambda d: d["doc"].update(extra="added"),
    lambda d: d["doc"].update(status="done"),
    lambda d: d["doc"]["steps"].pop(),
    lambda d: d["doc"]["gate"]["deploy"].pop("password"),
    lambda d: d.update(unknown_header=1),
], ids=["deleted", "added", "edited", "step-deleted", "sealed-deleted", "header-added"])
def test_deleted_added_or_edited_field(store: SealedStore, saved: Path, change: Any) -> None:
    _edit(saved, change)
    _expect(store, SEALED_FIELDS_CHANGED, saved)


def test_rolled_back_file(store: SealedStore, saved: Path, tmp_path: Path) -> None:
    shutil.copy(saved, tmp_path / "old.json")
    doc, rev = store.load("run-1")
    doc["status"] = "done"
    store.save("run-1", doc, expected_revision=rev)
    shutil.copy(tmp_path / "old.json", saved)
    with pytest.raises(SealedRolledBackError):
        store.load("run-1")
    with pytest.raises(SealedRolledBackError):
        store.save("run-1", doc, expected_revision=1)


@pytest.mark.parametrize("keep", [0, 1, 100, -5])
def test_truncated_file(store: SealedStore, saved: Path, keep: int) -> None:
    raw = saved.read_bytes()
    saved.write_bytes(raw[:keep])
    _expect(store, SEALED_TRUNCATED, saved)


def test_unknown_schema_version(store: SealedStore, saved: Path) -> None:
    _edit(saved, lambda d: d.update(format="canal.sealed/9"))
    _expect(store, SEALED_UNKNOWN_VERSION, saved)


def test_deleted_file_known_to_the_ledger(store: SealedStore, saved: Path) -> None:
    saved.unlink()
    with raises_code(SEALED_DELETED):
        store.load("run-1")
    with raises_code(SEALED_DELETED):
        store.save("run-1", run_doc(), expected_revision=0)
    assert not saved.exists()


def test_missing_document(store: SealedStore) -> None:
    with pytest.raises(SealedNotFoundError):
        store.load("nope")


def test_file_renamed_to_another_id(store: SealedStore, saved: Path) -> None:
    shutil.copy(saved, saved.with_name("run-2.json"))
    with raises_code(SEALED_FIELDS_CHANGED):
        store.load("run-2")


def test_revision_conflict(store: SealedStore, saved: Path) -> None:
    before = saved.read_bytes()
    with pytest.raises(SealedRevisionConflictError) as info:
        store.save("run-1", run_doc(), expected_revision=0)
    assert info.value.details == {"doc_id": "run-1", "current": 1, "expected": 0}
    assert saved.read_bytes() == before


def test_error_codes_are_distinct_and_pinned() -> None:
    codes = [e.code for e in SEALED_ERRORS]
    assert len(codes) == len(set(codes))
    assert sorted(codes) == sorted([
        "SEALED_ERROR", "SEALED_NOT_FOUND", "SEALED_DELETED", "SEALED_WRONG_KEY", "SEALED_TAMPERED",
        "SEALED_SWAPPED", "SEALED_FIELDS_CHANGED", "SEALED_ROLLED_BACK", "SEALED_TRUNCATED",
        "SEALED_UNKNOWN_VERSION", "SEALED_REVISION_CONFLICT", "SEALED_LOCK_TIMEOUT",
        "SEALED_INVALID_DOCUMENT",
    ])
