"""The MCP server: one long-lived process, one ``Canal`` (policy compiled once, sandbox session warm).

Every tool call comes back as a tool result, never as a protocol error: Canal errors in the one error
shape (``words.error_text``), invalid arguments as ARGUMENT_* codes, and anything unexpected as
INTERNAL_ERROR (the traceback goes to the log on stderr). Blocking work runs in a worker thread, one
call at a time, so the protocol loop keeps answering (pings, elicitation replies) meanwhile.
"""

from __future__ import annotations

import contextlib
import logging
import threading
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from functools import cached_property
from importlib.metadata import PackageNotFoundError, version
from typing import Any, TypeVar

import anyio
import anyio.to_thread
import mcp_types as types
from mcp.server import Server, ServerRequestContext
from mcp.server.stdio import stdio_server

from canal.core.errors import CanalError
from canal.core.next import act
from canal.mcp import approval, capabilities
from canal.mcp import schemas as s
from canal.mcp.args import SANDBOX_WORKDIR, in_workdir
from canal.mcp.descriptions import INSTRUCTIONS
from canal.mcp.errors import CONFIRMATION_DECLINED, TOOL_UNKNOWN
from canal.mcp.hostpaths import HostPaths
from canal.mcp.operations import Operations, Reply
from canal.mcp.reversible import Reversible
from canal.mcp.tasks import TaskTools
from canal.mcp.tools import BY_NAME, TOOLS, ToolSpec, parse_args
from canal.mcp.words import error_data, error_text
from canal.mcp.workflow import WorkflowTool
from canal.runtime.api import Canal
from canal.runtime.errors import INTERNAL_ERROR
from canal.runtime.run.interrupt import Interrupt, current, interruptible

log = logging.getLogger("canal.mcp")
PROGRESS_EVERY_S = 2.0
CANCELLED = "SIGINT"  # the client cancelled the call: what Ctrl-C is to the CLI
RESULT_META_KEY = "canal/result"  # the --json shape of a result, for programs; models read the text

T = TypeVar("T")


@dataclass(frozen=True)
class ServerOptions:
    elicit: bool = True  # ask a person through the client when approval is human


