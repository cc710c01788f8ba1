"""``open_engine(canal)``: the workflow engine for one project, wired to the run pipeline.

Workflows are looked up in the project's ``workflows/`` folder first, then in the examples shipped with
Canal. Tools come from the project's ``tools/`` folder, loaded on first use (a project without tools,
or whose workflows use none, never reads them).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from canal.runtime.wfrun.events import audit_hook, both
from canal.runtime.wfrun.executor import CanalStepExecutor
from canal.runtime.wfrun.store import SealedRunStore
from canal.workflows import library
from canal.workflows.engine import Engine
from canal.workflows.ports import EventHook
from canal.workflows.tools import ToolDefinition, ToolRegistry

if TYPE_CHECKING:
    from canal.runtime.api import Canal

PROJECT_WORKFLOWS = "workflows"
# from a module file: the package itself may be a namespace when a test folder shadows its name
EXAMPLES = Path(library.__file__).parent / "examples"


def workflow_roots(project_dir: Path) -> list[Path]:
    """Where workflows are found by name, in order: the project's own, then the shipped examples."""
    return [project_dir / PROJECT_WORKFLOWS, EXAMPLES]


class ProjectTools:
    """The project's tool registry, loaded once on first use. A ``ToolCatalog`` for the engine."""

    def __init__(self, project_dir: Path) -> None:
        self.project_dir = project_dir
        self._registry: ToolRegistry | None = None

    @property
    def registry(self) -> ToolRegistry:
        if self._registry is None:
            self._registry = ToolRegistry.from_project(self.project_dir)
        return self._registry

    def get(self, name: str) -> ToolDefinition:
        """The tool, or ``TOOL_NOT_FOUND`` (code ``TOOL_NOT_FOUND``)."""
        return self.registry.get(name)

    def definition(self, name: str) -> ToolDefinition:
        return self.registry.get(name)


def open_engine(canal: Canal, on_event: EventHook | None = None) -> Engine:
    """The engine for ``canal``'s project: sealed run store, pipeline executor, tools, audit events
    (and ``on_event`` too, after the audit record: a front end showing steps as they start and end)."""
    tools = ProjectTools(canal.project_dir)
    audit = audit_hook(canal._services.audit, actor=canal.actor)
    return Engine(store=SealedRunStore(canal._services.sealed), executor=CanalStepExecutor(canal, tools),
                  catalog=tools, roots=workflow_roots(canal.project_dir),
                  on_event=audit if on_event is None else both(audit, on_event))
