"""The egress world of this folder's tests (see egress_world)."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from egress_world import ALLOWED, CONFIG, PORT, World, pip_zipapp, remove_egress, start_server
from project_helpers import chown_tree, remove_project_containers

from canal.host.paths import project_key
from canal.runtime.api import Canal
from canal.runtime.settings.config import parse_config
from canal.sandbox.docker.image import build_egress_image


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory, docker_client: Any,
          sandbox_image: str) -> Iterator[World]:
    build_egress_image(docker_client)
    root = tmp_path_factory.mktemp("egress")
    project = root / f"eg{uuid.uuid4().hex[:6]}"
    project.mkdir()
    (project / "pip.pyz").write_bytes(pip_zipapp())
    (project / "canal.yaml").write_text(CONFIG)  # what canal doctor reads (the tests pass it in code)
    chown_tree(project)
    config = parse_config(CONFIG)
    owner = f"canal-{project_key(project)}"
    server = None
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("CANAL_STATE_DIR", str(root / "state"))
        mp.setenv("CANAL_CONFIG_DIR", str(root / "config"))
        canal = Canal(project, config=config)
        try:
            canal.up()
            server = start_server(docker_client, sandbox_image, f"{owner}-egress-out", owner)
            ip = server.attrs["NetworkSettings"]["Networks"][f"{owner}-egress-out"]["IPAddress"]
            wait = (f"for i in $(seq 50); do curl -sf http://{ALLOWED}:{PORT}/hostname >/dev/null && exit 0; "
                    "sleep 0.1; done; exit 1")
            assert canal.run(wait, timeout_s=30).exit_code == 0
            yield World(canal, project, owner, ip)
        finally:
            if server is not None:
                server.remove(force=True)
            canal.down()
            canal.close()
            remove_project_containers(docker_client, project)
            remove_egress(docker_client, owner)
