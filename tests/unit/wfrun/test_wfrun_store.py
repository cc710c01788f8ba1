"""``SealedRunStore`` over a real sealed store (no Docker): sealing, secret round trip, error mapping."""

from __future__ import annotations

from pathlib import Path

import pytest

from canal.runtime.services import Services
from canal.runtime.wfrun.store import SealedRunStore
from canal.workflows.errors import RUN_CONFLICT, RUN_NOT_FOUND
from tests.error_codes import raises_code

# Detected by the redactor's GitHub rule: stored as a placeholder and restored on load.
GITHUB_TOKEN = "ghp_" + "aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3zA5"
PLAIN_SECRET = "hunter2-correct-horse"


@pytest.fixture
def store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> SealedRunStore:
    monkeypatch.setenv("CANAL_CONFIG_DIR", str(tmp_path / "config"))
    monkeypatch.setenv("CANAL_STATE_DIR", str(tmp_path / "state"))
    (tmp_path / "project").mkdir()
    return SealedRunStore(Services(tmp_path / "project").sealed)


def _doc(token: str) -> dict[str, object]:
    return {"run_id": "wr_1", "status": "ready", "gate": {"info": {"name": "demo", "token": token}},
            "results": {"create": {"id": "prj-1", "note": f"used {token}"}}}


PATHS = [("gate", "info", "token"), ("results", "create")]


@pytest.mark.parametrize("token", [GITHUB_TOKEN, PLAIN_SECRET])
def test_sensitive_values_are_sealed_and_come_back_whole(store: SealedRunStore, token: str) -> None:
    assert store.create("wr_1", _doc(token), sensitive_paths=PATHS) == 1
    raw = (store.sealed.root / "wfrun.wr_1.json").read_bytes()
    assert token.encode() not in raw
    assert b'"status": "ready"' in raw  # structure stays readable
    loaded = store.load("wr_1")
    assert loaded.revision == 1
    assert loaded.doc == _doc(token)


def test_a_secret_outside_the_sensitive_paths_is_redacted_at_rest_and_restored(store: SealedRunStore) -> None:
    doc = {"run_id": "wr_2", "status": "ready", "attention": f"saw {GITHUB_TOKEN}"}
    store.create("wr_2", doc, sensitive_paths=[])
    assert GITHUB_TOKEN.encode() not in (store.sealed.root / "wfrun.wr_2.json").read_bytes()
    assert store.load("wr_2").doc == doc


def test_revisions_conflicts_and_missing_runs_use_the_engine_errors(store: SealedRunStore) -> None:
    store.create("wr_1", _doc(PLAIN_SECRET), sensitive_paths=PATHS)
    with raises_code(RUN_CONFLICT):
        store.create("wr_1", _doc(PLAIN_SECRET), sensitive_paths=PATHS)
    assert store.save("wr_1", _doc("x"), expected_revision=1, sensitive_paths=PATHS) == 2
    with raises_code(RUN_CONFLICT) as stale:
        store.save("wr_1", _doc("y"), expected_revision=1, sensitive_paths=PATHS)
    assert stale.value.code == "RUN_CONFLICT"
    with raises_code(RUN_NOT_FOUND):
        store.load("wr_missing")
    store.sealed.save("other-doc", {"a": 1}, expected_revision=0)
    assert store.list_ids() == ["wr_1"]
