"""Several real processes advancing one document lose no update; rotation keeps every file readable."""

from __future__ import annotations

import multiprocessing
from pathlib import Path

from canal.host.keys import KeyStore
from canal.host.sealed import FileLedger, MemoryLedger, SealedRevisionConflictError, SealedStore
from tests.unit.sealed.conftest import CORPUS, run_doc

WRITERS = 4
INCREMENTS = 8


def _writer(root: str, keys_dir: str, ledger_path: str, name: str) -> None:
    store = SealedStore(Path(root), KeyStore(Path(keys_dir), env={}), FileLedger(Path(ledger_path)))
    done = 0
    while done < INCREMENTS:
        doc, rev = store.load("counter")
        doc["count"] += 1
        doc["log"].append(f"{name}-{done}")
        try:
            store.save("counter", doc, sensitive_paths=["log"], expected_revision=rev)
        except SealedRevisionConflictError:
            continue  # another process won this round: reload and retry
        done += 1


def test_concurrent_writers_lose_no_update(tmp_path: Path) -> None:
    keys = KeyStore(tmp_path / "keys", env={})
    ledger = FileLedger(tmp_path / "ledger.json")
    store = SealedStore(tmp_path / "state", keys, ledger)
    store.save("counter", {"count": 0, "log": []}, sensitive_paths=["log"], expected_revision=0)
    ctx = multiprocessing.get_context("spawn")
    procs = [ctx.Process(target=_writer, args=(str(tmp_path / "state"), str(tmp_path / "keys"),
                                               str(tmp_path / "ledger.json"), f"w{i}"))
             for i in range(WRITERS)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(timeout=120)
    assert [p.exitcode for p in procs] == [0] * WRITERS
    doc, rev = store.load("counter")
    assert doc["count"] == WRITERS * INCREMENTS
    assert sorted(doc["log"]) == sorted(f"w{i}-{n}" for i in range(WRITERS) for n in range(INCREMENTS))
    assert rev == WRITERS * INCREMENTS + 1
    assert ledger.latest_revision("counter") is not None


def test_rotation_keeps_every_file_readable(tmp_path: Path) -> None:
    keys = KeyStore(tmp_path / "keys", env={})
    store = SealedStore(tmp_path / "state", keys, MemoryLedger())
    docs = {f"run-{i}": run_doc(i + 1) for i in range(3)}
    docs["run-0"]["steps"][0]["result"]["stdout"] = CORPUS["secrets"][0]["text"]
    for doc_id, doc in docs.items():
        store.save(doc_id, doc, sensitive_paths=["steps.*.result"], expected_revision=0)
    secrets_before = store.secrets("run-0")
    old = keys.primary_id
    keys.rotate()
    for doc_id, doc in docs.items():  # old key is decrypt-only: still readable before re-sealing
        loaded_before, _ = store.load(doc_id)
        if doc_id != "run-0":  # run-0's secret is replaced by its placeholder, as after re-sealing
            assert loaded_before == doc
    assert store.secrets("run-0") == secrets_before
    for doc_id in docs:
        store.reseal(doc_id)
        assert store.envelope(doc_id).key_id == keys.primary_id != old
    keys.retire(old)
    fresh = SealedStore(tmp_path / "state", KeyStore(tmp_path / "keys", env={}), store.ledger)
    for doc_id, doc in docs.items():
        loaded, rev = fresh.load(doc_id)
        assert rev == 2
        if doc_id != "run-0":
            assert loaded == doc
    assert fresh.secrets("run-0") == secrets_before
