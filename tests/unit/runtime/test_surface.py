"""``Canal.connect(project)`` offers every public method and sub-API of ``Canal``, with the same signature,
and the server accepts exactly the calls and arguments those signatures allow."""

from __future__ import annotations

import inspect
import json
from pathlib import Path
from typing import Any

import pytest

from canal import Canal
from canal.host.files import WriteResult
from canal.runtime import surface
from canal.runtime.calls import operation, operations, serve
from canal.runtime.errors import API_CALL_INVALID
from canal.runtime.remote import remote_classes
from canal.runtime.run.result import RunResult
from tests.error_codes import raises_code

# Canal's members that wire it together rather than make up its API: they hold in-process objects (the
# policy engine, the backend, the pipeline, the redactor) or facts of this host (its folders, the files the
# settings were read from) that no other process can use.
WIRING = {"backend", "pipeline", "policy", "fork_policy", "task_manager", "ref", "config",
          "unattended", "project_dir", "sandbox", "actor", "connect", "redactor", "host_folders",
          "project_id", "sources"}


def _public(cls: type[Any]) -> set[str]:
    return {name for name in dir(cls) if not name.startswith("_")}


def _protocol_members(protocol: type[Any]) -> set[str]:
    return {name for name in vars(protocol) if not name.startswith("_")}


def test_every_public_member_of_canal_is_in_the_api_or_is_wiring() -> None:
    assert _public(Canal) - WIRING == _protocol_members(surface.CanalAPI)


@pytest.mark.parametrize("api", [None, *surface.SUB_APIS])
def test_the_remote_client_has_every_member_with_the_same_signature(api: str | None) -> None:
    protocol = surface.CanalAPI if api is None else surface.SUB_APIS[api]
    remote = remote_classes()[api]
    assert _protocol_members(protocol) <= _public(remote)
    for name in _protocol_members(protocol):
        declared = inspect.getattr_static(protocol, name)
        made = inspect.getattr_static(remote, name)
        if isinstance(declared, property):
            assert isinstance(made, property), name
        elif name != "close":
            assert inspect.signature(made) == inspect.signature(declared), name


def test_an_object_of_the_remote_client_is_an_instance_of_the_protocols(tmp_path: Path) -> None:
    remote = Canal.connect(tmp_path)  # nothing is sent until a call
    assert isinstance(remote, surface.CanalAPI)
    for api, protocol in surface.SUB_APIS.items():
        assert isinstance(getattr(remote, api), protocol), api


def test_a_flag_only_a_verified_person_may_set_is_no_argument_of_the_server() -> None:
    for name in ("apply", "prune_checkpoints", "files.edit", "files.write", "files.remove", "files.restore"):
        with raises_code(API_CALL_INVALID, match="no argument 'person'"):
            operation(name).load_args({"person": True, **_required(name)})


def _required(name: str) -> dict[str, Any]:
    samples = {"name": "f", "path": "a", "old": "x", "new": "y", "data": "", "paths": ["a"],
               "entry_id": "t-1"}
    op = operation(name)
    return {p: samples[p] for p, param in op.signature.parameters.items() if param.default is param.empty}


def test_unknown_calls_wrong_types_and_missing_arguments_are_refused() -> None:
    with raises_code(API_CALL_INVALID) as unknown:
        operation("services")
    assert unknown.value.code == "API_CALL_INVALID"
    with raises_code(API_CALL_INVALID, match="timeout_s"):
        operation("run").load_args({"command": "true", "timeout_s": "soon"})
    with raises_code(API_CALL_INVALID, match="missing a required argument"):
        operation("files.edit").load_args({"path": "a"})
    assert {"run", "files.edit", "tasks.wait", "workflows.advance", "down_report"} <= set(operations())
    assert "close" not in operations()  # the remote client's own


def test_the_caller_refuses_a_wrong_value_before_anything_is_sent() -> None:
    """pydantic would otherwise send it with a warning (an error under this suite's filterwarnings)."""
    with raises_code(API_CALL_INVALID, match="argument 'timeout_s'"):
        operation("run").dump_args({"command": "true", "timeout_s": "soon"})