class CanalMcp:
    """The tools of one project, bound to one ``Canal``."""

    def __init__(self, canal: Canal, options: ServerOptions | None = None) -> None:
        self.canal = canal
        self.options = options or ServerOptions()
        self._lock = anyio.Lock()
        self._workdir: str | None = None
        ops = Operations(canal)
        self._handlers: dict[str, Callable[[Any], Reply]] = {
            "run_command": ops.run_command, "view": ops.view, "edit": ops.edit, "remove": ops.remove,
            "restore": ops.restore, "write": ops.write, "trash": ops.trash, "workflow": WorkflowTool(canal),
            "list_capabilities": lambda a: capabilities.list_capabilities(canal, a),
            "describe_capability": lambda a: capabilities.describe_capability(canal, a),
            "call_capability": lambda a: capabilities.call_capability(canal, a),
        }
        rev = Reversible(canal)
        self._handlers.update({"checkpoints": rev.checkpoints, "diff": rev.diff, "undo": rev.undo,
                               "fork": rev.fork, "changes": rev.changes, "apply": rev.apply,
                               "discard": rev.discard})
        tasks = TaskTools(canal)
        self._handlers.update({"task_start": tasks.start, "task_list": tasks.list, "task_show": tasks.show,
                               "task_wait": tasks.wait, "task_cancel": tasks.cancel})

    @property
    def workdir(self) -> str:
        """The project's folder in the sandbox (canal.yaml's ``sandbox.workdir``); the default while the
        settings cannot be read (the first call reports why)."""
        if self._workdir is None:
            try:
                self._workdir = self.canal.config.sandbox.workdir
            except CanalError:
                return SANDBOX_WORKDIR
        return self._workdir

    def tools(self) -> list[types.Tool]:
        """The tools as listed, their texts naming this project's folder in the sandbox."""
        return [t.to_mcp(self.workdir) for t in TOOLS]

    async def blocking(self, fn: Callable[[], T]) -> T:
        """Run ``fn`` in a worker thread, one at a time (``Canal`` is not thread-safe).

        A call the client cancels (``notifications/cancelled``: the SDK cancels this task) interrupts
        ``fn`` as Ctrl-C does on the CLI (a command in the sandbox is killed with its process tree), and
        the next call waits only for ``fn`` to end. The request's own interrupt (the client of the server
        went away) still reaches ``fn`` too."""
        interrupt, done = Interrupt(), threading.Event()
        outer = current()
        state = {"started": False, "abandoned": False}
        state_lock = threading.Lock()

        def work() -> T:
            with state_lock:  # a call cancelled before a thread took it never runs (and is not waited for)
                if state["abandoned"]:
                    raise anyio.get_cancelled_exc_class()()
                state["started"] = True
            try:
                with contextlib.ExitStack() as stack:
                    if outer is not None:
                        stack.enter_context(outer.hook(interrupt.fire))
                    stack.enter_context(interruptible(interrupt))
                    return fn()
            finally:
                done.set()

        async with self._lock:
            try:
                return await anyio.to_thread.run_sync(work, abandon_on_cancel=True)
            except anyio.get_cancelled_exc_class():
                with state_lock:
                    state["abandoned"] = not state["started"]
                if not state["abandoned"]:  # running: interrupt it and wait for it to end
                    interrupt.fire(CANCELLED)
                    with anyio.CancelScope(shield=True):
                        await anyio.to_thread.run_sync(done.wait)
                raise

    def warm(self) -> None:
        """Compile the policy and start the sandbox session before the first call needs them."""
        try:
            _ = self.canal.policy
            self.canal.up()
        except Exception as exc:  # the first call reports it in the error shape
            log.warning("warm-up failed (the first call will report it): %s", exc)

    async def call(self, ctx: ServerRequestContext[Any], name: str,
                   arguments: dict[str, Any] | None) -> types.CallToolResult:
        try:
            reply = await self._call(ctx, name, arguments)
        except Exception as exc:
            reply = error_reply(exc, name)
        text, data = self.host_paths.text(reply.text), self.host_paths.data(reply.data)
        meta = {RESULT_META_KEY: data} if data else None
        return types.CallToolResult(content=[types.TextContent(text=text)], is_error=reply.is_error,
                                    _meta=meta)

    @cached_property
    def host_paths(self) -> HostPaths:
        return HostPaths(self.canal)

    async def _call(self, ctx: ServerRequestContext[Any], name: str,
                    arguments: dict[str, Any] | None) -> Reply:
        spec = BY_NAME.get(name)
        if spec is None:
            msg = f"there is no tool {name!r}. Tools: {', '.join(BY_NAME)}"
            raise TOOL_UNKNOWN(msg, hint='call list_capabilities {} for the project\'s own tools',
                              details={"tool": name})
        args = parse_args(spec, arguments, workdir=self.workdir)
        handler = self._handlers[name]
        reply = await self.with_progress(ctx, lambda: self.blocking(lambda: handler(args)))
        if reply.confirmation is not None and self._should_ask(ctx, reply):
            reply = await self._ask(ctx, spec, args, reply)
        return reply

    async def with_progress(self, ctx: ServerRequestContext[Any], work: Callable[[], Awaitable[T]]) -> T:
        """``work``, with a progress notification every ``PROGRESS_EVERY_S`` while it runs (a long command
        stays visibly alive; the SDK sends nothing when the client asked for no progress). An error of
        ``work`` is raised as itself, not inside a task group's exception group."""
        outcome: list[T] = []
        failure: list[BaseException] = []

        async def run(scope: anyio.CancelScope) -> None:
            try:
                outcome.append(await work())
            except Exception as exc:
                failure.append(exc)
            finally:
                scope.cancel()

        async with anyio.create_task_group() as tg:
            tg.start_soon(run, tg.cancel_scope)
            start = anyio.current_time()
            while True:
                await anyio.sleep(PROGRESS_EVERY_S)
                elapsed = anyio.current_time() - start
                note = f"still running after {elapsed:.0f}s"
                await ctx.session.report_progress(round(elapsed, 1), None, note)
        if failure:
            raise failure[0]
        return outcome[0]

    def _should_ask(self, ctx: ServerRequestContext[Any], reply: Reply) -> bool:
        wanted = reply.confirmation
        # with approvers named, only their identities count: the client's form is not one of them
        human = self.canal.config.policy.approval == "human" and not self.canal.config.approvals.approvers
        return (self.options.elicit and human and wanted is not None and wanted.approval == "human"
                and approval.client_can_elicit(ctx.session))

    async def _ask(self, ctx: ServerRequestContext[Any], spec: ToolSpec, args: s.ToolArgs,
                   reply: Reply) -> Reply:
        """Ask the person through the client; on yes, record who approved and run the same call again."""
        if reply.confirmation is None:
            return reply
        token = reply.confirmation.token
        approvals = self.canal.approvals
        shown = await self.blocking(lambda: approvals.show(token))
        try:
            answer = await approval.ask_person(ctx.session, shown, spec.name, ctx.request_id)
        except Exception as exc:  # the client could not ask: fall back to `canal approve`
            log.warning("elicitation failed, falling back to canal approve: %s", exc)
            return reply
        if answer is None:
            client = approval.client_name(ctx.session)
            await self.blocking(lambda: approval.record_decline(approvals, token, client))
            msg = f"the person declined {shown.command!r} when asked in {client}. Nothing was run."
            raise CONFIRMATION_DECLINED(msg, hint="do not retry it; ask the user what to do instead",
                                       details={"token": token})
        approver = approval.approver_for(answer, ctx.session)
        await self.blocking(lambda: approvals.approve(token, approver))
        again = args.model_copy(update={"confirm_token": token})
        handler = self._handlers[spec.name]
        return await self.blocking(lambda: handler(again))


