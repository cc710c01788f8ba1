"""The MCP tools for background tasks: task_start, task_list, task_show, task_wait, task_cancel. Their
arguments, what the model reads about each, and the handlers (each returns a ``Reply``)."""

from __future__ import annotations

from pydantic import Field

from canal.mcp.args import Command, PathList, Seconds, Token
from canal.mcp.operations import Reply, run_reply
from canal.mcp.sandboxes import existing_sandbox
from canal.mcp.schemas import SANDBOX_NAME, TOKEN_DOC, ToolArgs, _f
from canal.mcp.words import Words
from canal.runtime.api import Canal
from canal.runtime.tasks import TaskRecord

MAX_WAIT_S = 300.0
DEFAULT_WAIT_S = 30.0
PIECE = 64 * 1024

TASK_START = """\
Start a shell command as a background task in the sandbox and return its task_id at once; the command \
keeps running while you make other calls. Prefer it over run_command for anything that runs longer \
than a minute or two (a full test suite, a build, an install) and for anything that does not end by \
itself (a dev server, a watcher): run_command waits for the command and kills it at its timeout \
(120 s unless set), a task does not block you.

The command goes through the same policy as run_command (CONFIRMATION_REQUIRED means nothing started: \
ask the user, then call again with confirm_token). It starts in the session's working directory with \
its exported variables. When it ends, whatever it left running is killed too, so run a server in the \
foreground of the task (python3 -m http.server 8000, not nohup ... &).

The sandbox has no network. forward makes a port inside reachable from the user's machine only \
(127.0.0.1): "8000" listens on the same port on the host, "18080:8000" on another, "0:8000" on any \
free one (the reply says which).

Then: task_show to read its output so far (again with since_offset for only what is new), task_wait \
to wait for its end, task_cancel to stop it (every process it started), task_list for all tasks.

Defaults: timeout canal.yaml tasks.timeout (3600 s unless set; the whole tree is killed then); at most \
tasks.max_running (4) at once per sandbox; output kept up to tasks.output_cap (64 MiB).
Example: {"command": "pytest -q", "name": "tests"}
Example: {"command": "python3 -m http.server 8000", "name": "web", "forward": ["8000"]}"""

TASK_LIST = """\
List the project's background tasks, running and ended: id, name, state (running, exited, killed, \
timed_out), exit code, time, output size and command. Read-only.
Example: {}"""

TASK_SHOW = """\
Show a task's state and output so far, as run_command shows a command's: a long output is cut to its \
first and last lines, and the whole of it is a file in the sandbox you can grep (the reply names it). \
Read-only; the task goes on.

To poll a running task for only what is new, pass since_offset: the reply then holds the output from \
that byte on (at most 64 KiB) and the next_offset to pass next time.

Defaults: no since_offset (the head-and-tail view of everything so far).
Example: {"task_id": "t-3f9a2c"}
Example: {"task_id": "tests", "since_offset": 1834}"""

TASK_WAIT = f"""\
Wait for a task to end, at most timeout seconds, then show it as task_show does. If it is still \
running then, the reply says so and the task goes on: call again, or do other work meanwhile.

Defaults: timeout {DEFAULT_WAIT_S:.0f} s (at most {MAX_WAIT_S:.0f}).
Example: {{"task_id": "t-3f9a2c", "timeout": 120}}"""

TASK_CANCEL = """\
Stop a running task: every process it started is killed, detached ones too. Its output stays readable \
with task_show. A task that has already ended cannot be cancelled (the reply says how it ended).
Example: {"task_id": "t-3f9a2c"}"""

TASK_ID_DOC = "The task's id from task_start or task_list (t-xxxxxx), or its name."


class TaskStartArgs(ToolArgs):
    command: Command = _f("The shell command, as one string (bash syntax). A list is joined with shell "
                          "quoting.", "command", "cmd", "script", min_length=1)
    name: Token | None = _f("A name to refer to it by instead of its id (a letter, then letters, digits, "
                            "'_', '.', '-'). Default: none.", "name", "label", default=None)
    timeout: Seconds | None = _f("Seconds before the task and every process it started are killed. "
                                 "Default: canal.yaml tasks.timeout (3600 unless set).",
                                 "timeout", "timeout_s", default=None, gt=0, le=7 * 24 * 3600)
    forward: PathList = _f("Ports to reach from the user's machine while it runs: \"PORT\", "
                           "\"HOSTPORT:PORT\" or \"0:PORT\" (any free host port); 127.0.0.1 only. "
                           "Default: none.", "forward", "forwards", "ports", "port", default_factory=list)
    confirm_token: Token | None = _f(TOKEN_DOC, "confirm_token", "confirm", "token", default=None)
    sandbox: Token | None = _f("Run in this existing sandbox (a fork's name runs it in the fork; any other "
                               "new name is refused). Default: the project's own sandbox.", "sandbox",
                               "fork", default=None,
                               pattern=SANDBOX_NAME)


