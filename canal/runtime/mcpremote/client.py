"""An MCP client over a stdio channel: one request at a time, every message checked by the mcp SDK's
types (``mcp_types``), every wait bounded by the server's ``timeout``, every message by
``MAX_MESSAGE_BYTES``.

The SDK's own client session runs on anyio tasks over its transports; Canal's server is a program in a
sandbox reached through the engine's exec socket, read line by line with a deadline, so the sequencing
(initialize, notifications/initialized, tools/list pages, tools/call) is written here and the protocol's
shapes come from the SDK. A server's request to the client (sampling, roots, elicitation) is answered
"method not found": a backend gets nothing from Canal but the calls the policy allowed.
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping
from typing import Any, Protocol

from mcp_types import (
    LATEST_PROTOCOL_VERSION,
    CallToolResult,
    InitializeResult,
    JSONRPCError,
    JSONRPCMessage,
    JSONRPCNotification,
    JSONRPCRequest,
    JSONRPCResponse,
    ListToolsResult,
    Tool,
)
from pydantic import TypeAdapter, ValidationError

from canal.core.next import act
from canal.runtime.mcpremote.errors import (
    MCP_PROTOCOL_ERROR,
    MCP_RESULT_TOO_LARGE,
    MCP_SERVER_NOT_MCP,
    MCP_SERVER_NOT_STARTED,
    MCP_SERVER_TIMEOUT,
    McpBackendError,
)
from canal.sandbox.docker.stdio import ChannelTimeout, LineTooLong

MAX_MESSAGE_BYTES = 4 * 1024 * 1024  # one JSON-RPC message (a tool's result included)
MAX_PAGES = 100  # tools/list pages
METHOD_NOT_FOUND = -32601
_MESSAGE: TypeAdapter[Any] = TypeAdapter(JSONRPCMessage)
CLIENT_INFO = {"name": "canal", "version": "0.1.0"}


class Channel(Protocol):
    seen: int

    def send(self, data: bytes) -> None: ...
    def read_line(self, deadline: float, limit: int) -> bytes | None: ...
    @property
    def stderr_tail(self) -> str: ...
    def exit_code(self) -> int | None: ...
    def close(self) -> None: ...


class McpClient:
    def __init__(self, channel: Channel, server: str, *, timeout_s: float,
                 on_timeout: Any = None) -> None:
        self.channel = channel
        self.server = server
        self.timeout_s = timeout_s
        self.on_timeout = on_timeout  # called before MCP_SERVER_TIMEOUT is raised (the sandbox is removed)
        self._next_id = 0
        self.info: InitializeResult | None = None

    # -- the protocol ---------------------------------------------------------------------------
    def initialize(self) -> InitializeResult:
        result = self.request("initialize", {"protocolVersion": LATEST_PROTOCOL_VERSION, "capabilities": {},
                                             "clientInfo": CLIENT_INFO})
        self.info = self._parse(InitializeResult, result, "initialize")
        self._write({"jsonrpc": "2.0", "method": "notifications/initialized"})
        return self.info

    def list_tools(self) -> list[Tool]:
        tools: list[Tool] = []
        cursor: str | None = None
        for _ in range(MAX_PAGES):
            answer = self.request("tools/list", {"cursor": cursor} if cursor else {})
            page = self._parse(ListToolsResult, answer, "tools/list")
            tools += page.tools
            cursor = page.next_cursor
            if not cursor:
                return tools
        msg = f"MCP server {self.server} listed more than {MAX_PAGES} pages of tools."
        raise MCP_PROTOCOL_ERROR(msg, hint="check the server's pagination (nextCursor)",
                               details={"server": self.server})

    def call_tool(self, name: str, arguments: Mapping[str, Any]) -> CallToolResult | JSONRPCError:
        """The tool's result, or the server's JSON-RPC error for the call (a failed result to show)."""
        answer = self.request("tools/call", {"name": name, "arguments": dict(arguments)}, errors_ok=True)
        if isinstance(answer, JSONRPCError):
            return answer
        result: CallToolResult = self._parse(CallToolResult, answer, "tools/call")
        return result

    def close(self) -> None:
        self.channel.close()

    # -- messages -------------------------------------------------------------------------------
    def request(self, method: str, params: Mapping[str, Any], *, errors_ok: bool = False) -> Any:
        self._next_id += 1
        ident = self._next_id
        self._write({"jsonrpc": "2.0", "id": ident, "method": method, "params": dict(params)})
        deadline = time.monotonic() + self.timeout_s
        while True:
            message = self._read(deadline, method)
            if message is None:
                continue
            if isinstance(message, JSONRPCRequest):  # the server asks the client something: no
                self._write({"jsonrpc": "2.0", "id": message.id,
                             "error": {"code": METHOD_NOT_FOUND,
                                       "message": "Canal offers no client features"}})
                continue
            if isinstance(message, JSONRPCNotification):
                continue  # logging, progress: not the answer
            if message.id != ident:
                continue  # an answer to a request given up on
            if isinstance(message, JSONRPCError):
                if errors_ok:
                    return message
                msg = (f"MCP server {self.server} answered {method} with error {message.error.code}: "
                       f"{message.error.message}")
                raise MCP_PROTOCOL_ERROR(msg, hint="check the server's log (stderr) and its MCP version",
                                       details={"server": self.server, "method": method,
                                                "error": message.error.code})
            assert isinstance(message, JSONRPCResponse)
            return message.result

    def _write(self, payload: Mapping[str, Any]) -> None:
        data = json.dumps(payload, separators=(",", ":"), ensure_ascii=False).encode() + b"\n"
        try:
            self.channel.send(data)
        except OSError as exc:
            why = f"its input closed ({exc.strerror or exc})"
            raise self._ended(why) from None

    def _read(self, deadline: float, method: str) -> Any:
        try:
            line = self.channel.read_line(deadline, MAX_MESSAGE_BYTES)
        except ChannelTimeout:
            if self.on_timeout is not None:
                self.on_timeout()
            msg = f"MCP server {self.server} did not answer {method} within {self.timeout_s:g} s."
            hint = f"raise tools.mcp_servers.{self.server}.timeout, or fix the server"
            raise MCP_SERVER_TIMEOUT(msg, hint=hint,
                                   next=act("discover"),
                                   details={"server": self.server, "method": method,
                                            "timeout_s": self.timeout_s}) from None
        except LineTooLong as exc:
            msg = (f"MCP server {self.server} sent a message over {MAX_MESSAGE_BYTES} bytes "
                   f"({exc.args[0]} so far) answering {method}; it was not read.")
            raise MCP_RESULT_TOO_LARGE(msg, hint="make the tool return less (a file path, a page of results)",
                                    details={"server": self.server, "method": method,
                                             "limit": MAX_MESSAGE_BYTES}) from None
        if line is None:
            why = "it ended without answering"
            raise self._ended(why)
        if not line.strip():
            return None  # a blank line: the caller reads on (a loop, so a server cannot recurse it deep)
        try:
            return _MESSAGE.validate_json(line)
        except ValidationError:
            try:
                json.loads(line)
            except ValueError:
                shown = line[:120].decode("utf-8", errors="replace")
                if self._exit_soon() in (126, 127):  # the engine's own words: the program is not there
                    msg = f"MCP server {self.server} did not start: {shown}"
                    hint = f"check tools.mcp_servers.{self.server}.command (the program must be in the image)"
                    raise MCP_SERVER_NOT_STARTED(msg, hint=hint, details={"server": self.server}) from None
                msg = f"MCP server {self.server} wrote {shown!r}, which is not JSON-RPC (answering {method})."
                raise MCP_SERVER_NOT_MCP(msg, hint="an MCP stdio server writes only JSON-RPC lines on stdout "
                                      "(logs go to stderr)", details={"server": self.server}) from None
            msg = f"MCP server {self.server} sent JSON that is not a JSON-RPC message (answering {method})."
            raise MCP_PROTOCOL_ERROR(msg, hint="check the server's MCP implementation",
                                   details={"server": self.server, "method": method}) from None

    def _parse(self, model: type[Any], result: Any, method: str) -> Any:
        try:
            return model.model_validate(result)
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(p) for p in first["loc"]) or "(the result)"
            msg = (f"MCP server {self.server} answered {method} with an invalid result: "
                   f"{where}: {first['msg']}")
            raise MCP_PROTOCOL_ERROR(msg, hint="check the server's MCP implementation",
                                   details={"server": self.server, "method": method}) from None

    def _exit_soon(self) -> int | None:
        """The program's exit status if it ends within a moment (the engine reports it just after)."""
        for _ in range(10):
            code = self.channel.exit_code()
            if code is not None:
                return code
            time.sleep(0.02)
        return None

    def _ended(self, how: str) -> McpBackendError | McpBackendError:
        code = self._exit_soon()
        said = self.channel.stderr_tail.strip()[-600:]
        details = {"server": self.server, "exit_code": code, "stderr": said}
        if self.channel.seen == 0 and (code is None or code != 0):
            msg = (f"MCP server {self.server} did not start: {how}"
                   f"{f', exit status {code}' if code is not None else ''}. It said: {said or '(nothing)'}")
            hint = f"check tools.mcp_servers.{self.server}.command: run it in the sandbox to see it fail"
            return MCP_SERVER_NOT_STARTED(msg, hint=hint, details=details)
        msg = f"MCP server {self.server} is not speaking MCP: {how}. It said: {said or '(nothing)'}"
        return MCP_SERVER_NOT_MCP(msg, hint="an MCP stdio server answers initialize on stdout",
                                  details=details)
