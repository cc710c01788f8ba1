"""``canal mcp`` through the server: the same sandbox session as the CLI's, and a quick initialize."""

from __future__ import annotations

from typing import Any

import anyio
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from served_cli import CANAL, ServedProject


def mcp_run(served: ServedProject, command: str) -> str:
    params = StdioServerParameters(command=CANAL, args=["mcp"], env=served.env, cwd=str(served.root))

    async def main() -> str:
        async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            result: Any = await session.call_tool("run_command", {"command": command},
                                                  read_timeout_seconds=120)
            return "\n".join(c.text for c in result.content)

    return anyio.run(main)


def test_mcp_and_the_cli_share_the_sandbox_session(served: ServedProject) -> None:
    assert served.run("run", "--", "cd sub && export DOOR=cli").returncode == 0
    seen = mcp_run(served, 'pwd; echo "$DOOR"; cd / && export DOOR=mcp')
    assert seen.splitlines()[:2] == ["/workspace/sub", "cli"]
    back = served.run("run", "--", 'pwd; echo "$DOOR"')
    assert back.stdout.splitlines()[:2] == ["/", "mcp"]
