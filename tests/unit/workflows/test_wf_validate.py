"""``validate`` catches each broken fixture in tests/data/workflows/, naming the file and line."""

from __future__ import annotations

from pathlib import Path

import pytest
from wf_helpers import EXAMPLES, catalog

from canal.workflows.errors import WORKFLOW_INVALID
from canal.workflows.ports import StaticCatalog
from canal.workflows.validate import load_valid, validate
from tests.error_codes import raises_code

BROKEN = Path(__file__).resolve().parents[2] / "data" / "workflows"

# fixture -> (file, line, words the message must contain)
EXPECTED = {
    "automation-both": ("references/02-step.md", 4, "exactly one of 'tool' or 'run'"),
    "automation-missing": ("references/02-step.md", 2, "needs an 'automation' block"),
    "bad-env-name": ("references/02-step.md", 7, "env name 'BAD-NAME'"),
    "bad-filename": ("references/step.md", 1, "NN-name.md"),
    "bad-gate-schema": ("references/02-more.md", 6, "gate.schema.age.type"),
    "bad-pattern": ("references/02-more.md", 6, "not a valid regular expression"),
    "default-not-in-enum": ("references/02-more.md", 9, "default of 'tier'"),
    "duplicate-id": ("references/02-ask.md", 2, "duplicate step id 'ask'"),
    "duplicate-prefix": ("references/01-ask.md", 1, "prefix 01 is also used"),
    "name-mismatch": ("WorkFlow.md", 2, "differs from the folder name"),
    "no-front-matter": ("references/02-step.md", 1, "must start with a '---'"),
    "on-failure-missing": ("references/02-step.md", 4, "on_failure names no step 'rollback'"),
    "on-failure-not-compensation": ("references/02-step.md", 4, "must declare 'compensation: true'"),
    "ref-bad-syntax": ("references/02-use.md", 7, "'{{params.x}}' is not a template"),
    "ref-compensation": ("references/03-use.md", 5, "compensation step and may never run"),
    "ref-gate-of-automated": ("references/03-use.md", 5, "'build' is automated and has no gate"),
    "ref-in-body": ("references/02-note.md", 7, "'ask' has no gate field 'id'"),
    "ref-later-step": ("references/02-use.md", 5, "step 'later' does not come before 'use'"),
    "ref-result-of-interactive": ("references/02-use.md", 5, "'ask' is interactive and has no result"),
    "ref-self": ("references/02-use.md", 5, "step 'use' does not come before 'use'"),
    "ref-text-result-path": ("references/03-use.md", 5, "has a text result"),
    "ref-unknown-field": ("references/02-use.md", 5, "'ask' has no gate field 'nofield'"),
    "ref-unknown-step": ("references/02-use.md", 5, "no step 'nosuch'"),
    "tool-literal-wrong-type": ("references/02-step.md", 8, "input 'tags': expected array"),
    "tool-missing-required": ("references/02-step.md", 6, "tool 'publish' requires 'id'"),
    "tool-unknown-param": ("references/02-step.md", 8, "no parameter 'colour'"),
    "unknown-key": ("references/02-step.md", 4, "when: Extra inputs are not permitted"),
    "unknown-tool": ("references/02-step.md", 5, "unknown tool 'nosuchtool'"),
    "unknown-type": ("references/02-step.md", 3, "type: Input should be"),
    "yaml-syntax": ("references/02-step.md", 6, "invalid YAML"),
}


def test_every_fixture_has_an_expectation() -> None:
    assert sorted(p.name for p in BROKEN.iterdir() if p.is_dir()) == sorted(EXPECTED)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_broken_fixture_is_reported_with_file_and_line(name: str) -> None:
    report = validate(BROKEN / name, catalog())
    assert not report.ok
    file, line, words = EXPECTED[name]
    found = [(p.file, p.line) for p in report.problems if words in p.message]
    assert found == [(file, line)], [str(p) for p in report.problems]
    assert len(report.problems) == 1, [str(p) for p in report.problems]


def test_load_valid_refuses_with_every_problem_in_details() -> None:
    with raises_code(WORKFLOW_INVALID) as caught:
        load_valid(BROKEN / "ref-unknown-step", catalog())
    assert caught.value.details["problems"] == [
        {"file": "references/02-use.md", "line": 5,
         "message": "{{gate.nosuch.name}}: no step 'nosuch' in this workflow"}]
    assert [(a.kind, dict(a.args)) for a in caught.value.next] == [
        ("workflow.validate", {"name": "ref-unknown-step"})]


def test_tool_steps_need_a_catalog() -> None:
    report = validate(BROKEN / "tool-unknown-param", None)
    assert any("no tool catalog" in p.message for p in report.problems)


@pytest.mark.parametrize("name", ["project-bootstrap", "cleanup-build"])
def test_shipped_examples_are_valid(name: str) -> None:
    report = validate(EXAMPLES / name, StaticCatalog())
    assert report.problems == []
    assert report.definition is not None
    assert report.definition.meta.name == name
