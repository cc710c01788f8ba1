"""Wiring of the workflow engine to the run pipeline: a step executor over ``Canal.run_argv``, a run
store over the sealed store, the audit hook, and ``open_engine(canal)`` that builds the engine."""

from canal.runtime.wfrun.events import audit_hook
from canal.runtime.wfrun.executor import CanalStepExecutor
from canal.runtime.wfrun.factory import ProjectTools, open_engine, workflow_roots
from canal.runtime.wfrun.store import SealedRunStore

__all__ = ["CanalStepExecutor", "ProjectTools", "SealedRunStore", "audit_hook", "open_engine",
           "workflow_roots"]
