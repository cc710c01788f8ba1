"""Tools from MCP backends (issue 38): ``canal discover`` lists them from a stdio server that runs in a
sandbox of its own, and every call goes through the policy, a confirmation where it asks for one, the
audit log and the presenter. The servers are the tests' own (tests/data/mcp), in the default image."""

from __future__ import annotations

import json
import shlex
from collections.abc import Callable
from pathlib import Path
from typing import Any

from backend_world import BAD_SCHEMA, CREATE, DATA, DELETE, DUMP, FAIL, LIST, TOKEN, BackendProject, copy_sdk

from canal.host.paths import project_key

Make = Callable[..., BackendProject]
BACKEND = {"command": ["python3", "mcp/backend.py"], "workspace": "ro"}  # it reads mcp/tools.json there


def test_discover_syncs_the_backend_tools_across_runs(backend_project: Make) -> None:
    project = backend_project({"backend": BACKEND})
    summary, notes = project.discover()
    assert summary == {"status": "ok", "total": 3, "added_count": 3, "removed_count": 0,
                       "added": ["create_project", "delete_project", "list_projects"], "removed": [],
                       "workflow_count": 0}
    assert notes == []
    project.set_tools(LIST, CREATE, DELETE, FAIL)  # two pages of two: pagination
    assert project.discover()[0] == {"status": "ok", "total": 4, "added_count": 1, "removed_count": 0,
                                     "added": ["fail"], "removed": [], "workflow_count": 0}
    project.set_tools(LIST, CREATE, FAIL)
    assert project.discover()[0] == {"status": "ok", "total": 3, "added_count": 0, "removed_count": 1,
                                     "added": [], "removed": ["delete_project"], "workflow_count": 0}

    # the agent reads the fields it must give: system fields left out, enum labels from the description
    meta = project.json("tool", "meta", "create_project", "--required-only")["tool"]
    assert [f["name"] for f in meta["fields"]] == ["kind", "name"]
    kind = meta["fields"][0]
    assert [(c["value"], c["label"]) for c in kind["choices"]] == [(1, "internal"), (2, "client")]
    full = project.json("tool", "meta", "create_project")["tool"]
    assert {f["name"] for f in full["fields"]} == {"kind", "name"}  # id, insert_time, update_admin: IGNORE
    rules = (project.root / ".canal" / "discover" / "rules" / "create_project.rules").read_text()
    assert "IGNORE:id #auto" in rules
    assert "IGNORE:update_admin #auto" in rules


def test_calls_are_decided_confirmed_audited_and_run_in_the_servers_sandbox(backend_project: Make,
                                                                            docker_client: Any) -> None:
    project = backend_project({"backend": BACKEND})
    project.discover()
    listed = project.run("tool", "call", "list_projects")
    assert listed.returncode == 0, listed.stderr
    assert listed.stdout.startswith("alpha\nbeta\n")
    made = project.json("tool", "call", "create_project", "--args", '{"name": "demo", "kind": 2}')
    assert made["status"] == "ok"
    assert made["decision"]["action"] == "allow"
    assert json.loads(made["output"]) == {"created": "demo", "kind": 2, "id": 7}

    # not read-only and not marked non-destructive: stops, and nothing reaches the server
    asked = project.run("tool", "call", "delete_project", "--args", '{"id": 3}')
    assert asked.returncode == 120
    assert asked.stderr.splitlines()[0] == "CONFIRMATION_REQUIRED"
    assert "mcp-tool-may-change" in asked.stderr
    assert [c["tool"] for c in project.calls()] == ["list_projects", "create_project"]
    rerun = shlex.split(asked.stderr.splitlines()[-1].removeprefix("Ask the user, then run: "))
    done = project.run(*rerun[1:])
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("deleted 3\n")
    assert project.calls()[-1] == {"tool": "delete_project", "arguments": {"id": 3}}
    again = project.run(*rerun[1:])
    assert again.returncode == 122  # a token confirms one call

    # wrong types are refused like a gate's, before the server sees anything
    wrong = project.run("tool", "call", "delete_project", "--args", '{"id": "3"}')
    assert wrong.returncode == 2
    assert wrong.stderr.splitlines()[:2] == [
        "TOOL_ARGS_INVALID",
        "tool delete_project: invalid values: id: expected integer, got str. Nothing was run."]
    assert len(project.calls()) == 3

    audit = project.run("audit", "show").stdout
    assert audit.count("tool.started") == 3
    assert audit.count("tool.completed") == 3
    assert "tool.confirmation_required" in audit
    assert "tool backend.delete_project {\"id\":3}" in audit
    assert project.run("audit", "verify").returncode == 0

    # the server ran in a sandbox of its own, hardened like every sandbox
    name = f"canal-{project_key(project.root)}-_mcp-backend"
    (server,) = docker_client.containers.list(filters={"name": name})
    host = server.attrs["HostConfig"]
    assert host["CapDrop"] == ["ALL"]
    assert "no-new-privileges" in " ".join(host["SecurityOpt"])
    assert host["ReadonlyRootfs"] is True
    assert server.attrs["Config"]["User"] == "1000:1000"


