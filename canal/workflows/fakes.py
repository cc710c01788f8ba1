"""A scripted ``StepExecutor`` for tests of code that drives the engine without sandboxes.

Each step id maps to a queue of outcomes (or callables building one from the request); a step with no
script succeeds with an empty result. Every request is kept, in order.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from canal.workflows.ports import StepOutcome, StepRequest

Scripted = StepOutcome | Callable[[StepRequest], StepOutcome]


@dataclass
class ScriptedExecutor:
    scripts: dict[str, list[Scripted]] = field(default_factory=dict)
    requests: list[StepRequest] = field(default_factory=list)

    @classmethod
    def of(cls, scripts: Mapping[str, Sequence[Scripted]]) -> ScriptedExecutor:
        return cls(scripts={step: list(items) for step, items in scripts.items()})

    def execute(self, request: StepRequest) -> StepOutcome:
        self.requests.append(request)
        queue = self.scripts.get(request.step_id)
        if not queue:
            return StepOutcome(status="ok", exit_code=0, result={}, output="")
        item = queue.pop(0) if len(queue) > 1 else queue[0]
        return item(request) if callable(item) else item

    def for_step(self, step_id: str) -> list[StepRequest]:
        return [r for r in self.requests if r.step_id == step_id]
