"""``canal run``: one command through the whole pipeline, in the project's sandbox."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any, BinaryIO

import click

from canal.cli.shared import App, command_text, echo_json, pass_app
from canal.cli.words import say
from canal.core.next import act
from canal.runtime.sandboxes.start import DEFAULT_SANDBOX

# A project's first command starts its sandbox once its settings passed their check, then loads the
# pipeline, the policy and the presenter while the engine makes it (``Canal.run``): nothing here loads
# them before.
if TYPE_CHECKING:
    from canal.cli.live import LiveOutput
    from canal.presenter import PresenterConfig
    from canal.runtime.run.result import RunResult


# Options end at the command's first word (canal run ls -la); a mistyped option before it is an error
# with a suggestion, never part of the command.
@click.command("run", context_settings={"allow_interspersed_args": False})
@click.option("--sandbox", "-s", default=DEFAULT_SANDBOX, show_default=True, help="Which of the project's "
              "sandboxes runs it (started if needed).")
@click.option("--timeout", type=click.FloatRange(min=0.1), help="Hard timeout in seconds (canal.yaml "
              "timeouts.command, default 120). The whole process tree is killed.")
@click.option("--idle-timeout", type=click.FloatRange(min=0.1), help="Kill after this many seconds "
              "without output.")
@click.option("--confirm", "token", metavar="TOKEN", help="Run a command the policy asked to confirm, "
              "with the token CONFIRMATION_REQUIRED gave for exactly this command.")
@click.option("--unattended", is_flag=True, help="No person is watching: confirm becomes deny.")
@click.option("--max-lines", type=click.IntRange(min=1), help="Show at most this many lines before "
              "cutting to head and tail (canal.yaml presenter.max_lines, default 200).")
@click.option("--show-stderr", is_flag=True, help="Show stderr even when the command succeeds.")
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
@click.option("--stream/--no-stream", default=None, help="Show output as it arrives, then the footer "
              "(default: when stdout is a terminal and not --json); --no-stream prints the presenter's view.")
@click.argument("command", nargs=-1, required=True, type=click.UNPROCESSED)
@pass_app
def run(app: App, sandbox: str, timeout: float | None, idle_timeout: float | None, token: str | None,
        unattended: bool, max_lines: int | None, show_stderr: bool, as_json: bool, stream: bool | None,
        command: tuple[str, ...]) -> None:
    """Run COMMAND in the sandbox under the policy; print what the model should read.

    One argument is a shell command line; several are an exact argv, each argument reaching the program
    whole (as docker exec takes them). The session's shell runs both, so cd and exported variables
    persist between commands.

    \b
    Example: canal run -- ls -la
             canal run --json -- 'grep -rn TODO . | head'
             canal run -- bash -c 'grep CapEff /proc/self/status'
    \b
    Exit status: the command's own; 120 confirmation required (nothing ran), 121 policy denied,
    122 approval token invalid, 124 timeout, 125 Canal or engine error, 137 killed (out of memory),
    130/143 interrupted (Ctrl-C, SIGTERM: the command's processes in the sandbox are killed).
    
    Stdin, when it is not a terminal, is passed to the command as it reads it (at most 16 MiB):
             echo hello | canal run -- cat
    """
    text = command_text(command)
    live_view = (stream if stream is not None else sys.stdout.isatty()) and not as_json
    canal = app.canal
    presenter = presenter_overrides(canal.config.presenter, max_lines, show_stderr)
    live = None
    if live_view:
        from canal.cli.live import LiveOutput

        live = LiveOutput(canal.redactor, sys.stdout, sys.stderr)
    result = canal.run(text, sandbox=sandbox, timeout_s=timeout, idle_timeout_s=idle_timeout, confirm=token,
                       unattended=unattended or None, presenter=presenter, stdin=_stdin(), on_output=live,
                       say=say)
    for notice in result.notices:
        click.echo(notice, err=True)
    if as_json:
        echo_json(result_json(result))
    elif live is not None and not result.refused:
        live.finish()
        click.echo(_after_live(result, live))
    else:
        click.echo(result.text, err=result.refused)
    raise SystemExit(result.process_exit_code())


def _stdin() -> BinaryIO | None:
    """Our stdin for the command, unless it is a terminal (a person typing is not a command's input).

    A real stdin is read through its own descriptor, unbuffered: a reader still blocked on it when the
    command has ended holds no lock that Python needs at exit."""
    stdin = sys.stdin
    if stdin is None or stdin.isatty():
        return None
    try:
        fd = stdin.fileno()
    except (OSError, ValueError):
        return getattr(stdin, "buffer", None)  # the server's stream of a client's stdin
    return open(fd, "rb", buffering=0, closefd=False)  # stdin stays open: it is not ours to close


def _after_live(result: RunResult, live: LiveOutput) -> str:
    """What follows output already shown: the footer and backups, or the whole view when a stream was
    binary (its description was not shown)."""
    if live.binary or result.exec_result is None:
        return result.text
    from canal.presenter import render_footer
    from canal.runtime.run.pipeline import backup_lines

    lines = [render_footer(result.exec_result)]
    lines += backup_lines(result.backups, say)
    return "\n".join(lines)


def result_json(result: RunResult) -> dict[str, Any]:
    """``--json``: the result, with the CLI's command lines for what to run next (``rerun``, ``restore``,
    ``undo``) next to the same actions as data."""
    data = result.to_json()
    if data.get("confirmation") and result.next:
        data["confirmation"]["rerun"] = say(result.next[0])
    for backup in data.get("backups", []):
        backup["restore"] = say(act("restore", trash_id=backup["trash_id"]))
    if data.get("checkpoint"):
        data["checkpoint"]["undo"] = say(act("undo", checkpoint=data["checkpoint"]["id"]))
    return data


def presenter_overrides(base: PresenterConfig, max_lines: int | None,
                        show_stderr: bool) -> PresenterConfig | None:
    """canal.yaml's presenter settings with this call's flags on top (None: nothing to change)."""
    update: dict[str, object] = {}
    if max_lines is not None:
        update["max_lines"] = max_lines
        update["head_lines"] = min(base.head_lines, max(1, max_lines * 5 // 14))
        update["tail_lines"] = min(base.tail_lines, max(1, max_lines * 2 // 14))
    if show_stderr:
        update["show_stderr_on_success"] = True
    if not update:
        return None
    from canal.presenter import PresenterConfig

    return PresenterConfig.model_validate({**base.model_dump(), **update})


def register(cli: click.Group) -> None:
    cli.add_command(run)
