"""Caps on what Canal keeps on the host, shown with small caps configured here (not gigabytes):
saved output per stream, saved outputs in total, backup per confirmed command, trash in total;
backups keep sparse files sparse and hard links linked."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from project_helpers import chown_tree

from canal.core.errors import CanalError
from canal.runtime.api import Canal

from .conftest import make_project

MIB = 1024 * 1024
CONFIG = """\
storage: {output_per_stream: 1m, outputs_total: 3m, backup_per_command: 2m, trash_total: 4m}
"""


@pytest.fixture(scope="module")
def capped(tmp_path_factory: pytest.TempPathFactory, host_env: Path) -> Iterator[Canal]:
    project = make_project(tmp_path_factory.mktemp("caps"), CONFIG)
    with Canal(project) as c:
        yield c
        c.down()


def outputs(canal: Canal) -> list[Path]:
    return [p for p in (canal._services.state_dir / "outputs").glob("*/*") if p.is_file()]


def usage(paths: list[Path]) -> int:
    inodes = {p.stat().st_ino: p.stat().st_blocks * 512 for p in paths}
    return sum(inodes.values())


def confirmed(canal: Canal, command: str) -> object:
    asked = canal.run(command)
    assert asked.confirmation is not None, asked.text
    return canal.run(command, confirm=asked.confirmation.token)


def test_a_saved_output_keeps_head_and_tail_within_its_cap(capped: Canal) -> None:
    result = capped.run("seq 1 1000000")  # 6.6 MiB of output
    assert "output capped:" in result.text.splitlines()[-1], result.text
    saved = capped._services.outputs_dir("default") / Path(result.output_file or "").name
    data = saved.read_bytes()
    assert len(data) < 1 * MIB + 4096
    assert data.startswith(b"1\n2\n3\n")
    assert data.endswith(b"999999\n1000000\n")
    assert b"bytes dropped here by Canal" in data
    assert "1000000" in result.output  # the tail the agent sees is the real tail


def test_saved_outputs_stay_under_their_total(capped: Canal) -> None:
    notes = [capped.run(f"seq {i} 300000").text for i in range(1, 6)]  # ~2 MiB each, capped to 1 MiB
    assert usage(outputs(capped)) <= 3 * MIB + 64 * 1024
    assert any("oldest saved output" in n and "storage.outputs_total" in n for n in notes), notes[-1]


def test_a_backup_over_its_cap_refuses_the_command(capped: Canal) -> None:
    big = capped.project_dir / "big"
    big.mkdir()
    (big / "data").write_bytes(os.urandom(3 * MIB))
    chown_tree(big)
    with pytest.raises(CanalError) as refused:
        confirmed(capped, "rm -rf big")
    assert refused.value.code == "BACKUP_TOO_LARGE"
    assert "storage.backup_per_command" in str(refused.value)
    assert (big / "data").stat().st_size == 3 * MIB, "nothing may run without its backup"
    (big / "data").unlink()
    big.rmdir()


def test_a_sparse_file_stays_sparse_and_hard_links_stay_linked_in_the_trash(capped: Canal) -> None:
    tree = capped.project_dir / "sparse"
    tree.mkdir()
    with (tree / "disk.img").open("wb") as fh:
        fh.truncate(3 * 1024 * MIB)  # 3 GiB apparent, nothing on disk
        fh.seek(MIB)
        fh.write(b"data in the middle")
    (tree / "a").write_bytes(b"linked" * 1000)
    os.link(tree / "a", tree / "b")
    chown_tree(tree)
    done = confirmed(capped, "rm -rf sparse")
    assert getattr(done, "status", "") == "ok", getattr(done, "text", "")
    [backup] = done.backups  # type: ignore[attr-defined]
    kept = capped._services.trash.files_dir / backup.trash_id
    assert (kept / "disk.img").stat().st_size == 3 * 1024 * MIB
    assert (kept / "disk.img").stat().st_blocks * 512 < MIB
    with (kept / "disk.img").open("rb") as fh:
        fh.seek(MIB)
        assert fh.read(18) == b"data in the middle"
    assert (kept / "a").stat().st_ino == (kept / "b").stat().st_ino


def test_the_trash_refuses_what_would_take_it_past_its_total(capped: Canal) -> None:
    for name in ("one", "two", "three"):
        (capped.project_dir / name).write_bytes(os.urandom(int(1.5 * MIB)))
        chown_tree(capped.project_dir / name)
    outcomes = []
    for name in ("one", "two", "three"):
        try:
            outcomes.append(getattr(confirmed(capped, f"rm -rf {name}"), "status", ""))
        except Exception as exc:
            outcomes.append(getattr(exc, "code", repr(exc)))
    assert "TRASH_FULL" in outcomes, outcomes
    assert capped._services.trash.usage() <= 4 * MIB
