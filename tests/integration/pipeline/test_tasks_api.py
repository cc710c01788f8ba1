"""Background tasks through the Python API in-process (``Canal.tasks``), against a real sandbox: limits,
the output cap, what a task can and cannot do to its supervision, and how foreground sweeps treat it."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from canal.runtime.api import Canal
from canal.runtime.settings.config import CanalConfig, TaskSettings
from canal.runtime.tasks import TASK_LIMIT_REACHED, TaskRecord
from tests.error_codes import raises_code
from tests.integration.pipeline.conftest import make_project


@pytest.fixture(scope="module")
def canal(host_env: Path) -> Iterator[Canal]:
    project = make_project(host_env / "tasks")
    config = CanalConfig(tasks=TaskSettings(max_running=2, output_cap=100_000))
    with Canal(project, config=config) as c:
        yield c
        c.down()


def processes(canal: Canal) -> list[str]:
    result = canal.run("ps -eo args=")
    assert result.status == "ok", result.text
    return result.output.splitlines()


def wait_for(canal: Canal, wanted: set[str]) -> None:
    deadline = time.monotonic() + 30
    while not wanted <= set(processes(canal)):
        assert time.monotonic() < deadline, processes(canal)
        time.sleep(0.2)


def test_output_past_the_cap_is_counted_not_kept_and_the_log_is_readable_inside(canal: Canal) -> None:
    started = canal.tasks.start("head -c 300000 /dev/zero | tr '\\0' 'x'; echo; echo tail-line")
    assert started.task is not None
    record = canal.tasks.wait(started.task.id, 60)
    assert (record.state, record.exit_code) == ("exited", 0)
    assert record.output_bytes == 100_000
    assert record.dropped_bytes == 300_000 + 1 + len("tail-line\n") - 100_000
    assert "bytes of output past the cap of 100000 were not kept" in record.detail
    inside = canal.run(f"wc -c < {record.output_file}")
    assert inside.output.splitlines()[0] == "100000"  # the agent can grep the whole log from inside
    written = canal.run(f"echo tampered > {record.output_file}")
    assert written.exit_code != 0  # read-only inside


def test_the_limit_of_running_tasks_per_sandbox(canal: Canal) -> None:
    first = canal.tasks.start("sleep 1000")
    second = canal.tasks.start("sleep 1000")
    try:
        with raises_code(TASK_LIMIT_REACHED) as refused:
            canal.tasks.start("sleep 1000")
        assert refused.value.code == "TASK_LIMIT_REACHED"
        assert "Nothing was started" in refused.value.message
    finally:
        for started in (first, second):
            assert started.task is not None
            canal.tasks.cancel(started.task.id)
    assert canal.tasks.start("true").status == "started"  # places free again


def test_a_foreground_leftover_is_still_swept_while_tasks_run(canal: Canal) -> None:
    task = canal.tasks.start("sleep 901")
    assert task.task is not None
    wait_for(canal, {"sleep 901"})
    ran = canal.run("setsid sleep 902 & sleep 903 &")
    assert ran.status == "ok"
    left = processes(canal)
    assert "sleep 901" in left  # the task is spared by design
    assert "sleep 902" not in left
    assert "sleep 903" not in left  # the foreground command's leftovers are not
    canal.tasks.cancel(task.task.id)


def test_a_task_that_kills_its_runner_still_ends_and_leaves_nothing(canal: Canal) -> None:
    started = canal.tasks.start("sleep 904 & kill -9 $PPID; sleep 905")
    assert started.task is not None
    record = canal.tasks.wait(started.task.id, 60)
    assert record.state == "killed"
    assert "did not report" in record.detail
    left = processes(canal)
    assert "sleep 904" not in left
    assert "sleep 905" not in left


def test_the_spawn_file_with_the_sessions_variables_does_not_stay(canal: Canal) -> None:
    canal.run("export TASK_SECRETISH=value1")
    started = canal.tasks.start('echo "$TASK_SECRETISH"')
    assert started.task is not None
    canal.tasks.wait(started.task.id, 60)
    assert canal.tasks.read(started.task.id).text == "value1\n"
    found = canal.run("grep -rl value1 /tmp 2>/dev/null | wc -l")
    assert found.output.splitlines()[0] == "0"


def test_closing_the_canal_ends_its_tasks(host_env: Path) -> None:
    project = make_project(host_env / "closing")
    with Canal(project) as c:
        started = c.tasks.start("sleep 1000")
        assert started.task is not None
        task_id = started.task.id
    try:
        with Canal(project) as again:
            record: TaskRecord = again.tasks.resolve(task_id)
            assert (record.state, record.reason) == ("killed", "closed")
    finally:
        Canal(project).down()


def test_a_task_runs_git_with_the_overrides_of_the_repository_as_it_is_then(canal: Canal) -> None:
    """An agent must not get round the git guard (sandboxes.gitguard) by running git as a task: an alias the
    agent wrote into the repository's configuration with one command must not run as a task's git
    command (the overrides are computed when the task is admitted, not inherited from the session)."""
    plant = "cd /workspace && git init -q . && git config alias.st '!touch /workspace/FIRED' && echo planted"
    made = canal.run(plant)
    if made.confirmation is not None:  # writing git configuration asks for confirmation; given here
        made = canal.run(plant, confirm=made.confirmation.token)
    assert made.output.startswith("planted"), made.text
    started = canal.tasks.start("git st; echo ran")
    assert started.task is not None
    record = canal.tasks.wait(started.task.id, 60)
    assert (record.state, record.exit_code) == ("exited", 0)
    assert canal.tasks.read(started.task.id).text.endswith("ran\n")
    assert canal.run("test -e FIRED && echo fired || echo clean").output.startswith("clean")
    assert canal.run("git st; test -e FIRED && echo fired || echo clean").output.endswith("clean")  # as here


def test_a_foreground_process_that_borrows_a_tasks_marker_dies_with_the_task(canal: Canal) -> None:
    """The agent can read a running task's marker from /proc and put it on a process of its own, which
    the foreground sweep then spares: it must still end with the task, not outlive it."""
    started = canal.tasks.start("sleep 907")
    assert started.task is not None
    wait_for(canal, {"sleep 907"})
    borrow = ("m=$(tr '\\0' '\\n' < /proc/$(pgrep -x -f 'sleep 907')/environ | grep '^CANAL_TASK='); "
              "env \"$m\" setsid sleep 908 & sleep 0.5; echo \"${m%%=*}\"")
    borrowed = canal.run(borrow)
    if borrowed.confirmation is not None:  # env "$m" CMD: a program known only at run time is confirmed
        borrowed = canal.run(borrow, confirm=borrowed.confirmation.token)
    assert borrowed.output.startswith("CANAL_TASK"), borrowed.text
    assert "sleep 908" in processes(canal)  # spared: it carries the task's marker
    canal.tasks.cancel(started.task.id)
    assert not {"sleep 907", "sleep 908"} & set(processes(canal))
