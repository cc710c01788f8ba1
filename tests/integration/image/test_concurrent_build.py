"""Issue 30, finding 3: a dozen first runs at once each built the project image (about 12 unused 475 MB
images were left), and ``canal gc`` removed none of them. Real engine, real CLI processes.

Both tests touch only images they made: the project image's content is unique to the test, and the
pruning is narrowed to a label only this test's images carry (other engineers share this engine)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from project_helpers import chown_tree, remove_project_containers

from canal.host.approvals import Approver
from canal.runtime.services import Services
from canal.sandbox.docker.backend import DockerBackend
from canal.sandbox.docker.build_lock import record_built
from canal.sandbox.docker.image import DEFAULT_IMAGE, HASH_LABEL

CANAL = str(Path(sys.executable).with_name("canal"))
CONFIG = "image:\n  files:\n    - {source: tool.txt, target: /opt/canal-test/tool.txt}\n"


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, docker_client: Any,
            sandbox_image: str) -> Iterator[Path]:
    monkeypatch.setenv("CANAL_STATE_DIR", str(tmp_path / "state"))
    monkeypatch.setenv("CANAL_CONFIG_DIR", str(tmp_path / "config"))
    monkeypatch.delenv("CANAL_PROJECT_DIR", raising=False)
    monkeypatch.delenv("CANAL_KEY", raising=False)
    folder = tmp_path / "imaged"
    folder.mkdir()
    (folder / "canal.yaml").write_text(CONFIG)
    (folder / "tool.txt").write_text(f"made for {uuid.uuid4().hex}\n")  # a recipe no image has yet
    chown_tree(folder)
    services = Services(folder)
    services.trust.approve(Approver(user="alice", how="tty"), services.trust.status().snapshot.digest)
    yield folder
    remove_project_containers(docker_client, folder)
    shown = subprocess.run([CANAL, "image", "show", "--json"], cwd=folder, text=True, capture_output=True,
                           env={**os.environ, "CANAL_NO_SERVER": "1"}, check=False)
    tag = json.loads(shown.stdout).get("image", "") if shown.returncode == 0 else ""
    if tag.startswith("canal/project:"):  # this test's recipe (its file is unique): its images only
        digest = (docker_client.images.get(tag).labels or {}).get(HASH_LABEL)
        for image in docker_client.images.list(filters={"label": f"{HASH_LABEL}={digest}"}):
            docker_client.images.remove(image.id, force=True)


def _canal(folder: Path, *args: str) -> subprocess.Popen[str]:
    env = {**os.environ, "CANAL_NO_SERVER": "1"}
    return subprocess.Popen([CANAL, *args], cwd=folder, env=env, text=True, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)


def test_four_concurrent_first_runs_build_the_project_image_once(project: Path, docker_client: Any) -> None:
    # four sandboxes: each start needs the image (one sandbox would start once, the others reuse it)
    runs = [_canal(project, "run", "--sandbox", f"s{n}", "--", "cat /opt/canal-test/tool.txt")
            for n in range(4)]
    outs = [run.communicate(timeout=600) for run in runs]
    for run, (out, err) in zip(runs, outs, strict=True):
        assert run.returncode == 0, out + err
        assert "made for" in out
    shown = subprocess.run([CANAL, "audit", "show", "--json"], cwd=project, text=True, capture_output=True,
                           env={**os.environ, "CANAL_NO_SERVER": "1"}, check=False)
    ready = [r["data"] for r in json.loads(shown.stdout)["records"] if r["event"] == "image.ready"]
    assert len(ready) == 4
    assert sum(r["built"] for r in ready) == 1, ready
    assert len({r["image_id"] for r in ready}) == 1
    digest = (docker_client.images.get(ready[0]["image"]).labels or {})[HASH_LABEL]
    same = docker_client.images.list(filters={"label": f"{HASH_LABEL}={digest}"})
    assert len(same) == 1, [i.id for i in same]  # no losing build left an untagged copy


def test_gc_removes_an_unused_image_canal_made_and_nothing_else(docker_client: Any, sandbox_image: str,
                                                                tmp_path: Path) -> None:
    mark = f"canal.test.gc={uuid.uuid4().hex}"
    tag = f"canal/test-gc:{uuid.uuid4().hex[:12]}"
    made = []
    try:
        for n in (1, 2):  # the second build takes the tag: the first is left untagged, like a lost race
            dockerfile = f"FROM {DEFAULT_IMAGE}\nLABEL {HASH_LABEL}=test-{n} {mark}\n"
            (tmp_path / "Dockerfile").write_text(dockerfile)
            image, _ = docker_client.images.build(path=str(tmp_path), tag=tag, rm=True)
            made.append(image.id)
            record_built(image.id)  # as Canal's own builds do
        (tmp_path / "Dockerfile").write_text(f"FROM {DEFAULT_IMAGE}\nLABEL {mark} other=1\n")
        foreign, _ = docker_client.images.build(path=str(tmp_path), rm=True)  # inherits the label only
        made.append(foreign.id)
        backend = DockerBackend(docker_client, owner=f"canal-test-gc-{uuid.uuid4().hex[:8]}")
        pruned = backend.images_prune(only_label=mark)
        assert [p.image_id for p in pruned] == [made[0]]
        assert pruned[0].size > 0
        assert docker_client.images.get(tag).id == made[1]  # tagged: kept
        assert docker_client.images.get(foreign.id).id == foreign.id  # not built by Canal: kept
    finally:
        for image_id in reversed(made):
            try:
                docker_client.images.remove(image_id, force=True)
            except Exception:  # already gone (the pruned one)
                continue
