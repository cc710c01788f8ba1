"""The MCP client over a scripted channel (pure logic: the real server runs in tests/integration)."""

from __future__ import annotations

import json

from canal.runtime.mcpremote.client import McpClient


class Scripted:
    """A channel whose server writes ``lines`` before each answer."""

    def __init__(self, before: list[bytes]) -> None:
        self.before = before
        self.out: list[bytes] = []
        self.seen = 0

    def send(self, data: bytes) -> None:
        request = json.loads(data)
        if "id" in request:
            answer = {"jsonrpc": "2.0", "id": request["id"], "result": {"tools": []}}
            self.out += [*self.before, json.dumps(answer).encode()]

    def read_line(self, deadline: float, limit: int) -> bytes | None:
        self.seen += 1
        return self.out.pop(0) if self.out else None

    @property
    def stderr_tail(self) -> str:
        return ""

    def exit_code(self) -> int | None:
        return None

    def close(self) -> None:
        pass


def test_a_flood_of_blank_lines_is_read_through_not_recursed_into() -> None:
    channel = Scripted([b""] * 5000 + [b"   "])
    client = McpClient(channel, "backend", timeout_s=30)
    assert client.list_tools() == []
    assert channel.out == []
