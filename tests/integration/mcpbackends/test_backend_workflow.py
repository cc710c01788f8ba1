"""The shipped example project (docs/examples/mcp-backend): a workflow's automated step calls a tool of
an MCP backend with the gate's data, and the next step reads the ticket the backend returned."""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any

from backend_world import BackendProject
from project_helpers import remove_project_containers

EXAMPLE = Path(__file__).parents[3] / "docs" / "examples" / "mcp-backend"


def test_a_workflow_step_calls_a_backend_tool_with_gate_data(tmp_path: Path, sandbox_image: str,
                                                             docker_client: Any) -> None:
    project = BackendProject(root=tmp_path / "project", state=tmp_path / "state", config=tmp_path / "config")
    shutil.copytree(EXAMPLE, project.root)
    if os.geteuid() == 0:
        for path in [project.root, *project.root.rglob("*")]:
            os.chown(path, 1000, 1000)
    project.approve()
    try:
        summary, notes = project.discover()
        assert summary["added"] == ["close_ticket", "file-ticket", "list_tickets", "open_ticket"]
        assert notes == []
        run = project.json("workflow", "start", "file-ticket")["run_id"]
        advanced = project.json("workflow", "advance", run, "--gate-data",
                                '{"title": "login page is slow", "priority": 1}')
        assert [(r["id"], r["outcome"]) for r in advanced["ran"]] == [("open", "ok")]
        assert advanced["step"]["id"] == "done"
        assert "Ticket **#1** is open: login page is slow (priority 1)." in advanced["step"]["instructions"]
        listed = project.run("tool", "call", "list_tickets")
        assert listed.stdout.startswith("#1 [p1] login page is slow\n")
        audit = project.run("audit", "show").stdout
        assert 'tool tickets.open_ticket {"priority":1,"title":"login page is slow"}' in audit
    finally:
        remove_project_containers(docker_client, project.root)
