"""A project's first command makes its sandbox while the policy loads (runtime/sandboxes/early.py), and
only once its settings passed their approval check."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from project_helpers import chown_tree, remove_project_containers

from canal.host.paths import project_key
from canal.policy import Policy, loader
from canal.runtime.api import Canal
from canal.runtime.trust import ConfigUnapproved

pytestmark = pytest.mark.docker

SEEN_WITHIN_S = 30.0


@pytest.fixture
def project(tmp_path: Path, sandbox_image: str, docker_client: Any,
            monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    monkeypatch.setenv("CANAL_STATE_DIR", str(tmp_path / "state"))
    monkeypatch.setenv("CANAL_CONFIG_DIR", str(tmp_path / "config"))
    monkeypatch.delenv("CANAL_KEY", raising=False)
    folder = tmp_path / "project"
    folder.mkdir()
    chown_tree(folder)
    yield folder
    remove_project_containers(docker_client, folder)


def _containers(docker_client: Any, project: Path) -> list[Any]:
    prefix = f"canal-{project_key(project)}-"
    return [c for c in docker_client.containers.list(all=True, filters={"name": prefix})
            if c.name.startswith(prefix)]


def test_the_sandbox_is_made_while_the_first_policy_loads(project: Path, docker_client: Any,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """The policy's load waits here until the project's sandbox runs: it does only when something
    else made it meanwhile (before, the pipeline made it after the policy, so this waited in vain)."""
    seen: list[str] = []
    real = loader.load_policy

    def load(*args: Any, **kwargs: Any) -> Policy:
        deadline = time.monotonic() + SEEN_WITHIN_S
        while time.monotonic() < deadline and not seen:
            seen.extend(c.name for c in _containers(docker_client, project) if c.status == "running")
            time.sleep(0.05)
        return real(*args, **kwargs)

    monkeypatch.setattr(loader, "load_policy", load)
    with Canal(project) as canal:
        result = canal.run("true")
        assert result.status == "ok", result.text
        assert seen == [canal.ref().container]
        assert canal.run("echo again").output == "again"
        assert [c.name for c in _containers(docker_client, project)] == seen  # made once
        assert not [t for t in threading.enumerate() if t.name == "canal-early-sandbox"]


def test_refused_settings_start_no_sandbox(project: Path, docker_client: Any) -> None:
    (project / "canal.yaml").write_text("sandbox:\n  network: bridge\n  no_new_privileges: false\n")
    with Canal(project) as canal, pytest.raises(ConfigUnapproved):
        canal.run("true")
    time.sleep(1.0)  # a thread that was wrongly started would be making it by now
    assert _containers(docker_client, project) == []
