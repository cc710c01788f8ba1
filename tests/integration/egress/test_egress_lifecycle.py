"""An egress proxy lives as long as its sandboxes: started with the first, removed after the last (at
``canal down`` or ``canal gc``), its attempts recorded first; if it cannot start, no sandbox starts."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from egress_world import remove_egress
from project_helpers import chown_tree, remove_project_containers

from canal.host.paths import project_key
from canal.runtime.api import Canal
from canal.runtime.settings.config import parse_config
from canal.sandbox.docker.backend import DockerBackend
from canal.sandbox.docker.egress import LABEL_EGRESS
from canal.sandbox.docker.image import build_egress_image
from canal.sandbox.errors import EGRESS_PROXY_FAILED
from canal.sandbox.spec import SandboxSpec
from tests.error_codes import raises_code

CONFIG = "sandbox:\n  network: {mode: allowlist, allow: ['nowhere.test:443']}\n"


@pytest.fixture
def project(tmp_path: Path, docker_client: Any, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    build_egress_image(docker_client)
    folder = tmp_path / f"life{uuid.uuid4().hex[:6]}"
    folder.mkdir()
    chown_tree(folder)
    monkeypatch.setenv("CANAL_STATE_DIR", str(tmp_path / "state"))
    monkeypatch.setenv("CANAL_CONFIG_DIR", str(tmp_path / "config"))
    yield folder
    remove_project_containers(docker_client, folder)
    remove_egress(docker_client, f"canal-{project_key(folder)}")


def egress_of(docker_client: Any, project: Path) -> tuple[list[str], list[str]]:
    """(proxy containers, networks) of the project's egress."""
    mine = {"label": f"{LABEL_EGRESS}=canal-{project_key(project)}"}
    return ([c.name for c in docker_client.containers.list(all=True, filters=mine)],
            sorted(n.name for n in docker_client.networks.list(filters=mine)))


def test_the_proxy_goes_with_the_last_sandbox_at_down(project: Path, docker_client: Any) -> None:
    with Canal(project, config=parse_config(CONFIG)) as canal:
        canal.up()
        canal.up("second")
        proxies, networks = egress_of(docker_client, project)
        assert len(proxies) == 1  # one allowlist, one proxy for both sandboxes
        assert len(networks) == 2  # its internal network and the way out
        canal.run("getent hosts gone-with-the-proxy.example")
        assert canal.down("second")
        assert egress_of(docker_client, project)[0] == proxies  # still used by default
        assert canal.down()
        assert egress_of(docker_client, project) == ([], [])
        lookups = [r for r in canal.egress_log().records if r.host == "gone-with-the-proxy.example"]
        assert lookups  # recorded before the proxy went
        events = [line.text for line in canal._services.audit.lines()]
        assert any(b'"egress.proxy_removed"' in text and proxies[0].encode() in text for text in events)


def test_gc_removes_a_proxy_whose_sandboxes_are_gone(project: Path, docker_client: Any) -> None:
    with Canal(project, config=parse_config(CONFIG)) as canal:
        info = canal.up()
        docker_client.containers.get(info.name).kill()  # the sandbox died: gc reaps it
        removed = canal.gc()
        proxies = [name for name in removed if "-egress-" in name]
        assert info.name in removed
        assert len(proxies) == 1
        assert egress_of(docker_client, project) == ([], [])


def test_a_proxy_that_cannot_start_starts_no_sandbox(docker_client: Any, sandbox_image: str) -> None:
    owner = f"canal-test-eg-{uuid.uuid4().hex[:8]}"
    backend = DockerBackend(docker_client, owner=owner, egress_image="canal/no-such-egress-image:0")
    name = f"canal-t-{uuid.uuid4().hex[:10]}"
    spec = SandboxSpec(image=sandbox_image, network={"mode": "allowlist", "allow": ["pypi.org"]})  # type: ignore[arg-type]
    try:
        with raises_code(EGRESS_PROXY_FAILED) as info:
            backend.create(name, spec)
        assert info.value.code == "EGRESS_PROXY_FAILED"
        assert "No sandbox was started" in info.value.message
        assert backend.get(name) is None  # never a wider network instead
        assert docker_client.containers.list(all=True, filters={"label": f"{LABEL_EGRESS}={owner}"}) == []
    finally:
        backend.remove(name)
        remove_egress(docker_client, owner)
        backend.close()
