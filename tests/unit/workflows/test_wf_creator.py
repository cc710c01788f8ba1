"""The creator: init and add-step produce workflows that validate, with prefixes renumbered."""

from __future__ import annotations

from pathlib import Path

import pytest

from canal.workflows.creator import add_step, init_workflow
from canal.workflows.errors import STEP_NOT_FOUND, WORKFLOW_EXISTS, WorkflowError
from canal.workflows.ports import StaticCatalog
from canal.workflows.validate import validate
from tests.error_codes import raises_code


def names(folder: Path) -> list[str]:
    return sorted(p.name for p in (folder / "references").iterdir())


def test_init_creates_a_valid_workflow(tmp_path: Path) -> None:
    folder = init_workflow(tmp_path, "onboard", "Onboard a \"new\" service")
    report = validate(folder, StaticCatalog())
    assert report.problems == []
    assert report.definition is not None
    assert report.definition.meta.description == 'Onboard a "new" service'
    assert names(folder) == ["01-collect-input.md"]
    assert (folder / "WorkFlow.md").stat().st_mode & 0o777 == 0o600
    with raises_code(WORKFLOW_EXISTS):
        init_workflow(tmp_path, "onboard")
    with pytest.raises(WorkflowError, match="must match"):
        init_workflow(tmp_path, "Bad Name")


def test_add_step_appends_and_inserts_with_renumbering(tmp_path: Path) -> None:
    folder = init_workflow(tmp_path, "wf")
    add_step(folder, "deploy", "automated")
    add_step(folder, "report", "notification")
    new = add_step(folder, "review", "interactive", after="collect-input")
    assert new.name == "02-review.md"
    assert names(folder) == ["01-collect-input.md", "02-review.md", "03-deploy.md", "04-report.md"]
    report = validate(folder, StaticCatalog())
    assert report.problems == []
    assert report.definition is not None
    assert [s.id for s in report.definition.steps] == ["collect-input", "review", "deploy", "report"]
    assert [s.type for s in report.definition.steps] == ["interactive", "interactive", "automated",
                                                         "notification"]


def test_add_step_refuses_duplicates_and_unknown_anchor(tmp_path: Path) -> None:
    folder = init_workflow(tmp_path, "wf")
    with raises_code(WORKFLOW_EXISTS):
        add_step(folder, "collect-input", "interactive")
    with raises_code(STEP_NOT_FOUND, match="no step 'nope'"):
        add_step(folder, "x", "automated", after="nope")
    with pytest.raises(WorkflowError, match="must match"):
        add_step(folder, "Bad_Id", "automated")
    assert names(folder) == ["01-collect-input.md"]


def test_renumbering_widens_prefixes_past_99(tmp_path: Path) -> None:
    folder = init_workflow(tmp_path, "big")
    for i in range(98):
        step = folder / "references" / f"{i + 2:02d}-s{i}.md"
        step.write_text(f"---\nid: s{i}\ntype: notification\n---\n")
    add_step(folder, "s98", "notification")
    assert names(folder)[0] == "001-collect-input.md"
    assert names(folder)[-1] == "100-s98.md"
    report = validate(folder, StaticCatalog())
    assert report.problems == []
