from __future__ import annotations

import json
import shutil
import stat
from pathlib import Path

import pytest

from canal.core.fsutil import atomic_write_text
from canal.workflows.tools import discover
from canal.workflows.tools.errors import (
    DISCOVER_PATH_UNSAFE,
    DISCOVER_WORKFLOW_INVALID,
    TOOL_DEFINITION_INVALID,
    TOOL_RULES_INVALID,
)
from canal.workflows.tools.index import estimate_tokens
from canal.workflows.tools.layout import index_json_path, index_text_path, meta_path, rules_path
from tests.error_codes import raises_code
from tests.hidden_chars import HIDDEN, escaped


def run(project: Path) -> dict[str, object]:
    return discover(project, atomic_write_text).summary.model_dump()


def add_tool(project: Path, name: str, description: str = "A tool") -> None:
    (project / "tools" / f"{name}.yaml").write_text(f"description: {description}\nrun: [echo, hi]\n")


def add_workflow(project: Path, name: str) -> None:
    folder = project / "workflows" / name
    folder.mkdir(parents=True)
    (folder / "WorkFlow.md").write_text(f"---\nname: {name}\ndescription: Does {name}\n---\nBody\n")


def test_first_run_reports_everything_as_added(project: Path) -> None:
    assert json.dumps(run(project)) == json.dumps({
        "status": "ok", "total": 5, "added_count": 5, "removed_count": 0,
        "added": ["clean_build", "create_project", "list_files", "onboard", "report"],
        "removed": [], "workflow_count": 1,
    })


def test_added_and_removed_sets_are_exact_across_runs(project: Path) -> None:
    run(project)
    assert run(project) == {"status": "ok", "total": 5, "added_count": 0, "removed_count": 0,
                            "added": [], "removed": [], "workflow_count": 1}
    add_tool(project, "tool_b")
    add_tool(project, "tool_a")
    (project / "tools" / "report.yaml").unlink()
    assert run(project) == {"status": "ok", "total": 6, "added_count": 2, "removed_count": 1,
                            "added": ["tool_a", "tool_b"], "removed": ["report"], "workflow_count": 1}
    add_workflow(project, "release")
    (project / "tools" / "tool_a.yaml").unlink()
    assert run(project) == {"status": "ok", "total": 6, "added_count": 1, "removed_count": 1,
                            "added": ["release"], "removed": ["tool_a"], "workflow_count": 2}
    assert not meta_path(project, "tool_a").exists()
    assert meta_path(project, "tool_b").exists()


def test_index_lists_workflows_first_then_tools_one_line_each(project: Path) -> None:
    result = discover(project, atomic_write_text)
    lines = index_text_path(project).read_text().splitlines()
    assert lines[1:] == [
        "workflows:",
        "  onboard: Onboard a new project end to end",
        "tools:",
        "  clean_build: Delete a build folder (destructive)",
        "  create_project: Create a project on the deploy service",
        "  list_files: List files under a folder of the workspace",
        "  report: Summarize the workspace as JSON",
    ]
    assert result.index_tokens == estimate_tokens(result.index_text)


def test_generated_files_are_private(project: Path) -> None:
    run(project)
    for path in (index_text_path(project), index_json_path(project), meta_path(project, "report"),
                 rules_path(project, "report")):
        assert stat.S_IMODE(path.stat().st_mode) == 0o600, path


def test_metadata_file_has_fields_types_required_and_enums(project: Path) -> None:
    run(project)
    meta = json.loads(meta_path(project, "create_project").read_text())
    fields = {f["name"]: f for f in meta["fields"]}
    assert fields["name"]["required"] is True
    assert fields["auth_type"]["type"] == "integer"
    assert fields["auth_type"]["choices"] == [{"value": 0, "label": "pre-auth"}, {"value": 1, "label": "SDK"},
                                              {"value": 2, "label": "openapi"}]
    assert fields["tier"]["enum"] == ["free", "team", "enterprise"]
    assert fields["id"]["ignored"] is True


def test_two_hundred_tools_keep_the_index_one_line_per_tool(tmp_path: Path) -> None:
    (tmp_path / "tools").mkdir()
    for i in range(200):
        add_tool(tmp_path, f"tool_{i:03d}", f"Does thing number {i}")
    result = discover(tmp_path, atomic_write_text)
    lines = result.index_text.splitlines()
    tool_lines = [ln for ln in lines if ln.startswith("  tool_")]
    assert len(tool_lines) == 200
    assert len(lines) == 200 + 2  # heading line and "tools:" line
    assert result.summary.added_count == 200
    # Linear: the budget is the fixed heading plus one short line per tool.
    per_line = max(estimate_tokens(ln + "\n") for ln in tool_lines)
    assert result.index_tokens <= estimate_tokens(lines[0] + "\ntools:\n") + 200 * per_line


