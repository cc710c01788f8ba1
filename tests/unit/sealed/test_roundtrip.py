"""Round trip, what stays readable, what is sealed, and that no corpus secret reaches any byte on disk."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from canal.host.redact import restore
from canal.host.sealed import SEALED_INVALID_DOCUMENT, SealedStore
from tests.error_codes import raises_code
from tests.unit.sealed.conftest import CORPUS, run_doc

SENSITIVE = ["gate.deploy.password", "steps.*.result"]


def test_round_trip(store: SealedStore) -> None:
    doc = run_doc()
    assert store.save("run-1", doc, sensitive_paths=SENSITIVE, expected_revision=0) == 1
    loaded, revision = store.load("run-1")
    assert (loaded, revision) == (doc, 1)


def test_structure_stays_readable_and_declared_values_are_sealed(store: SealedStore) -> None:
    store.save("run-1", run_doc(), sensitive_paths=SENSITIVE, expected_revision=0)
    on_disk = json.loads(store.path_for("run-1").read_text())
    assert on_disk["doc"]["status"] == "running"
    assert on_disk["doc"]["approved_by"] == "alice"
    assert on_disk["doc"]["steps"][3]["id"] == "s03"
    assert on_disk["doc"]["steps"][3]["result"].startswith("ENC[AES256_GCM,data:")
    assert on_disk["doc"]["gate"]["deploy"]["password"].startswith("ENC[AES256_GCM,")
    assert "hunter2-plain-gate-value" not in store.path_for("run-1").read_text()
    assert store.path_for("run-1").stat().st_mode & 0o777 == 0o600


def test_a_predicate_can_declare_sensitive_paths(store: SealedStore) -> None:
    store.save("run-1", run_doc(), sensitive_paths=lambda p: p[-1:] == ("password",), expected_revision=0)
    assert store.load("run-1")[0] == run_doc()
    assert "hunter2" not in store.path_for("run-1").read_text()


def test_no_corpus_secret_in_any_byte_under_the_state_folder(store: SealedStore, tmp_path: Path) -> None:
    doc = run_doc()
    doc["steps"] = [{"id": e["kind"], "stdout": e["text"]} for e in CORPUS["secrets"]]
    doc["gate"]["deploy"]["token"] = CORPUS["secrets"][3]["secret"]
    doc["notes"] = {e["kind"]: e["text"] for e in CORPUS["secrets"]}
    store.save("run-1", doc, sensitive_paths=["gate.deploy.password"], expected_revision=0)
    loaded, _ = store.load("run-1")
    store.save("run-1", loaded, expected_revision=1)
    blobs = [p.read_bytes() for p in (tmp_path / "state").rglob("*") if p.is_file()]
    for entry in CORPUS["secrets"]:
        for line in entry["secret"].splitlines():  # a private key must not survive even line by line
            assert all(line.encode() not in blob for blob in blobs), entry["kind"]
    # the values are recoverable only through the sealed map
    mapping = store.secrets("run-1")
    assert restore(loaded["steps"][0]["stdout"], mapping) == CORPUS["secrets"][0]["text"]


def test_sealed_once_stays_sealed(store: SealedStore) -> None:
    store.save("run-1", run_doc(), sensitive_paths=SENSITIVE, expected_revision=0)
    doc, rev = store.load("run-1")
    store.save("run-1", doc, expected_revision=rev)  # the writer forgot to declare them this time
    assert "hunter2" not in store.path_for("run-1").read_text()


@pytest.mark.parametrize("doc_id", ["../escape", "a/b", "", ".hidden", "x" * 200])
def test_bad_document_ids_are_refused(store: SealedStore, doc_id: str) -> None:
    with raises_code(SEALED_INVALID_DOCUMENT):
        store.save(doc_id, {}, expected_revision=0)


def test_non_json_values_are_refused(store: SealedStore) -> None:
    with raises_code(SEALED_INVALID_DOCUMENT):
        store.save("run-1", {"when": object()}, expected_revision=0)
    assert not store.path_for("run-1").exists()