class TaskListArgs(ToolArgs):
    pass


class TaskIdArgs(ToolArgs):
    task_id: Token = _f(TASK_ID_DOC, "task_id", "id", "task", "name", min_length=1)


class TaskShowArgs(TaskIdArgs):
    since_offset: int | None = _f("Only output from this byte on (the next_offset of the last reply). "
                                  "Default: the whole view (head and tail).",
                                  "since_offset", "offset", "since", default=None, ge=0)


class TaskWaitArgs(TaskIdArgs):
    timeout: Seconds = Field(default=DEFAULT_WAIT_S, gt=0, le=MAX_WAIT_S,
                             description=f"Seconds to wait at most. Default: {DEFAULT_WAIT_S:.0f}.")


def task_line(r: TaskRecord) -> str:
    code = "-" if r.exit_code is None else r.exit_code
    label = f"{r.id} ({r.name})" if r.name else r.id
    ending = f" | {r.ending()}" if r.ending() else ""
    return (f"{label} {r.state} exit:{code} {r.duration_s or 0:.1f}s {r.output_bytes} bytes | "
            f"{r.command[:80]}{ending}")


class TaskTools:
    def __init__(self, canal: Canal) -> None:
        self.canal = canal

    def start(self, args: TaskStartArgs) -> Reply:
        started = self.canal.tasks.start(args.command, name=args.name, timeout_s=args.timeout,
                                         sandbox=existing_sandbox(self.canal, args.sandbox),
                                         confirm=args.confirm_token,
                                         forward=args.forward, say=Words("task_start"))
        if started.refusal is not None:
            return run_reply(started.refusal, "call task_start again with the same command")
        record = started.task
        assert record is not None
        ref = record.name or record.id
        lines = [f"started task {record.id}" + (f" ({record.name})" if record.name else "") +
                 f" in sandbox {record.sandbox}: {record.command}"]
        lines += [f"forwarding http://{f.host}/ on the user's machine to port {f.port} in the sandbox"
                  for f in record.forwards]
        lines.append(f'Next: task_show {{"task_id": "{ref}"}} for its output, task_wait to wait for its end, '
                     f"task_cancel to stop it")
        return Reply("\n".join(lines), started.to_json())

    def list(self, _: TaskListArgs) -> Reply:
        records = self.canal.tasks.list()
        text = "\n".join(task_line(r) for r in records) or "no tasks (start one with task_start)"
        return Reply(text, {"status": "ok", "tasks": [r.summary() for r in records]})

    def show(self, args: TaskShowArgs) -> Reply:
        tasks = self.canal.tasks
        if args.since_offset is None:
            view = tasks.show(args.task_id)
            return Reply(view.text, view.to_json())
        piece = tasks.read(args.task_id, offset=args.since_offset, limit=PIECE)
        record = tasks.resolve(args.task_id)
        state = "running" if piece.running else f"{record.state}, exit {record.exit_code}"
        more = piece.next_offset < record.output_bytes or piece.running
        hint = (f' | next: task_show {{"task_id": "{record.id}", "since_offset": {piece.next_offset}}}'
                if more else "")
        text = f"{piece.text}[task {record.id} {state} | bytes {piece.offset}-{piece.next_offset}{hint}]"
        return Reply(text, {"status": "ok", "task": record.to_json(), "text": piece.text,
                            "offset": piece.offset, "next_offset": piece.next_offset})

    def wait(self, args: TaskWaitArgs) -> Reply:
        from canal.runtime.tasks.errors import TaskWaitTimeout

        tasks = self.canal.tasks
        try:
            tasks.wait(args.task_id, args.timeout)
        except TaskWaitTimeout:
            view = tasks.show(args.task_id)
            return Reply(f"{view.text}\nstill running after {args.timeout:g}s of waiting; it goes on",
                         view.to_json())
        view = tasks.show(args.task_id)
        return Reply(view.text, view.to_json())

    def cancel(self, args: TaskIdArgs) -> Reply:
        record = self.canal.tasks.cancel(args.task_id)
        return Reply(task_line(record), {"status": "ok", "task": record.to_json()})
