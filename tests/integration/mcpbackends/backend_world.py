"""A project whose canal.yaml names MCP servers the tests write themselves, driven through the real CLI
(one ``canal`` process per command) against real sandboxes."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

from project_helpers import CliProject

DATA = Path(__file__).parents[2] / "data" / "mcp"

LIST = {"name": "list_projects", "description": "List the projects",
        "inputSchema": {"type": "object", "properties": {}}, "annotations": {"readOnlyHint": True}}
CREATE = {"name": "create_project", "description": "Create a project\nIt returns the new project.",
          "inputSchema": {"type": "object", "required": ["name", "kind"], "properties": {
              "name": {"type": "string", "description": "Project name"},
              "kind": {"type": "integer", "description": "Kind: 1-internal,2-client"},
              "id": {"type": "integer"}, "insert_time": {"type": "string"},
              "update_admin": {"type": "string"}}},
          "outputSchema": {"type": "object"}, "annotations": {"destructiveHint": False}}
DELETE = {"name": "delete_project", "description": "Delete a project",
          "inputSchema": {"type": "object", "required": ["id"], "properties": {"id": {"type": "integer"}}}}
FAIL = {"name": "fail", "description": "Always fails", "annotations": {"readOnlyHint": True},
        "inputSchema": {"type": "object", "properties": {}}}
DUMP = {"name": "dump", "description": "Returns 10 MB", "annotations": {"readOnlyHint": True},
        "inputSchema": {"type": "object", "properties": {}}}
TOKEN = {"name": "token_fingerprint", "description": "What the server was given",
         "annotations": {"readOnlyHint": True}, "inputSchema": {"type": "object", "properties": {}}}
BAD_SCHEMA = {"name": "bad_schema", "description": "Takes a string, not an object",
              "inputSchema": {"type": "string"}}


@dataclass(frozen=True)
class BackendProject(CliProject):
    """The shared CLI project (project_helpers), with its MCP servers' view."""

    timeout: ClassVar[float] = 180  # a discover may wait on a hanging server's timeout

    def discover(self) -> tuple[dict[str, Any], list[str]]:
        """The summary line, and the notes on stderr (codes first)."""
        done = self.run("discover")
        assert done.returncode == 0, (done.stdout, done.stderr)
        lines = done.stdout.splitlines()
        assert len(lines) == 1, done.stdout
        return json.loads(lines[0]), [n for n in done.stderr.splitlines() if not n.startswith("index: ")]

    def set_tools(self, *tools: dict[str, Any]) -> None:
        (self.root / "mcp" / "tools.json").write_text(json.dumps(list(tools)))

    def calls(self, server: str = "backend") -> list[dict[str, Any]]:
        """What the server was called with (its log in its sandbox)."""
        from canal.host.paths import project_key

        name = f"canal-{project_key(self.root)}-_mcp-{server}"
        done = subprocess.run(["docker", "exec", name, "cat", "/tmp/calls.jsonl"], capture_output=True,
                              text=True, check=False, timeout=60)
        return [json.loads(line) for line in done.stdout.splitlines()] if done.returncode == 0 else []

    def approve(self) -> None:
        """A person approves canal.yaml (the server files' content included), in-process."""
        code = ("from pathlib import Path; from canal.runtime.services import Services; "
                "from canal.host.approvals import Approver; s = Services(Path('.')); "
                "s.trust.approve(Approver(user='alice', how='tty'), s.trust.status().snapshot.digest)")
        subprocess.run([sys.executable, "-c", code], cwd=self.root, env=self.env, check=True, timeout=60)


def copy_sdk(dest: Path) -> Path:
    """The installed mcp SDK and what it needs, copied file by file (their RECORDs) to ``dest``: a
    folder the sandbox may mount (Canal refuses to mount its own installation), for a server on the SDK."""
    import importlib.metadata as metadata

    todo, seen = ["mcp", "cryptography"], set[str]()  # cryptography: imported, not declared
    while todo:
        name = todo.pop()
        try:
            dist = metadata.distribution(name)
        except metadata.PackageNotFoundError:
            continue  # a dependency of another platform
        if dist.metadata["Name"].lower() in seen:
            continue
        seen.add(dist.metadata["Name"].lower())
        for file in dist.files or []:
            source = Path(str(dist.locate_file(file)))
            if source.is_file() and ".." not in file.parts and not str(file).endswith(".pth"):
                (dest / file).parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(source, dest / file)
        todo += [r.split(";")[0].split("[")[0].split(" ")[0].split("<")[0].split(">")[0].split("=")[0]
                 .split("!")[0].split("~")[0] for r in dist.requires or [] if "extra ==" not in r]
    return dest


def make_project(base: Path, servers: dict[str, Any], *, extra: dict[str, Any] | None = None,
                 files: dict[str, Path] | None = None,
                 tools: tuple[dict[str, Any], ...] = (LIST, CREATE, DELETE)) -> BackendProject:
    project = BackendProject(root=base / "project", state=base / "state", config=base / "config")
    (project.root / "mcp").mkdir(parents=True)
    shutil.copy(DATA / "stdlib_server.py", project.root / "mcp" / "backend.py")
    for name, source in (files or {}).items():
        shutil.copy(source, project.root / name)
    project.set_tools(*tools)
    config = {"tools": {"mcp_servers": servers}, **(extra or {})}
    (project.root / "canal.yaml").write_text(json.dumps(config) + "\n")  # JSON is YAML
    if os.geteuid() == 0:
        for path in [project.root, *project.root.rglob("*")]:
            os.chown(path, 1000, 1000)  # the sandbox user owns it, as on a developer's machine
    project.approve()
    return project