def error_reply(exc: Exception, tool: str) -> Reply:
    if not isinstance(exc, CanalError):
        log.exception("tool %s failed unexpectedly", tool)
        msg = f"{tool} failed inside Canal: {type(exc).__name__}: {exc}"
        persists = "if it persists, report it with the server's log (stderr)"
        exc = INTERNAL_ERROR(msg, next=act("doctor", persists))
    return Reply(error_text(exc, tool), error_data(exc, tool), is_error=True)


def _version() -> str:
    try:
        return version("canal-sandbox")
    except PackageNotFoundError:
        return "0"


def build_server(app: CanalMcp) -> Server[Any]:
    async def list_tools(ctx: ServerRequestContext[Any],
                         params: types.PaginatedRequestParams | None) -> types.ListToolsResult:
        return types.ListToolsResult(tools=app.tools())

    async def call_tool(ctx: ServerRequestContext[Any],
                        params: types.CallToolRequestParams) -> types.CallToolResult:
        return await app.call(ctx, params.name, params.arguments)

    @asynccontextmanager
    async def lifespan(_: Server[Any]) -> AsyncIterator[dict[str, Any]]:
        async with anyio.create_task_group() as tg:
            tg.start_soon(app.blocking, app.warm)
            yield {}
            tg.cancel_scope.cancel()

    instructions = in_workdir(INSTRUCTIONS, app.workdir)
    return Server("canal", version=_version(), title="Canal", instructions=instructions, lifespan=lifespan,
                  on_list_tools=list_tools, on_call_tool=call_tool)


async def serve_stdio(app: CanalMcp) -> None:
    """Serve MCP over stdin/stdout until the client closes the stream."""
    server = build_server(app)
    async with stdio_server() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())


def serve(canal: Canal, *, elicit: bool = True) -> None:
    """Serve ``canal``'s project over MCP on stdin/stdout until the client leaves (blocks).

    The ``canal mcp`` verb reaches this through the package's ``canal.front_ends`` entry point."""
    anyio.run(serve_stdio, CanalMcp(canal, ServerOptions(elicit=elicit)))
