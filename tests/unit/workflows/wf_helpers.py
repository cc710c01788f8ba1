"""Helpers for workflow engine tests: write definitions into tmp folders, build engines over fakes."""

from __future__ import annotations

import textwrap
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from canal.workflows.engine import Engine
from canal.workflows.fakes import ScriptedExecutor
from canal.workflows.memory_store import MemoryRunStore
from canal.workflows.ports import StaticCatalog

EXAMPLES = Path(__file__).resolve().parents[3] / "canal" / "workflows" / "examples"


def write_workflow(root: Path, name: str, steps: Mapping[str, str], *, description: str = "A test") -> Path:
    """Create ``root/name`` with a manifest and ``references/<file>`` for each (file -> text) entry."""
    folder = root / name
    (folder / "references").mkdir(parents=True)
    (folder / "WorkFlow.md").write_text(f"---\nname: {name}\ndescription: {description}\nversion: 2\n---\n"
                                        "Overview.\n")
    for filename, text in steps.items():
        (folder / "references" / filename).write_text(textwrap.dedent(text).lstrip("\n"))
    return folder


ASK = """
---
id: ask
type: interactive
gate:
  schema:
    name:  { type: string, required: true, desc: "Project name", pattern: "^[a-z-]+$" }
    token: { type: string, required: true, sensitive: true, desc: "API token" }
    tier:  { type: string, enum: [free, team], default: free }
    count: { type: integer }
---
Ask for the project name and token.
"""

BUILD = """
---
id: build
type: automated
automation:
  run: ["make-thing", "--name", "{{gate.ask.name}}", "{{gate.ask.tier}}"]
  env: { TOKEN: "{{gate.ask.token}}" }
  result: json
---
Builds it.
"""

PUBLISH = """
---
id: publish
type: automated
automation:
  tool: publish
  input_mapping:
    id: "{{result.build.id}}"
    tags: "{{result.build.tags}}"
    label: "build {{result.build.id}} for {{gate.ask.name}}"
---
Publishes it.
"""

DONE = """
---
id: done
type: notification
---
Built {{result.build.id}} for {{gate.ask.name}} with token {{gate.ask.token}}.
"""

BASIC = {"01-ask.md": ASK, "02-build.md": BUILD, "03-publish.md": PUBLISH, "04-done.md": DONE}


def catalog(idempotent: bool = False) -> StaticCatalog:
    from canal.workflows.fields import FieldSpec
    from canal.workflows.ports import StaticTool

    params = {"id": FieldSpec(type="string", required=True), "tags": FieldSpec(type="array"),
              "label": FieldSpec(type="string")}
    return StaticCatalog({"publish": StaticTool(parameters=params, idempotent=idempotent)})


class Events(list[tuple[str, dict[str, Any]]]):
    def __call__(self, name: str, data: Mapping[str, Any]) -> None:
        self.append((name, dict(data)))

    def names(self) -> list[str]:
        return [name for name, _ in self]


def make_engine(roots: list[Path], store: MemoryRunStore, executor: ScriptedExecutor,
                events: Events | None = None, **kwargs: Any) -> Engine:
    kwargs.setdefault("catalog", catalog())
    hook = events if events is not None else Events()
    return Engine(store=store, executor=executor, roots=roots, on_event=hook, sleep=lambda _s: None, **kwargs)
