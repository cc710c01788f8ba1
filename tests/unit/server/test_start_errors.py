"""Issue 30, finding 4: a server that cannot be started was a raw traceback (PermissionError opening
/dev/null in lifecycle.start, on a host where that user cannot open it). Now SERVER_START_FAILED, with
the log path and the way out."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import pytest

from canal.client import lifecycle
from canal.client.errors import SERVER_START_FAILED
from canal.client.paths import ServerPaths
from tests.error_codes import raises_code


@pytest.mark.parametrize("failure", [PermissionError(13, "Permission denied", "/dev/null"),
                                     subprocess.TimeoutExpired(["canal-server"], 10.0)])
def test_a_server_that_cannot_start_is_a_coded_error(failure: Exception, tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*_a: Any, **_k: Any) -> Any:
        raise failure

    monkeypatch.setattr(subprocess, "run", refuse)
    paths = ServerPaths(tmp_path, "server-0123456789abcdef")
    with raises_code(SERVER_START_FAILED) as info:
        lifecycle.start(paths, timeout_s=1.0)
    assert str(paths.log) in info.value.message
    assert "CANAL_NO_SERVER=1" in info.value.hint
    assert info.value.details["log"] == str(paths.log)


def test_a_log_that_cannot_be_opened_is_a_coded_error(tmp_path: Path) -> None:
    paths = ServerPaths(tmp_path / "missing", "server-0123456789abcdef")
    with raises_code(SERVER_START_FAILED) as info:
        lifecycle.start(paths, timeout_s=1.0)
    assert "CANAL_NO_SERVER=1" in info.value.hint
