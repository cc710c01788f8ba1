"""The whole public API through the server: ``Canal.connect(project)`` against a real server and sandbox,
sharing the session, the checkpoints, the trash and the tasks with the CLI."""

from __future__ import annotations

import json
import os
import re
import time
from typing import Any

import pytest
from served_cli import ServedProject

from canal import Canal
from canal.core.errors import CanalError
from canal.server.kept import SETTLE_S


@pytest.fixture
def api(shared: ServedProject, monkeypatch: pytest.MonkeyPatch) -> Canal:
    for name, value in shared.env.items():
        if name.startswith("CANAL_"):
            monkeypatch.setenv(name, value)
    monkeypatch.delenv("CANAL_NO_SERVER", raising=False)
    return Canal.connect(shared.root)  # type: ignore[return-value]  # the API, through the server


def test_files_checkpoints_and_undo_through_the_server(api: Canal, shared: ServedProject) -> None:
    written = api.files.write("notes/a.bin", b"\x00\xffbinary\n")
    assert (written.status, written.bytes) == ("created", 9)
    assert (shared.root / "notes" / "a.bin").read_bytes() == b"\x00\xffbinary\n"
    api.files.write("notes/b.txt", b"one\ntwo\n")
    edited = api.files.edit("notes/b.txt", "two", "three")
    assert edited.replacements == 1
    assert "+three" in (edited.diff or "")
    shown = api.files.view("notes/b.txt")
    assert "three" in shown.to_text()
    asked = api.run("rm -rf notes")
    assert asked.status == "confirmation_required", asked.text
    assert asked.confirmation is not None
    assert api.run("echo first > notes/c.txt").status == "ok"
    step = api.run("echo gone > notes/b.txt")
    assert step.status == "ok", step.text
    assert step.checkpoint is not None
    history = api.checkpoints()
    assert step.checkpoint.id in [row.checkpoint.id for row in history.rows]
    newest = api.checkpoints(limit=1)  # the newest only, the others counted
    assert [row.checkpoint.id for row in newest.rows] == [step.checkpoint.id]
    assert newest.older == len(history.rows) - 1 > 0
    assert "notes/b.txt" in [c.path for c in api.diff(step.checkpoint.id).changes]
    undone = api.undo(step.checkpoint.id)
    assert "notes/b.txt" in [c.path for c in undone.changes]
    assert (shared.root / "notes" / "b.txt").read_text() == "one\nthree\n"
    # the CLI sees the same checkpoints and the same trash
    assert step.checkpoint.id in shared.run("checkpoints").stdout
    removed = api.files.remove(["notes/a.bin"])
    assert removed[0].status == "trashed"
    assert removed[0].entry is not None
    assert removed[0].entry.id in [e.id for e in api.files.trashed()]
    assert api.files.restore(removed[0].entry.id).restored_to.endswith("notes/a.bin")
    assert (shared.root / "notes" / "a.bin").exists()


def test_tasks_and_sandboxes_through_the_server(api: Canal, shared: ServedProject) -> None:
    started = api.tasks.start("echo from-task; sleep 0.2", name="t")
    assert started.task is not None, started
    ended = api.tasks.wait(started.task.id, 60)
    assert ended.exit_code == 0
    assert "from-task" in api.tasks.read(started.task.id).text
    assert api.tasks.show(started.task.id).text.startswith("from-task")
    assert started.task.id in [r.id for r in api.tasks.list()]
    info = api.up()
    assert info.running
    assert any(row["name"] == "default" for row in api.ps())
    assert re.search(r"t-\w+", shared.run("task", "list").stdout)


def test_what_the_signature_does_not_allow_is_refused_by_the_server(api: Canal) -> None:
    with pytest.raises(TypeError, match="person"):  # the client's own signature refuses it first
        api.files.edit("notes/x", "a", "b", person=True)  # type: ignore[call-arg]
    remote = api.files
    caller = remote._caller  # type: ignore[attr-defined]
    with pytest.raises(CanalError) as sent:
        caller("files.edit", {"path": "x", "old": "a", "new": "b", "person": True})
    assert sent.value.code == "API_CALL_INVALID"
    with pytest.raises(CanalError) as unknown:
        caller("services", {})
    assert unknown.value.code == "API_CALL_INVALID"


