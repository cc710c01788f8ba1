"""Issue 37, no ambient mode: what a ``Canal`` builds once and uses again is a resources object it is given
(the server's ``Shared`` set) or makes for itself (``Owned``); nothing in the process decides it."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from canal.cli.served import run as run_cli
from canal.runtime.api import Canal
from canal.runtime.sandboxes.resources import Owned, Resources, Shared
from canal.runtime.settings.config import CanalConfig


@pytest.fixture
def shared() -> Iterator[Shared]:
    with Shared() as resources:
        yield resources


def _canal(project: Path, resources: Resources | None = None) -> Canal:
    return Canal(project, config=CanalConfig(), resources=resources)


def test_canals_given_the_shared_set_share_its_policy_and_its_watching_checkpoint_store(
        project: Path, shared: Shared) -> None:
    with _canal(project, shared) as one, _canal(project, shared) as other:
        assert one.policy is other.policy
        store = one._services.checkpoints
        assert store is other._services.checkpoints
        assert store.observer.watching
    assert shared.status()["policies"] == 1  # closing the Canals left the server's set as it was
    assert shared.status()["checkpoint_stores"] == 1


def test_a_canal_given_none_owns_its_own_whatever_else_the_process_holds(project: Path,
                                                                         shared: Shared) -> None:
    with _canal(project, shared) as served:
        served.policy  # noqa: B018
        served._services.checkpoints  # noqa: B018
        with _canal(project) as own:
            assert own.policy is not served.policy
            assert own._services.checkpoints is not served._services.checkpoints
            assert not own._services.checkpoints.observer.watching
            assert own.tasks.persistent is False  # its tasks end with it
        assert served.tasks.persistent is True  # the server's tasks outlive the call


def test_a_canal_closes_the_set_it_made_and_never_one_it_was_given(project: Path) -> None:
    given = Owned()
    with _canal(project, given) as canal:
        canal.policy  # noqa: B018
    assert given.status()["policies"] == 1
    canal = _canal(project)
    canal.policy  # noqa: B018
    own = canal._resources
    assert own.status()["policies"] == 1
    canal.close()
    assert own.status()["policies"] == 0
    given.close()


class _Resident:
    def __init__(self) -> None:
        self.ended: list[str] = []

    def busy(self) -> bool:
        return not self.ended

    def close(self, why: str) -> None:
        self.ended.append(why)


@pytest.mark.parametrize(("make", "why"), [(Owned, "closed"), (Shared, "server_stopped")])
def test_residents_end_with_the_reason_of_their_set(make: type[Resources], why: str) -> None:
    resources = make()
    resident = _Resident()
    assert resources.resident(("tasks",), lambda: resident) is resident
    assert resources.resident(("tasks",), _Resident) is resident  # built once per key
    assert resources.busy()
    resources.close()
    assert resident.ended == [why]


class _Log:
    def __init__(self) -> None:
        self.synced = 0

    def sync(self) -> None:
        self.synced += 1


def test_an_owned_set_syncs_at_once_and_the_shared_one_by_group_commit() -> None:
    log = _Log()
    Owned().commit(log)
    assert log.synced == 1
    shared = Shared()
    shared.commit(log)
    assert log.synced == 1  # not on the caller's time
    shared.close()
    assert log.synced == 2


def test_only_the_shared_set_with_a_pool_owner_has_warm_pools() -> None:
    assert Owned().pools() is None
    assert Shared().pools() is None


def test_the_cli_the_server_runs_builds_its_canal_on_the_servers_set(
        project: Path, shared: Shared, capsys: pytest.CaptureFixture[str]) -> None:
    assert run_cli(["-C", str(project), "checkpoints", "--json"], shared) == 0
    assert json.loads(capsys.readouterr().out)["status"] == "ok"
    assert shared.status()["checkpoint_stores"] == 1  # the command's store is the server's, kept
    assert run_cli(["-C", str(project), "checkpoints", "--json"], None) == 0
    assert shared.status()["checkpoint_stores"] == 1  # in-process, the Canal owned its own