def test_a_bad_tool_file_leaves_the_previous_index(project: Path) -> None:
    run(project)
    before = index_json_path(project).read_text()
    (project / "tools" / "broken.yaml").write_text("description: x\nrun: [echo]\nbogus: 1\n")
    with raises_code(TOOL_DEFINITION_INVALID, match=r"tools/broken\.yaml:3: bogus"):
        run(project)
    assert index_json_path(project).read_text() == before


def test_a_bad_rules_line_is_named_and_nothing_is_written(project: Path) -> None:
    run(project)
    path = rules_path(project, "report")
    path.write_text(path.read_text() + "FORBID:status\n")
    add_tool(project, "new_tool")
    with raises_code(TOOL_RULES_INVALID, match=r"report\.rules:4: unknown rule"):
        run(project)
    assert "new_tool" not in index_json_path(project).read_text()


def test_workflow_without_front_matter_is_named(project: Path) -> None:
    (project / "workflows" / "onboard" / "WorkFlow.md").write_text("# no front matter\n")
    with raises_code(DISCOVER_WORKFLOW_INVALID, match=r"WorkFlow\.md:1: expected YAML front matter"):
        run(project)


def test_workflow_bad_description_names_its_line(project: Path) -> None:
    wf = project / "workflows" / "onboard" / "WorkFlow.md"
    wf.write_text("---\nname: onboard\ndescription: ''\n---\n")
    with raises_code(DISCOVER_WORKFLOW_INVALID, match=r"WorkFlow\.md:3: description"):
        run(project)


def test_grouped_workflows_are_found_and_duplicates_refused(project: Path) -> None:
    folder = project / "workflows" / "examples" / "demo"
    folder.mkdir(parents=True)
    (folder / "WorkFlow.md").write_text("---\nname: demo\ndescription: A grouped example\n---\n")
    assert run(project)["added"] == ["clean_build", "create_project", "demo", "list_files", "onboard",
                                     "report"]
    (folder / "WorkFlow.md").write_text("---\nname: onboard\ndescription: Same name\n---\n")
    with raises_code(DISCOVER_WORKFLOW_INVALID, match="also used by"):
        run(project)


def test_no_tools_and_no_workflows_is_an_empty_index(tmp_path: Path) -> None:
    assert run(tmp_path) == {"status": "ok", "total": 0, "added_count": 0, "removed_count": 0,
                             "added": [], "removed": [], "workflow_count": 0}


@pytest.mark.parametrize("link", [".canal", ".canal/discover/tools", ".canal/discover/rules/report.rules",
                                  "tools/linked.yaml", "workflows/onboard/WorkFlow.md"])
def test_planted_symlinks_are_refused_and_nothing_outside_is_touched(project: Path, tmp_path: Path,
                                                                     link: str) -> None:
    run(project)
    outside = tmp_path / "outside"
    outside.mkdir()
    victim = outside / "keep.json"
    victim.write_text("{}")
    target = project / link
    if target.exists():
        if target.is_dir():
            shutil.rmtree(target)
        else:
            target.unlink()
    target.parent.mkdir(parents=True, exist_ok=True)
    target.symlink_to(victim if link.endswith((".rules", ".yaml", ".md")) else outside)
    with raises_code(DISCOVER_PATH_UNSAFE):
        run(project)
    assert [p.name for p in outside.iterdir()] == ["keep.json"]
    assert victim.read_text() == "{}"


def yaml_escape(char: str) -> str:
    return f"\\u{ord(char):04x}"


@pytest.mark.parametrize("char", HIDDEN, ids=[escaped(c) for c in HIDDEN])
def test_a_description_with_a_hidden_character_is_refused_at_its_line(project: Path, char: str) -> None:
    """Issue 39, finding 5: only a newline was refused; \\r, U+2028, U+0085 and ESC sequences reached
    the index and canal tool list. Tool, parameter and workflow descriptions alike."""
    tool = project / "tools" / "sneaky.yaml"
    tool.write_text(f'run: [echo]\ndescription: "ok{yaml_escape(char)}x"\n')
    with raises_code(TOOL_DEFINITION_INVALID, match=r"tools/sneaky\.yaml:2: description") as info:
        run(project)
    assert escaped(char) in info.value.message
    tool.write_text(f'run: [echo]\ndescription: ok\nparameters:\n  p:\n    desc: "a{yaml_escape(char)}"\n')
    with raises_code(TOOL_DEFINITION_INVALID, match=r"tools/sneaky\.yaml:5: parameters\.p\.desc"):
        run(project)
    tool.unlink()
    wf = project / "workflows" / "onboard" / "WorkFlow.md"
    wf.write_text(f'---\nname: onboard\ndescription: "ok{yaml_escape(char)}x"\n---\n')
    with raises_code(DISCOVER_WORKFLOW_INVALID, match=r"WorkFlow\.md:3: description"):
        run(project)
    assert not index_json_path(project).exists() or "sneaky" not in index_json_path(project).read_text()
