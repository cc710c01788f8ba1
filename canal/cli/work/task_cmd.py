"""``canal task``: background tasks (start, list, show, logs, wait, cancel). docs/tasks.md."""

from __future__ import annotations

import re
import threading
from typing import TYPE_CHECKING, Any

import click

from canal.cli.shared import App, command_text, echo_json, emit, json_option, pass_app
from canal.cli.words import say
from canal.runtime.run.interrupt import on_interrupt
from canal.runtime.sandboxes.start import DEFAULT_SANDBOX

if TYPE_CHECKING:
    from canal.runtime.tasks import TaskRecord, Tasks

_AGE = re.compile(r"^(\d+(?:\.\d+)?)([smh]?)$")
_SECONDS = {"": 1, "s": 1, "m": 60, "h": 3600}


class Age(click.ParamType[float, Any]):
    name = "DURATION"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> float:
        match = _AGE.match(str(value).strip())
        if match is None:
            self.fail(f"{value!r} is not a duration: a number of seconds, or with s, m or h (30s, 5m)",
                      param, ctx)
        return float(match.group(1)) * _SECONDS[match.group(2)]


def served_tasks(app: App) -> Tasks:
    """The project's tasks, which must live in the Canal server to outlive this call."""
    tasks = app.canal.tasks
    if not tasks.persistent:
        from canal.runtime.tasks import TASKS_NEED_SERVER

        msg = ("A background task outlives the call that starts it, so it lives in the Canal server; "
               "this call runs without one (CANAL_NO_SERVER=1).")
        raise TASKS_NEED_SERVER(msg, hint="unset CANAL_NO_SERVER, then run the command again "
                              "(the Python API in-process has tasks too: Canal(...).tasks)")
    return tasks


@click.group("task")
def task() -> None:
    """Background tasks: long commands (dev servers, builds, test suites) that run in the sandbox while
    other commands go on.

    \b
    Example: canal task start --name web -- python3 -m http.server 8000
             canal task logs web -f
    """


@task.command("start", context_settings={"ignore_unknown_options": True})
@click.option("--name", "-n", help="A name to refer to it by (letters, digits, '_', '.', '-').")
@click.option("--timeout", type=click.FloatRange(min=0.1), help="Hard timeout in seconds (canal.yaml "
              "tasks.timeout, default 3600). The whole process tree is killed.")
@click.option("--sandbox", "-s", default=DEFAULT_SANDBOX, show_default=True, help="The sandbox it runs in.")
@click.option("--forward", "-p", "forward", multiple=True, metavar="[HOSTPORT:]PORT",
              help="While it runs, relay 127.0.0.1:HOSTPORT on the host to PORT in the sandbox (repeatable).")
@click.option("--confirm", "token", metavar="TOKEN", help="Start a command the policy asked to confirm.")
@click.option("--unattended", is_flag=True, help="No person is watching: confirm becomes deny.")
@json_option()
@click.argument("command", nargs=-1, required=True, type=click.UNPROCESSED)
@pass_app
def start(app: App, name: str | None, timeout: float | None, sandbox: str, forward: tuple[str, ...],
          token: str | None, unattended: bool, as_json: bool, command: tuple[str, ...]) -> None:
    """Start COMMAND as a background task and print its id at once.

    COMMAND is read as canal run reads it (one argument: a command line; several: an exact argv). It goes
    through the policy like canal run, starts in the session's working directory and exported
    variables, and never blocks the session. Output goes to the task's log (canal task logs ID).

    \b
    Example: canal task start --name tests -- pytest -q
             canal task start --forward 8080:8000 -- python3 -m http.server 8000
    """
    tasks = served_tasks(app)
    started = tasks.start(command_text(command), name=name, timeout_s=timeout, sandbox=sandbox, confirm=token,
                          unattended=unattended or None, forward=forward, say=say)
    if started.refusal is not None:
        refusal = started.refusal
        if as_json:
            data: dict[str, Any] = started.to_json()
            if data.get("confirmation") and refusal.next:
                data["confirmation"]["rerun"] = say(refusal.next[0])
            echo_json(data)
        else:
            click.echo(refusal.text, err=True)
        raise SystemExit(refusal.process_exit_code())
    record = started.task
    assert record is not None
    emit(as_json, started.to_json(), _started_text(record))


def _started_text(record: TaskRecord) -> str:
    label = f"{record.id} ({record.name})" if record.name else record.id
    lines = [f"started task {label} in sandbox {record.sandbox}: {record.command}"]
    lines += [f"forwarding {f.host} on the host to port {f.port} in the sandbox" for f in record.forwards]
    ref = record.name or record.id
    lines.append(f"Next: canal task logs {ref} -f (follow it), canal task show {ref}, "
                 f"canal task wait {ref}, canal task cancel {ref}")
    return "\n".join(lines)