def test_the_records_read_through_the_server_as_the_cli_shows_them(api: Canal,
                                                                   shared: ServedProject) -> None:
    api.run("true")  # at least one run recorded
    shown = api.audit.show(event="run.")
    assert shown.records
    assert all(r.event.startswith("run.") for r in shown.records)
    cli = json.loads(shared.run("audit", "show", "--event", "run.", "--json").stdout)
    assert [r.to_json() for r in shown.records] == cli["records"][: len(shown.records)]
    assert api.audit.verify().records >= len(shown.records)
    assert api.settings.status().to_json() == {k: v for k, v in json.loads(
        shared.run("config", "status", "--json").stdout).items() if k != "status"}
    assert api.keys.list().source in ("env", "file")
    assert api.state.verify().failed == []
    assert isinstance(api.approvals.pending(), list)


def test_nothing_that_acts_for_a_person_is_a_call_of_the_server(api: Canal) -> None:
    caller = api.audit._caller  # type: ignore[attr-defined]
    for call, args in (("approvals.decide", {"token": "c_1", "decision": "approve"}),
                       ("settings.approve", {"digest": "sha256:0"}), ("keys.rotate", {}),
                       ("audit.record", {"event": "forged.one", "data": {}, "actor": "person"}),
                       ("state.show", {"doc_id": "x", "reveal": True})):
        with pytest.raises(CanalError) as refused:
            caller(call, args)
        assert refused.value.code == "API_CALL_INVALID", call
    assert not any(r.event == "forged.one" for r in api.audit.show().records)


def _server_status(served: ServedProject) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(served.run("server", "status", "--json").stdout)
    return data


def test_the_server_keeps_the_projects_canal_until_its_settings_change(
        served: ServedProject, monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 33: one Canal per project kept between calls (settings read, checked and keys derived once);
    a loosening canal.yaml written between two calls is refused on the second, as a fresh one would."""
    for name, value in served.env.items():
        if name.startswith("CANAL_"):
            monkeypatch.setenv(name, value)
    monkeypatch.delenv("CANAL_NO_SERVER", raising=False)
    remote = Canal.connect(served.root)
    assert remote.run("true").status == "ok"
    time.sleep(SETTLE_S + 0.2)  # the key ring was made just now: what is read from it settles first
    assert remote.run("true").status == "ok"
    builds = _server_status(served)["api_canal_builds"]
    for _ in range(5):
        assert remote.run("echo kept").status == "ok"
    status = _server_status(served)
    assert (status["api_canal_builds"], status["api_canals"]) == (builds, 1)
    (served.root / "canal.yaml").write_text("sandbox: {network: bridge}\n")  # looser than the defaults
    with pytest.raises(CanalError) as refused:
        remote.run("true")
    assert refused.value.code == "CONFIG_UNAPPROVED"
    (served.root / "canal.yaml").unlink()
    assert remote.run("true").status == "ok"
    assert _server_status(served)["api_canal_builds"] > builds


def test_the_api_client_keeps_its_connection_and_survives_a_server_restart(
        served: ServedProject, monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 33: each thread's calls go on one kept connection (no connect and handshake per call); a
    server stopped between two calls (idle, replaced, asked) costs the next call a new connection, and a
    forked child makes its own instead of sharing the parent's."""
    for name, value in served.env.items():
        if name.startswith("CANAL_"):
            monkeypatch.setenv(name, value)
    monkeypatch.delenv("CANAL_NO_SERVER", raising=False)
    remote = Canal.connect(served.root)
    assert remote.run("cd /tmp && export KEPT=1").status == "ok"
    before = _server_status(served)["accepted"]
    for _ in range(5):
        assert remote.run("true").status == "ok"
    assert _server_status(served)["accepted"] == before + 1  # the status call's own connection
    first_pid = _server_status(served)["pid"]
    assert served.run("server", "stop").returncode == 0
    again = remote.run("echo $KEPT")  # the stopped server said bye: a new one serves it
    assert again.status == "ok", again.text
    assert _server_status(served)["pid"] != first_pid
    child = os.fork()
    if child == 0:  # the child's call must not read the parent's answers, nor the parent the child's
        code = 0 if "child" in remote.run("echo child").text else 3
        os._exit(code)
    assert "parent" in remote.run("echo parent").text
    assert os.waitpid(child, 0)[1] == 0
    assert "parent again" in remote.run("echo parent again").text
    remote.close()
