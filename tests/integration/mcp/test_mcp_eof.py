"""``canal mcp`` ends when its client closes stdin, also while its warm-up has not begun (in-process).

Found by the README tour: a client that closes stdin at once (``canal mcp < /dev/null``) left the
in-process server waiting forever for a warm-up the SDK had cancelled before any thread ran it."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.integration.mcp.conftest import make_project, remove_containers, server_params


@pytest.mark.parametrize("served", [False, True], ids=["in-process", "through-the-server"])
def test_canal_mcp_ends_when_stdin_is_closed_at_once(tmp_path: Path, sandbox_image: str, served: bool,
                                                    docker_client: Any) -> None:
    project = make_project(tmp_path, sandbox_image)
    params = server_params(project, tmp_path)
    env = {**os.environ, **(params.env or {})}
    if not served:
        env["CANAL_NO_SERVER"] = "1"
    try:
        for _ in range(3):  # the warm-up is cancelled at different points of its start
            done = subprocess.run([params.command, *params.args], cwd=project, env=env,
                                  stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=60)
            assert done.returncode == 0, done.stderr
    finally:
        subprocess.run([params.command, "down"], cwd=project, env=env, capture_output=True, timeout=120,
                       check=False)
        remove_containers(docker_client, project)