@task.command("list")
@click.option("--sandbox", "-s", help="Only this sandbox's tasks.")
@json_option()
@pass_app
def list_tasks(app: App, sandbox: str | None, as_json: bool) -> None:
    """List the project's tasks, running and ended (newest last).

    Example: canal task list
    """
    records = app.canal.tasks.list(sandbox)
    if as_json:
        echo_json({"status": "ok", "tasks": [r.summary() for r in records]})
        return
    if not records:
        click.echo("no tasks (start one with: canal task start -- CMD)")
        return
    click.echo(f"{'ID':<10} {'NAME':<12} {'STATE':<10} {'EXIT':>4} {'TIME':>8} {'OUTPUT':>9}  COMMAND")
    for r in records:
        code = "-" if r.exit_code is None else str(r.exit_code)
        click.echo(f"{r.id:<10} {(r.name or '-')[:12]:<12} {r.state:<10} {code:>4} "
                   f"{r.duration_s or 0:>7.1f}s {_size(r.output_bytes):>9}  {r.command[:60]}")


def _size(n: int) -> str:
    from canal.presenter import format_size

    return format_size(n).replace(" bytes", " B")


@task.command("show")
@click.argument("task_id", metavar="ID")
@json_option()
@pass_app
def show(app: App, task_id: str, as_json: bool) -> None:
    """Show a task's output so far as canal run would (head and tail of a long one, and where the whole
    output is), with its state in the footer.

    Example: canal task show t-3f9a2c
    """
    view = app.canal.tasks.show(task_id)
    emit(as_json, view.to_json(), view.text)


@task.command("logs")
@click.argument("task_id", metavar="ID")
@click.option("--follow", "-f", is_flag=True, help="Keep printing as it writes, until it ends (Ctrl-C "
              "stops following; the task goes on).")
@click.option("--since", type=Age(), help="Only output from the last DURATION (30s, 5m, 2h).")
@click.option("--offset", type=click.IntRange(min=0), default=0, help="Start at this byte of its output "
              "(--json gives next_offset to poll from).")
@json_option("Print one piece as JSON: text, offset, next_offset, running.")
@pass_app
def logs(app: App, task_id: str, follow: bool, since: float | None, offset: int, as_json: bool) -> None:
    """Print a task's output (stdout and stderr as they came), secrets redacted.

    \b
    Example: canal task logs t-3f9a2c --since 1m
             canal task logs web -f
    """
    tasks = app.canal.tasks
    if as_json:
        piece = tasks.read(task_id, offset=offset, since_s=since, limit=1024 * 1024)
        echo_json({"status": "ok", "text": piece.text, "offset": piece.offset,
                   "next_offset": piece.next_offset, "running": piece.running})
        return
    if not follow:
        while True:
            piece = tasks.read(task_id, offset=offset, since_s=since)
            click.echo(piece.text, nl=False)
            if piece.next_offset == piece.offset:
                return
            offset, since = piece.next_offset, None
    stop = threading.Event()
    with on_interrupt(lambda _why: stop.set()):
        for text in served_tasks(app).follow(task_id, offset=offset, since_s=since, stop=stop):
            click.echo(text, nl=False)


@task.command("wait")
@click.argument("task_id", metavar="ID")
@click.option("--timeout", type=click.FloatRange(min=0), help="Give up waiting after this many seconds "
              "(exit 124; the task goes on).")
@json_option()
@pass_app
def wait(app: App, task_id: str, timeout: float | None, as_json: bool) -> None:
    """Wait for a task to end; exit with its exit code (124 after a timeout, 137 when it was killed).

    Example: canal task wait t-3f9a2c --timeout 600
    """
    stop = threading.Event()
    with on_interrupt(lambda _why: stop.set()):
        record = served_tasks(app).wait(task_id, timeout, stop=stop)
    emit(as_json, {"status": "ok", "task": record.to_json()}, _ended_line(record))
    raise SystemExit(record.exit_code if record.exit_code is not None else 125)


def _ended_line(record: TaskRecord) -> str:
    code = "-" if record.exit_code is None else record.exit_code
    ending = f", {record.ending()}" if record.ending() else ""
    return f"task {record.id} {record.state} (exit {code}, {record.duration_s or 0:.2f}s{ending})"


@task.command("cancel")
@click.argument("task_id", metavar="ID")
@json_option()
@pass_app
def cancel(app: App, task_id: str, as_json: bool) -> None:
    """Kill a task and every process it started (detached ones too); the ending is recorded.

    Example: canal task cancel t-3f9a2c
    """
    record = served_tasks(app).cancel(task_id)
    emit(as_json, {"status": "ok", "task": record.to_json()}, _ended_line(record))


def register(cli: click.Group) -> None:
    cli.add_command(task)
