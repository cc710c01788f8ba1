"""Cross-step checks of a loaded workflow: references, tools, compensation, gate defaults.

Every problem names the file and line. The engine refuses to start a workflow with any problem.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from canal.core.next import act
from canal.workflows.errors import WORKFLOW_INVALID, TemplateError
from canal.workflows.fields import FieldSpec, validate_fields
from canal.workflows.frontmatter import FrontMatter, PathKey
from canal.workflows.loader import Loaded, Problem, load
from canal.workflows.model import ENV_NAME_PATTERN, FIELD_NAME_PATTERN, Definition, StepDef
from canal.workflows.ports import ToolCatalog, lookup_tool
from canal.workflows.templates import Ref, refs_in, walk_strings


@dataclass(frozen=True)
class Report:
    root: Path
    problems: list[Problem]
    definition: Definition | None

    @property
    def ok(self) -> bool:
        return not self.problems and self.definition is not None


class _Checker:
    def __init__(self, loaded: Loaded, definition: Definition, catalog: ToolCatalog | None) -> None:
        self.loaded = loaded
        self.definition = definition
        self.catalog = catalog
        self.position = {step.id: index for index, step in enumerate(definition.steps)}
        self.problems: list[Problem] = []

    def add(self, step: StepDef, path: PathKey, message: str) -> None:
        self.problems.append(Problem(step.file, self._matter(step).line_of(path), message))

    def _matter(self, step: StepDef) -> FrontMatter:
        return self.loaded.step_matter[step.id]

    def run(self) -> list[Problem]:
        manifest_name = self.definition.meta.name
        if manifest_name != self.loaded.root.name:
            self.problems.append(Problem("WorkFlow.md", 2, f"name '{manifest_name}' differs from the "
                                         f"folder name '{self.loaded.root.name}'"))
        for step in self.definition.steps:
            self._gate(step)
            self._automation(step)
            self._failure_and_retry(step)
            self._body(step)
        return self.problems

    def _gate(self, step: StepDef) -> None:
        for name, spec in step.fields.items():
            path = ("gate", "schema", name)
            if not re.match(FIELD_NAME_PATTERN, name):
                self.add(step, path, f"gate field '{name}' must match {FIELD_NAME_PATTERN}")
            if spec.default is not None:
                outcome = validate_fields({name: spec}, {name: spec.default})
                for problem in outcome.errors:
                    self.add(step, (*path, "default"), f"default of '{name}': {problem.problem}")

    def _automation(self, step: StepDef) -> None:
        auto = step.automation
        if auto is None:
            return
        for name in auto.env:
            if not re.match(ENV_NAME_PATTERN, name):
                self.add(step, ("automation", "env", name), f"env name '{name}' is not a valid name")
        parts = (("run", auto.run or []), ("env", auto.env), ("input_mapping", auto.input_mapping))
        for base, value in parts:
            for sub, text in walk_strings(value):
                self._template_string(step, ("automation", base, *sub), text)
        if auto.tool is not None:
            self._tool(step, auto.tool, auto.input_mapping)

    def _template_string(self, step: StepDef, path: PathKey, text: str) -> None:
        try:
            refs = refs_in(text, strict=True)
        except TemplateError as exc:
            self.add(step, path, exc.message)
            return
        for ref in refs:
            problem = self._ref_problem(step, ref)
            if problem:
                self.add(step, path, problem)

    def _ref_problem(self, step: StepDef, ref: Ref) -> str | None:
        if ref.step not in self.position:
            return f"{ref}: no step '{ref.step}' in this workflow"
        target = self.definition.step(ref.step)
        if self.position[ref.step] >= self.position[step.id]:
            return f"{ref}: step '{ref.step}' does not come before '{step.id}'"
        if target.compensation:
            return f"{ref}: '{ref.step}' is a compensation step and may never run"
        if ref.namespace == "gate":
            if target.type != "interactive":
                return f"{ref}: '{ref.step}' is {target.type} and has no gate"
            if ref.path[0] not in target.fields:
                known = ", ".join(sorted(target.fields)) or "none"
                return f"{ref}: '{ref.step}' has no gate field '{ref.path[0]}' (fields: {known})"
            return None
        if target.automation is None:
            return f"{ref}: '{ref.step}' is {target.type} and has no result"
        if target.automation.run is not None and target.automation.result == "text" and ref.path:
            return f"{ref}: '{ref.step}' has a text result; set 'result: json' there to use a path"
        return None

    def _tool(self, step: StepDef, name: str, mapping: dict[str, Any]) -> None:
        path: PathKey = ("automation", "tool")
        if self.catalog is None:
            self.add(step, path, f"tool '{name}' cannot be checked: no tool catalog was given")
            return
        tool = lookup_tool(self.catalog, name)
        if tool is None:
            self.add(step, path, f"unknown tool '{name}': the project's tools/ has no such tool")
            return
        params = dict(tool.parameters)
        for param, spec in params.items():
            if spec.required and spec.default is None and param not in mapping:
                self.add(step, ("automation", "input_mapping"),
                         f"tool '{name}' requires '{param}' ({spec.desc or spec.type}): "
                         "map it in input_mapping")
        for param, value in mapping.items():
            where = ("automation", "input_mapping", param)
            if param not in params:
                self.add(step, where, f"tool '{name}' has no parameter '{param}'")
            elif not any(True for _, text in walk_strings(value) if "{{" in text):
                self._literal(step, where, param, params[param], value)

    def _literal(self, step: StepDef, where: PathKey, param: str, spec: FieldSpec, value: Any) -> None:
        for problem in validate_fields({param: spec}, {param: value}).errors:
            self.add(step, where, f"input '{param}': {problem.problem}")

    def _failure_and_retry(self, step: StepDef) -> None:
        if step.on_failure != "stop":
            target = step.on_failure
            if target not in self.position:
                self.add(step, ("on_failure",),
                         f"on_failure names no step '{target}' (use 'stop' or a step id)")
            elif not self.definition.step(target).compensation:
                self.add(step, ("on_failure",),
                         f"on_failure step '{target}' must declare 'compensation: true'")
            if step.type != "automated":
                self.add(step, ("on_failure",), "on_failure applies to automated steps")
        if step.type != "automated" and step.retry.attempts > 1:
            self.add(step, ("retry",), "retry applies to automated steps")

    def _body(self, step: StepDef) -> None:
        for offset, line in enumerate(step.instructions.splitlines()):
            for problem in self._body_line(step, line):
                self.problems.append(Problem(step.file, self._matter(step).body_line + offset, problem))

    def _body_line(self, step: StepDef, line: str) -> Iterator[str]:
        try:
            refs = refs_in(line, strict=False)
        except TemplateError as exc:
            yield exc.message
            return
        for ref in refs:
            problem = self._ref_problem(step, ref)
            if problem:
                yield problem


def validate_loaded(loaded: Loaded, catalog: ToolCatalog | None) -> Report:
    if loaded.definition is None:
        return Report(loaded.root, list(loaded.problems), None)
    problems = _Checker(loaded, loaded.definition, catalog).run()
    return Report(loaded.root, problems, loaded.definition)


def validate(root: Path, catalog: ToolCatalog | None = None) -> Report:
    """Load and check the workflow folder at ``root``; the report lists every problem with file and line."""
    return validate_loaded(load(root), catalog)


def load_valid(root: Path, catalog: ToolCatalog | None = None) -> Definition:
    """The definition, or ``WORKFLOW_INVALID`` listing every problem."""
    report = validate(root, catalog)
    if report.ok and report.definition is not None:
        return report.definition
    lines = [str(problem) for problem in report.problems]
    raise WORKFLOW_INVALID(
        f"workflow at {root} has {len(lines)} problem(s):\n" + "\n".join(lines),
        hint="fix the files", next=act("workflow.validate", name=root.name),
        details={"problems": [problem.as_dict() for problem in report.problems]},
    )