def test_strict_runs_only_read_only_backend_tools(backend_project: Make) -> None:
    project = backend_project({"backend": BACKEND}, extra={"policy": {"profile": "strict"}})
    project.discover()
    assert project.run("tool", "call", "list_projects").returncode == 0
    refused = project.run("tool", "call", "create_project", "--args", '{"name": "demo", "kind": 1}')
    assert refused.returncode == 121
    assert refused.stderr.startswith("POLICY_DENIED\n")
    assert "mcp-tool-not-read-only" in refused.stderr
    assert [c["tool"] for c in project.calls()] == ["list_projects"]


def test_each_broken_server_has_its_code_and_the_rest_stands(backend_project: Make) -> None:
    servers = {
        "backend": BACKEND,
        "hangs": {"command": ["python3", "mcp/backend.py", "--mode", "hang"], "timeout": 2},
        "chatty": {"command": ["python3", "mcp/backend.py", "--mode", "not-json"]},
        "garbled": {"command": ["python3", "mcp/backend.py", "--mode", "malformed"]},
        "absent": {"command": ["no-such-mcp-server"]},
    }
    project = backend_project(servers, tools=(LIST, FAIL, DUMP, BAD_SCHEMA, DELETE))
    summary, notes = project.discover()
    assert summary["added"] == ["delete_project", "dump", "fail", "list_projects"], notes
    codes = {note.split(":")[0]: note for note in notes}
    assert set(codes) == {"MCP_SERVER_TIMEOUT", "MCP_SERVER_NOT_MCP", "MCP_PROTOCOL_ERROR",
                          "MCP_SERVER_NOT_STARTED", "MCP_TOOL_SCHEMA_INVALID"}
    assert "hangs did not answer initialize within 2 s" in codes["MCP_SERVER_TIMEOUT"]
    assert "no-such-mcp-server" in codes["MCP_SERVER_NOT_STARTED"]
    assert "bad_schema" in codes["MCP_TOOL_SCHEMA_INVALID"]

    failed = project.run("tool", "call", "fail")  # isError: a failed result with the server's words
    assert failed.returncode == 1
    assert "the backend refused: quota exceeded" in failed.stdout
    big = project.run("tool", "call", "dump")
    assert big.returncode == 125
    assert big.stderr.startswith("MCP_RESULT_TOO_LARGE\n")

    # the server changed under the catalog: refused until the agent reads the tool again
    project.set_tools(LIST, FAIL, DUMP, {**DELETE, "inputSchema": {"type": "object", "properties": {
        "id": {"type": "string"}}}})
    changed = project.run("tool", "call", "delete_project", "--args", '{"id": 3}')
    assert changed.returncode == 2
    assert changed.stderr.startswith("TOOL_SCHEMA_CHANGED\n")
    project.set_tools(LIST, FAIL, DUMP)
    gone = project.run("tool", "call", "delete_project", "--args", '{"id": 3}')
    assert gone.returncode == 2
    assert gone.stderr.startswith("TOOL_GONE\n")
    assert [c["tool"] for c in project.calls()] == ["fail", "dump"]
    # a server that breaks keeps its tools in the catalog, and says so
    (project.root / "mcp" / "tools.json").write_text("{not json")  # its tools/list now crashes it
    summary, notes = project.discover()
    assert (summary["total"], summary["removed"]) == (4, [])
    ended = "MCP_SERVER_NOT_MCP: MCP server backend is not speaking MCP: it ended"
    assert any(n.startswith(ended) for n in notes)
    project.set_tools(LIST, FAIL, DUMP)
    assert project.discover()[0]["removed"] == ["delete_project"]


