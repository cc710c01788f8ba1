"""``canal workflow``: start, advance and inspect gated multi-step runs; author workflows.

RUN defaults to the most recently updated run that is not finished. Data goes to stdout (text, or the
engine's view with ``--json``); errors go through the one error boundary in ``main``.
"""

from __future__ import annotations

from pathlib import Path
from typing import get_args

import click

from canal.cli import workflow_render as render
from canal.cli.gate_input import read_gate_data, warn_sensitive_on_argv
from canal.cli.shared import App, echo_json, pass_app, stderr_is_tty
from canal.core.errors import ExitCode
from canal.core.errors import register as register_code
from canal.runtime.wfrun import open_engine, workflow_roots
from canal.runtime.wfrun.factory import PROJECT_WORKFLOWS, ProjectTools
from canal.workflows.creator import add_step, init_workflow
from canal.workflows.engine import Engine
from canal.workflows.errors import WORKFLOW_NOT_FOUND, WorkflowError
from canal.workflows.library import find_workflow, workflow_dirs
from canal.workflows.model import StepType
from canal.workflows.rundoc import TERMINAL
from canal.workflows.validate import validate as validate_folder

STEP_FAILED_EXIT = 1  # the run stopped on a failed step (or needs attention), like a command's own failure


NO_ACTIVE_RUN = register_code(WorkflowError, "NO_ACTIVE_RUN", "No active run.")


def _engine(app: App, *, show_steps: bool = False) -> Engine:
    """``show_steps``: each automated step on stderr as it starts and ends, when a person watches it."""
    if show_steps and stderr_is_tty():
        return open_engine(app.canal, on_event=render.step_progress(lambda line: click.echo(line, err=True)))
    return app.canal.workflows


def _resolve_run(engine: Engine, run_id: str | None) -> str:
    if run_id:
        return run_id
    for summary in engine.runs():  # newest first
        if summary.status not in TERMINAL:
            return summary.run_id
    msg = "no active workflow run (every run is finished, or none was started)"
    raise NO_ACTIVE_RUN(msg, hint="canal workflow runs   or   canal workflow start NAME")


def _run_exit(status: str) -> None:
    if status == "waiting_confirmation":
        raise SystemExit(ExitCode.CONFIRMATION_REQUIRED)
    if status in ("failed", "needs_attention"):
        raise SystemExit(STEP_FAILED_EXIT)


json_option = click.option("--json", "as_json", is_flag=True, help="Print the engine's view as JSON.")


@click.group("workflow")
def workflow() -> None:
    """Gated multi-step runs: the agent submits data, the engine owns order and state.

    \b
    Example:
      canal workflow start project-bootstrap
      canal workflow advance --gate-data '{"project_name": "demo", "host": "demo.test", "api_token": "..."}'
      canal workflow current
    """


@workflow.command("start")
@click.argument("name")
@click.option("--unattended", is_flag=True, default=None,
              help="No one can confirm: a confirmation point fails the run instead of waiting.")
@json_option
@pass_app
def start(app: App, name: str, unattended: bool | None, as_json: bool) -> None:
    """Start a run of workflow NAME; prints only its first step and the fields to collect.

    \b
    Example:
      canal workflow start cleanup-build
    """
    canal = app.canal
    view = _engine(app, show_steps=not as_json).start(
        name, unattended=canal.unattended if unattended is None else unattended)
    if as_json:
        echo_json(render.view_json(view))
    else:
        click.echo(render.render_start(view))


@workflow.command("advance")
@click.argument("run_id", metavar="[RUN]", required=False)
@click.option("--gate-data", metavar="JSON|@FILE|-", help="The current step's field values, as one JSON "
              "object: inline, from a file (@FILE) or from stdin (-); sensitive fields belong in a file "
              "or on stdin (a command line is seen by ps and shell history).")
@click.option("--confirm", metavar="TOKEN", help="The token a confirmation point waits for.")
@click.option("--retry", is_flag=True, help="Re-run a step interrupted by a crash (after checking it).")
@json_option
@pass_app
def advance(app: App, run_id: str | None, gate_data: str | None, confirm: str | None, retry: bool,
            as_json: bool) -> None:
    """Submit the current step's data; automated steps then run until input is needed.

    Exit 0 when the run waits for input or completed, 120 at a confirmation point, 1 when a step
    failed or the run needs attention.

    \b
    Example:
      canal workflow advance --gate-data '{"directory": "dist"}'
      canal workflow advance wr_1a2b3c4d5e6f --confirm c_7f3a9
    """
    engine = _engine(app, show_steps=not as_json)
    run = _resolve_run(engine, run_id)
    data, inline = read_gate_data(gate_data)
    if inline and data:
        warn_sensitive_on_argv(engine.current(run).step, data)
    view = engine.advance(run, data, confirm=confirm, retry=retry)
    if as_json:
        echo_json(render.view_json(view))
    else:
        click.echo(render.render_advance(view))
    _run_exit(view.status)


