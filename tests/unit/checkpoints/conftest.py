from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from canal.host.checkpoints import CheckpointSettings, CheckpointStore, Keys
from tests.treesnap import tree

MakeStore = Callable[..., CheckpointStore]
__all__ = ["MakeStore", "tree"]

@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "src").mkdir()
    (ws / "src" / "main.py").write_text("print('hi')\n")
    (ws / "run.sh").write_text("#!/bin/sh\necho run\n")
    (ws / "run.sh").chmod(0o755)
    (ws / "secret.txt").write_text("private\n")
    (ws / "secret.txt").chmod(0o600)
    (ws / "data").mkdir()
    (ws / "data" / "blob.bin").write_bytes(bytes(range(256)) * 10)
    (ws / "link").symlink_to("src/main.py")
    (ws / "empty").mkdir()
    return ws


@pytest.fixture
def make_store(tmp_path: Path, workspace: Path) -> MakeStore:
    def make(**settings: object) -> CheckpointStore:
        return CheckpointStore(tmp_path / "state" / "checkpoints", workspace,
                               CheckpointSettings.model_validate(settings), Keys("k1", {"k1": b"k" * 32}))

    return make