def test_bytes_cross_as_base64_whatever_they_hold() -> None:
    op = operation("files.write")
    data = bytes(range(256))
    sent = op.dump_args({"path": "bin", "data": data})
    assert isinstance(sent["data"], str)
    assert op.load_args(sent)["data"] == data


def test_a_run_result_keeps_the_text_the_agent_reads() -> None:
    op = operation("run")
    result = RunResult(status="ok", exit_code=0, reason="exited", duration_s=0.1, output="hi\n",
                       text="hi\n[exit:0 | 0.10s]")
    back = op.load_result(op.dump_result(result))
    assert back.text == result.text
    assert back == result
    assert "text" not in result.to_json()  # --json keeps its own shape


class _Files:
    def __init__(self) -> None:
        self.calls: list[tuple[str, bytes]] = []

    def write(self, path: str, data: bytes, **options: Any) -> WriteResult:
        self.calls.append((path, data))
        return WriteResult(status="created", path=path, bytes=len(data), lines=0, diff=None, backup_id=None,
                           sha256="0" * 64)


class _Canal:
    def __init__(self) -> None:
        self.files = _Files()


def test_serve_runs_the_call_on_the_sub_api_and_answers_json() -> None:
    canal = _Canal()
    answer = serve(canal, "files.write", operation("files.write").dump_args({"path": "a", "data": b"\xff"}))
    assert canal.files.calls == [("a", b"\xff")]
    assert operation("files.write").load_result(answer).bytes == 1


# What only a front end that verified a person may do (and a file's bytes unredacted): in-process methods
# of the sub-API objects, never a call of the server (an agent on the host can reach its socket).
PERSON_ONLY = {
    "approvals": ("decide", "decide_as", "approve", "deny", "message", "refused"),
    "settings": ("approve", "approve_as", "message"),
    "audit": ("record", "checkpoint", "ship", "verify_copy"),
    "keys": ("rotate", "retire"),
    "files": ("read_bytes",),
}


@pytest.mark.parametrize(("api", "method"), [(a, m) for a, ms in PERSON_ONLY.items() for m in ms])
def test_what_only_a_verified_person_may_do_is_in_process_and_no_call_of_the_server(
        api: str, method: str, project: Path) -> None:
    in_process = getattr(Canal(project), api)
    assert callable(getattr(in_process, method))  # the front ends that verify a person have it
    assert f"{api}.{method}" not in operations()
    assert not hasattr(remote_classes()[api], method)
    with raises_code(API_CALL_INVALID, match="has no call"):
        serve(Canal(project), f"{api}.{method}", {})


def test_revealing_sealed_values_is_no_argument_of_the_server() -> None:
    with raises_code(API_CALL_INVALID, match="no argument 'reveal'"):
        operation("state.show").load_args({"doc_id": "run-1", "reveal": True})


def test_every_read_of_the_records_crosses_the_wire_as_the_same_value(project: Path) -> None:
    with Canal(project) as canal:
        canal.audit.record("test.note", {"text": "caf\u00e9 \u2713 zebra"}, actor="test")
        calls = {"audit.show": {}, "audit.search": {"text": "ZEBRA"}, "audit.verify": {}, "audit.export": {},
                 "approvals.pending": {}, "settings.status": {}, "settings.approvers": {}, "keys.list": {},
                 "state.verify": {}}
        assert {name for name in operations() if name.split(".")[0] in
                {"audit", "approvals", "settings", "keys", "state"}} - set(calls) == {"approvals.show",
                                                                                       "state.show"}
        for name, args in calls.items():
            op = operation(name)
            here = getattr(getattr(canal, op.api or ""), op.method)(**args)
            there = op.load_result(json.loads(json.dumps(serve(canal, name, op.dump_args(args)))))
            assert there == here, name
    assert [e.event for e in canal.audit.search(text="zebra").shown] == ["test.note"]
