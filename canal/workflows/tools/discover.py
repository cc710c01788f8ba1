"""``canal discover``: scan tools/ and workflows/, compare with the cached index, regenerate it.

Everything is computed (and every rules file parsed) before the first write, so a bad file leaves
the previous index in place. Files are written through the caller's ``write`` (the runtime passes its
atomic 0600 writer); ``index.json`` goes last, so an interrupted run is simply redone.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from canal.workflows.tools.backends import (
    SkippedTool,
    backend_tools,
    listing_path,
    listing_text,
    read_listings,
)
from canal.workflows.tools.extract import auto_rules
from canal.workflows.tools.index import Entry, IndexFile, estimate_tokens, read_index, render_index
from canal.workflows.tools.layout import (
    discover_dir,
    index_json_path,
    index_text_path,
    meta_path,
    refuse_symlink,
    rules_path,
)
from canal.workflows.tools.meta import build_meta
from canal.workflows.tools.model import ToolDefinition
from canal.workflows.tools.registry import ToolRegistry, display_path
from canal.workflows.tools.rules import effective, parse_rules, regenerate
from canal.workflows.tools.workflow_scan import scan_workflows

Writer = Callable[[Path, str], None]
RULES_HEADER = ("rules for tool {name}: lines ending in #auto are rewritten by canal discover; "
                "lines you add (IGNORE:, KEEP:, NOTE:, ENUM:) are kept and win")


class DiscoverSummary(BaseModel):
    """The one line ``canal discover`` prints (and ``--json`` returns) exactly."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    status: Literal["ok"] = "ok"
    total: int
    added_count: int
    removed_count: int
    added: list[str]
    removed: list[str]
    workflow_count: int


@dataclass(frozen=True)
class DiscoverResult:
    summary: DiscoverSummary
    index: IndexFile
    index_text: str
    index_tokens: int
    index_path: Path
    skipped: list[SkippedTool] = field(default_factory=list)  # backend tools left out, and why


def _keys(index: IndexFile) -> set[tuple[str, str]]:
    return {("workflow", e.name) for e in index.workflows} | {("tool", e.name) for e in index.tools}


def summarize(previous: IndexFile, current: IndexFile) -> DiscoverSummary:
    before, after = _keys(previous), _keys(current)
    added = sorted(name for _, name in after - before)
    removed = sorted(name for _, name in before - after)
    return DiscoverSummary(total=current.total, added_count=len(added), removed_count=len(removed),
                           added=added, removed=removed, workflow_count=len(current.workflows))


def _tool_files(project_dir: Path, tool: ToolDefinition) -> dict[Path, str]:
    path = refuse_symlink(rules_path(project_dir, tool.name), project_dir)
    text = path.read_text(encoding="utf-8") if path.is_file() else ""
    lines = parse_rules(text, display_path(path, project_dir), tool.parameters)
    generated = auto_rules(tool)
    meta = build_meta(tool, effective(lines, generated), include_ignored=True)
    return {
        path: regenerate(lines, generated, RULES_HEADER.format(name=tool.name)),
        meta_path(project_dir, tool.name): meta.model_dump_json(indent=2) + "\n",
    }


def _stale_meta(project_dir: Path, keep: set[str]) -> list[Path]:
    folder = discover_dir(project_dir) / "tools"
    if not folder.is_dir():
        return []
    return [p for p in folder.glob("*.json") if p.stem not in keep]


def discover(project_dir: Path, write: Writer, *, listed: Mapping[str, list[dict[str, Any]]] | None = None,
             servers: Collection[str] = ()) -> DiscoverResult:
    """Regenerate the index, metadata and rules files of ``project_dir``; report what changed.

    ``listed``: what each MCP server that answered listed now (its listing file is rewritten);
    ``servers``: every configured server (one that did not answer keeps its previous listing; the
    listing of a server no longer configured goes)."""
    listings = {**{k: v for k, v in read_listings(project_dir).items() if k in servers}, **(listed or {})}
    local = ToolRegistry.local(project_dir)
    backends, skipped = backend_tools(listings, local.names())
    registry = ToolRegistry({**{t.name: t for t in local}, **backends})
    current = IndexFile(
        workflows=[Entry(name=w.name, description=w.description) for w in scan_workflows(project_dir)],
        tools=[Entry(name=t.name, description=t.description) for t in registry],
    )
    files: dict[Path, str] = {}
    for tool in registry:
        files.update(_tool_files(project_dir, tool))
    text = render_index(current)
    files[index_text_path(project_dir)] = text
    previous = read_index(project_dir) or IndexFile()
    files[index_json_path(project_dir)] = json.dumps(current.model_dump(), indent=2) + "\n"
    for server, tools in (listed or {}).items():
        files[listing_path(project_dir, server)] = listing_text(server, tools)
    stale = _stale_meta(project_dir, set(registry.names()))
    stale += [listing_path(project_dir, s) for s in read_listings(project_dir) if s not in servers]
    for path in [*files, *stale]:
        refuse_symlink(path, project_dir)
    for path, content in files.items():  # index.json is last: an interrupted run is simply redone
        write(path, content)
    for path in stale:
        path.unlink(missing_ok=True)
    return DiscoverResult(summary=summarize(previous, current), index=current, index_text=text,
                          index_tokens=estimate_tokens(text), index_path=index_text_path(project_dir),
                          skipped=skipped)
