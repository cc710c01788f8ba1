"""Background tasks through the real ``canal`` client and its server, in real sandboxes."""

from __future__ import annotations

import json
import shlex
import subprocess
import time
from typing import Any

from project_helpers import chown_tree, remove_project_containers
from served_cli import ServedProject


def start(served: ServedProject, *args: str) -> dict[str, object]:
    done = served.run("task", "start", "--json", *args)
    assert done.returncode == 0, done.stderr + done.stdout
    task: dict[str, object] = json.loads(done.stdout)["task"]
    return task


def listed(served: ServedProject) -> dict[str, dict[str, object]]:
    done = served.run("task", "list", "--json")
    assert done.returncode == 0, done.stderr
    return {t["id"]: t for t in json.loads(done.stdout)["tasks"]}


def processes(served: ServedProject) -> list[str]:
    done = served.run("run", "--", "ps -eo args=")
    assert done.returncode == 0, done.stderr
    return done.stdout.splitlines()


def test_a_task_runs_while_foreground_commands_complete(served: ServedProject) -> None:
    task = start(served, "--name", "count", "--", "for i in $(seq 5); do echo $i; sleep 1; done")
    assert str(task["id"]).startswith("t-")
    for n in range(3):
        done = served.run("run", "--", f"echo foreground {n}")
        assert done.returncode == 0, done.stderr
        assert done.stdout.startswith(f"foreground {n}\n")
    assert listed(served)[str(task["id"])]["state"] == "running"  # the three did not wait for it
    followed = served.run("task", "logs", "count", "-f")
    assert followed.returncode == 0, followed.stderr
    assert followed.stdout == "1\n2\n3\n4\n5\n"
    waited = served.run("task", "wait", "count")
    assert waited.returncode == 0
    assert waited.stdout.startswith(f"task {task['id']} exited (exit 0,")
    shown = served.run("task", "show", str(task["id"]))
    assert shown.stdout.startswith("1\n2\n3\n4\n5\n[exit:0 | ")
    assert f"task {task['id']} (count)]" in shown.stdout


