"""A long command over MCP sends progress notifications while it runs."""

from __future__ import annotations

from typing import Any

import mcp_types as types

from tests.integration.mcp.conftest import text_of


def test_a_long_command_reports_progress_until_it_ends(serve: Any) -> None:
    client, _ = serve()
    seen: list[tuple[float, str | None]] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        seen.append((progress, message))

    async def call() -> types.CallToolResult:
        return await client.session.call_tool("run_command", {"command": "sleep 5; echo done"},
                                              read_timeout_seconds=120, progress_callback=on_progress)

    result = client.portal.call(call)
    assert text_of(result).startswith("done\n")
    assert len(seen) >= 2
    assert seen[0][1] is not None
    assert seen[0][1].startswith("still running after")
    assert seen[-1][0] > seen[0][0]
