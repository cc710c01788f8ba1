from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from canal.host.keys import KeyStore
from canal.host.sealed import MemoryLedger, SealedStore

CORPUS = json.loads((Path(__file__).parents[2] / "data" / "secrets" / "corpus.json").read_text())


def run_doc(steps: int = 5) -> dict[str, Any]:
    return {
        "schema": "canal.run/1", "run_id": "r-1", "status": "running", "current_step": 2,
        "gate": {"deploy": {"user": "ops", "password": "hunter2-plain-gate-value"}},
        "steps": [{"id": f"s{i:02d}", "status": "done", "result": {"exit": 0, "stdout": f"line {i}\n"}}
                  for i in range(steps)],
        "approved_by": "alice",
    }


@pytest.fixture
def keys(tmp_path: Path) -> KeyStore:
    return KeyStore(tmp_path / "keys", env={})


@pytest.fixture
def ledger() -> MemoryLedger:
    return MemoryLedger()


@pytest.fixture
def store(tmp_path: Path, keys: KeyStore, ledger: MemoryLedger) -> SealedStore:
    return SealedStore(tmp_path / "state", keys, ledger)