@workflow.command("current")
@click.argument("run_id", metavar="[RUN]", required=False)
@json_option
@pass_app
def current(app: App, run_id: str | None, as_json: bool) -> None:
    """What a fresh session needs: the current step, completed steps (masked), fields still to collect.

    \b
    Example:
      canal workflow current
    """
    engine = app.canal.workflows
    view = engine.current(_resolve_run(engine, run_id))
    if as_json:
        echo_json(render.view_json(view))
    else:
        click.echo(render.render_current(view))


@workflow.command("show")
@click.argument("run_id", metavar="RUN")
@json_option
@pass_app
def show(app: App, run_id: str, as_json: bool) -> None:
    """Like current, with the full (unclipped) results of completed steps.

    \b
    Example:
      canal workflow show wr_1a2b3c4d5e6f --json
    """
    engine = app.canal.workflows
    view = engine.show(run_id)
    if as_json:
        echo_json(render.view_json(view))
    else:
        click.echo(render.render_current(view))


@workflow.command("abort")
@click.argument("run_id", metavar="RUN")
@click.option("--reason", default="", help="Why, for the audit log.")
@json_option
@pass_app
def abort(app: App, run_id: str, reason: str, as_json: bool) -> None:
    """Stop a run for good (it cannot be advanced afterwards).

    \b
    Example:
      canal workflow abort wr_1a2b3c4d5e6f --reason "wrong project"
    """
    engine = app.canal.workflows
    view = engine.abort(run_id, reason=reason)
    if as_json:
        echo_json(render.view_json(view))
    else:
        click.echo(render.render_current(view))


@workflow.command("runs")
@json_option
@pass_app
def runs(app: App, as_json: bool) -> None:
    """Every run of this project, most recently updated first.

    \b
    Example:
      canal workflow runs
    """
    engine = app.canal.workflows
    items = engine.runs()
    if as_json:
        echo_json({"status": "ok", "runs": [r.model_dump() for r in items]})
    else:
        click.echo(render.render_runs(items))


@workflow.command("list")
@json_option
@pass_app
def list_workflows(app: App, as_json: bool) -> None:
    """The workflows this project can start: its own workflows/, then the shipped examples.

    \b
    Example:
      canal workflow list
    """
    engine = app.canal.workflows
    items = engine.list_workflows()
    if as_json:
        echo_json({"status": "ok", "workflows": [w.model_dump() for w in items]})
    else:
        click.echo(render.render_list(items))


@workflow.command("validate")
@click.argument("name", required=False)
@json_option
@pass_app
def validate(app: App, name: str | None, as_json: bool) -> None:
    """Check one workflow (or all): ids, types, gates, templates, tools; each problem names file:line.

    Exit 0 when every workflow checked is valid, 2 otherwise.

    \b
    Example:
      canal workflow validate cleanup-build
    """
    roots, tools = workflow_roots(app.project_dir), ProjectTools(app.project_dir)
    folders = {name: find_workflow(name, roots)} if name else workflow_dirs(roots)
    reports = {n: validate_folder(folder, tools) for n, folder in folders.items()}
    bad = [n for n, r in reports.items() if not r.ok]
    if as_json:
        echo_json(render.validate_json(reports))
    else:
        click.echo(render.render_validate(reports))
    if bad:
        raise SystemExit(ExitCode.USAGE)


def _project_workflows(app: App) -> Path:
    return app.project_dir / PROJECT_WORKFLOWS


@workflow.command("init")
@click.argument("name")
@click.option("--description", default="", help="One line saying what the workflow does.")
@pass_app
def init(app: App, name: str, description: str) -> None:
    """Create workflows/NAME in the project with a manifest and one interactive step.

    \b
    Example:
      canal workflow init deploy-service --description "Build, test and deploy one service"
    """
    folder = init_workflow(_project_workflows(app), name, description)
    click.echo(f"created {folder}\nNext: canal workflow add-step {name} --id ID --type automated, "
               f"then: canal workflow validate {name}")


@workflow.command("add-step")
@click.argument("name")
@click.option("--id", "step_id", required=True, help="The new step's id ([a-z0-9-]).")
@click.option("--type", "step_type", required=True, type=click.Choice(get_args(StepType)))
@click.option("--after", metavar="ID", help="Insert after this step (default: at the end).")
@pass_app
def add_step_cmd(app: App, name: str, step_id: str, step_type: StepType, after: str | None) -> None:
    """Add a step file to workflows/NAME and renumber the prefixes.

    \b
    Example:
      canal workflow add-step deploy-service --id run-tests --type automated --after collect-input
    """
    folder = _project_workflows(app) / name
    if not folder.is_dir():
        msg = f"no workflow {name} in {folder.parent}"
        raise WORKFLOW_NOT_FOUND(msg, hint=f"canal workflow init {name}")
    path = add_step(folder, step_id, step_type, after=after)
    click.echo(f"created {path}\nNext: edit it, then: canal workflow validate {name}")


def register(cli: click.Group) -> None:
    cli.add_command(workflow)
