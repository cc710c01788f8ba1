from __future__ import annotations

import re
from pathlib import Path

import pytest

from canal.host.files import Workspace

SECRET = re.compile(r"sk_live_[A-Za-z0-9]{16,}")


def test_redactor(text: str) -> str:
    """A stand-in for the real redactor: one pattern, the real placeholder shape."""
    return SECRET.sub("[REDACTED_SECRET:stripe:1]", text)


test_redactor.__test__ = False  # type: ignore[attr-defined]


@pytest.fixture
def ws_dir(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    ws.mkdir()
    return ws


@pytest.fixture
def ws(ws_dir: Path) -> Workspace:
    return Workspace.at(ws_dir)


@pytest.fixture
def redactor():  # type: ignore[no-untyped-def]
    return test_redactor