def test_the_servers_code_and_credentials_stay_out_of_the_agents_reach(backend_project: Make) -> None:
    servers = {"backend": {"command": ["python3", "mcp/backend.py"],  # no workspace: the default
                           "env_from_env": {"BACKEND_TOKEN": "CANAL_TEST_BACKEND_TOKEN"}}}
    project = backend_project(servers, tools=(LIST, TOKEN))
    secret = {"CANAL_TEST_BACKEND_TOKEN": "s3cr3t-backend-token"}
    summary, _ = project.run("discover", env=secret), None
    assert summary.returncode == 0, summary.stderr
    given = project.run("tool", "call", "token_fingerprint", env=secret)
    assert given.returncode == 0, given.stderr
    import hashlib

    assert given.stdout.startswith(hashlib.sha256(b"s3cr3t-backend-token").hexdigest()[:12])
    # nor does it see the agent's work, or run code the agent wrote there
    assert project.json("tool", "call", "workspace_files", env=secret)["output"].startswith("[]")
    unset = project.run("tool", "call", "token_fingerprint")
    assert unset.returncode == 125
    assert unset.stderr.startswith("MCP_SERVER_NOT_STARTED\n")
    assert "CANAL_TEST_BACKEND_TOKEN" in unset.stderr
    # the agent's sandbox has no such variable, and cannot name the server's sandbox
    env = project.run("run", "--", "env", env=secret)
    assert "s3cr3t" not in env.stdout
    named = project.run("run", "-s", "_mcp-backend", "--", "env", env=secret)
    assert named.returncode == 2
    assert "s3cr3t" not in named.stdout + named.stderr
    # an edit of the server's file is not what runs: it needs a person again
    server = project.root / "mcp" / "backend.py"
    server.write_text(server.read_text().replace("alpha", "pwned"))
    edited = project.run("tool", "call", "list_projects", env=secret)
    assert edited.returncode != 0
    assert "pwned" not in edited.stdout
    assert edited.stderr.splitlines()[0] in ("CONFIG_UNAPPROVED", "CONFIG_TRUST_INVALID")


def test_a_server_on_the_mcp_sdk(backend_project: Make, tmp_path: Path) -> None:
    """The SDK's own server (MCPServer over stdio), its annotations read by the policy."""
    sdk = copy_sdk(tmp_path / "sdk")
    extra = {"mount_roots": [str(sdk)],
             "sandbox": {"mounts": [{"source": str(sdk), "target": "/opt/mcp-sdk", "read_only": True}]}}
    project = backend_project({"sdk": {"command": ["python3", "mcp/sdk_server.py"]}}, extra=extra,
                              files={"mcp/sdk_server.py": DATA / "sdk_server.py"})
    summary, notes = project.discover()
    assert (summary["added"], notes) == (["count_words", "purge_notes"], [])
    counted = project.json("tool", "call", "count_words", "--args", '{"text": "one two three"}')
    assert json.loads(counted["output"]) == {"result": 3}
    asked = project.run("tool", "call", "purge_notes", "--args", '{"reason": "spring cleaning"}')
    assert asked.returncode == 120
    rerun = shlex.split(asked.stderr.splitlines()[-1].removeprefix("Ask the user, then run: "))
    done = project.run(*rerun[1:])
    assert done.returncode == 0, done.stderr
    assert "purged: spring cleaning" in done.stdout