def test_logs_follow_prints_as_the_task_writes(served: ServedProject) -> None:
    task = start(served, "--name", "slowly", "--", "echo first; sleep 3; echo second")
    follow = served.popen("task", "logs", "slowly", "-f", stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        assert follow.stdout is not None
        assert follow.stdout.readline() == "first\n"
        assert listed(served)[str(task["id"])]["state"] == "running"  # it came while the task still ran
        assert follow.stdout.readline() == "second\n"
        assert follow.wait(timeout=60) == 0
    finally:
        follow.kill()
        for stream in (follow.stdout, follow.stderr):
            if stream is not None:
                stream.close()


def test_wait_returns_the_tasks_exit_code(served: ServedProject) -> None:
    start(served, "--name", "three", "--", "sleep 1; exit 3")
    waited = served.run("task", "wait", "three", "--json")
    assert waited.returncode == 3
    task = json.loads(waited.stdout)["task"]
    assert (task["state"], task["exit_code"], task["reason"]) == ("exited", 3, "exited")
    short = start(served, "--", "sleep 30")
    late = served.run("task", "wait", str(short["id"]), "--timeout", "0.5")
    assert late.returncode == 124
    assert late.stderr.startswith("TASK_WAIT_TIMEOUT\n")
    assert listed(served)[str(short["id"])]["state"] == "running"  # waiting gave up, the task did not


def test_cancel_kills_a_task_and_the_child_it_detached(served: ServedProject) -> None:
    task = start(served, "--", "setsid sleep 1000 & setsid -f sleep 999; sleep 1001")
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and not {"sleep 999", "sleep 1000", "sleep 1001"} <= set(
            processes(served)):
        time.sleep(0.2)
    assert {"sleep 999", "sleep 1000", "sleep 1001"} <= set(processes(served))
    cancelled = served.run("task", "cancel", str(task["id"]), "--json")
    assert cancelled.returncode == 0, cancelled.stderr
    record = json.loads(cancelled.stdout)["task"]
    assert (record["state"], record["reason"]) == ("killed", "cancelled")
    left = [p for p in processes(served) if p.startswith("sleep 99") or p.startswith("sleep 100")]
    assert left == []
    again = served.run("task", "cancel", str(task["id"]))
    assert again.returncode == 2
    assert again.stderr.startswith("TASK_ALREADY_ENDED\n")


def test_a_task_over_its_timeout_ends_with_that_reason(served: ServedProject) -> None:
    task = start(served, "--timeout", "1", "--", "echo started; sleep 100")
    waited = served.run("task", "wait", str(task["id"]), "--json")
    assert waited.returncode == 124
    record = json.loads(waited.stdout)["task"]
    assert (record["state"], record["reason"]) == ("timed_out", "hard_timeout")
    assert record["ending"] == "killed: hard timeout after 1s"
    assert served.run("task", "logs", str(task["id"])).stdout == "started\n"
    assert not [p for p in processes(served) if p == "sleep 100"]


def test_canal_down_ends_running_tasks_and_reports_them(served: ServedProject) -> None:
    task = start(served, "--name", "forever", "--", "sleep 1000")
    down = served.run("down")
    assert down.returncode == 0, down.stderr
    assert down.stdout.splitlines() == [f"ended task {task['id']} (forever): sleep 1000 (ran "
                                        f"{down.stdout.split('(ran ')[1].split(')')[0]})",
                                        "default removed"]
    record = listed(served)[str(task["id"])]
    assert (record["state"], record["ending"]) == ("killed", "killed: its sandbox was removed")


def test_a_task_starts_where_the_session_is_and_goes_through_the_policy(served: ServedProject) -> None:
    assert served.run("run", "--", "cd sub && export GREETING=hello").returncode == 0
    start(served, "--name", "where", "--", 'echo "$PWD $GREETING"')
    assert served.run("task", "wait", "where").returncode == 0
    assert served.run("task", "logs", "where").stdout == "/workspace/sub hello\n"
    asked = served.run("task", "start", "--", "rm", "-rf", "/workspace/sub")
    assert asked.returncode == 120
    assert asked.stderr.startswith("CONFIRMATION_REQUIRED\n")
    assert "canal task start --confirm c_" in asked.stderr
    assert (served.root / "sub").is_dir()  # nothing ran


def test_a_task_start_asks_in_the_one_confirmation_shape(served: ServedProject) -> None:
    """Issue 32, finding 3: ``task start --json`` gives the confirmation object run, apply, tools and
    workflows give (``token, reason, rule_ids, expires_at, approval, rerun``); its rerun runs as written."""
    asked = served.run("task", "start", "--json", "--name", "wipe", "--", "rm -rf /workspace/sub")
    assert asked.returncode == 120, asked.stderr
    found = json.loads(asked.stdout)["confirmation"]
    assert set(found) >= {"token", "reason", "rule_ids", "expires_at", "approval", "rerun"}, found
    assert found["approval"] == "agent"
    assert found["rule_ids"], found
    rerun = shlex.split(found["rerun"])
    assert rerun[:3] == ["canal", "task", "start"]
    assert found["token"] in rerun
    assert (served.root / "sub").is_dir()  # nothing ran
    assert served.run(*rerun[1:]).returncode == 0
    assert served.run("task", "wait", "wipe").returncode == 0
    assert not (served.root / "sub").exists()


def test_unknown_and_foreign_task_ids_are_refused(served: ServedProject, docker_client: Any) -> None:
    missing = served.run("task", "show", "t-000000")
    assert missing.returncode == 2
    assert missing.stderr.startswith("TASK_NOT_FOUND\nNo task t-000000 in project ")
    other = served.root.parent / "other"
    other.mkdir()
    chown_tree(other)
    try:
        made = served.run("-C", str(other), "task", "start", "--json", "--", "true")
        assert made.returncode == 0, made.stderr
        foreign = json.loads(made.stdout)["task"]["id"]
        asked = served.run("task", "show", foreign)
        assert asked.returncode == 2
        assert asked.stderr.startswith(f"TASK_NOT_FOUND\nTask {foreign} belongs to another project ({other}")
        assert f"ask about it in its own project (from the folder {other})" in asked.stderr
        assert served.run("-C", str(other), "task", "show", foreign).returncode == 0
    finally:
        remove_project_containers(docker_client, other)


# built inside the sandbox from pieces, so neither the command nor the repository holds the token
TOKEN = "ghp_" + "x9Kq2LmP4vR7tY1nB8cD3fG6hJ0kWzQeUaSo"


def test_a_task_log_on_the_host_holds_no_secret_even_split_across_writes(served: ServedProject) -> None:
    """The token reaches the host in two writes a second apart (two frames of the background channel):
    the log file is redacted as it is written, and ``task logs`` shows the placeholder."""
    first, second = TOKEN[:14], TOKEN[14:]
    task = start(served, "--name", "leaky", "--",
                 f"echo start; printf 'token=%s' {first}; sleep 1; printf '%s\\n' {second}; echo done")
    assert served.run("task", "wait", "leaky").returncode == 0
    [log] = (served.root.parent / "state").rglob(f"task-{task['id']}.log")
    data = log.read_bytes()
    assert TOKEN.encode() not in data
    assert first.encode() not in data, "the first piece was written before the second came"
    assert data.startswith(b"start\ntoken=[REDACTED_SECRET:github-pat:")
    assert data.endswith(b"]\ndone\n")
    assert oct(log.stat().st_mode & 0o777) == "0o600"
    shown = served.run("task", "logs", "leaky")
    assert shown.returncode == 0, shown.stderr
    assert shown.stdout.startswith("start\ntoken=[REDACTED_SECRET:github-pat:")
    assert TOKEN not in shown.stdout
