"""The workspace watch sees what a container does to the bind-mounted workspace (its writes are the
host's inodes): each change made inside a real container, then one made on the host, is in the watched
store's next checkpoint exactly as a store that walks everything records it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from project_helpers import chown_tree

from canal.host.checkpoints import CheckpointSettings, CheckpointStore, Keys

KEYS = Keys("k", {"k": b"k" * 32})
STEPS = [
    "echo changed > d1/f0.txt",
    "mv d1/f1.txt d2/moved.txt",
    "ln d2/f0.txt d3/linked.txt && echo more >> d3/linked.txt",
    "chmod 600 d3/f0.txt",
    "mkdir -p d4/new/deep && echo x > d4/new/deep/x",
    "rm -rf d5",
    "mv d4 d6",
    "rm -rf e && mkdir -p e/f && echo again > e/f/x",  # a folder of empty folders made again
    "echo later > e/f/later && echo later > e/later",  # and written in by a later command
    "python3 -c \"import mmap; f = open('d0/f0.txt', 'r+b'); m = mmap.mmap(f.fileno(), 0); m[0:1] = b'Y'\"",
]


def test_changes_made_inside_a_container_are_never_missed(tmp_path: Path, docker_client: Any,
                                                          sandbox_image: str) -> None:
    ws = tmp_path / "ws"
    for d in range(6):
        (ws / f"d{d}").mkdir(parents=True)
        for f in range(4):
            (ws / f"d{d}" / f"f{f}.txt").write_text(f"{d}-{f}\n")
    (ws / "e" / "f").mkdir(parents=True)
    chown_tree(ws)  # the container's user (uid 1000) owns the workspace
    watched = CheckpointStore(tmp_path / "watched", ws, CheckpointSettings(), KEYS, watch=True)
    walker = CheckpointStore(tmp_path / "walker", ws, CheckpointSettings(), KEYS)
    watched.take(kind="run")
    walker.take(kind="run")
    container = docker_client.containers.run(
        sandbox_image, ["sleep", "120"], detach=True, working_dir="/workspace", network_mode="none",
        volumes={str(ws): {"bind": "/workspace", "mode": "rw"}}, labels={"canal.test": "watch"})
    try:
        for step in STEPS:
            done = container.exec_run(["sh", "-c", step], workdir="/workspace")
            assert done.exit_code == 0, (step, done.output)
            mine, walked = watched.take(kind="run", command=step), walker.take(kind="run", command=step)
            assert watched.manifest(mine) == walker.manifest(walked), step
        (ws / "d0" / "f1.txt").write_text("and one on the host\n")
        assert watched.manifest(watched.take(kind="run")) == walker.manifest(walker.take(kind="run"))
        first = watched.list()[0]
        watched.undo(first.id)  # makes d5 and d4 again, removes d6: the watch is told what it wrote
        assert watched.manifest(watched.take(kind="run")) == watched.manifest(first)
        done = container.exec_run(["sh", "-c", "echo after > d5/after && echo after > d4/f0.txt"],
                                  workdir="/workspace")
        assert done.exit_code == 0, done.output
        assert watched.manifest(watched.take(kind="run")) == walker.manifest(walker.take(kind="run"))
    finally:
        container.remove(force=True)
        watched.close()
