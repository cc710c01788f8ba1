"""The CLI and its front ends (MCP, the web console) are independent: ``canal mcp`` and ``canal console``
find their server by name, through the package's ``canal.front_ends`` entry point, and loading every CLI
command imports nothing of MCP nor of the console's web stack."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import canal
from canal.cli.shared import FRONT_END_MISSING, front_end
from tests.error_codes import raises_code


def test_the_mcp_verb_finds_the_mcp_server_by_its_entry_point() -> None:
    from canal.mcp import serve

    assert front_end("mcp") is serve


def test_the_console_verb_finds_the_web_console_by_its_entry_point() -> None:
    from canal.console import serve

    assert front_end("console") is serve


def test_an_unknown_front_end_is_a_typed_error() -> None:
    with raises_code(FRONT_END_MISSING) as info:
        front_end("no-such-front-end")
    assert info.value.code == "FRONT_END_MISSING"


def test_loading_every_cli_command_imports_no_mcp_module() -> None:
    probe = ("import sys, json; from canal.cli.main import COMMANDS, load_command; "
             "[load_command(n) for n in COMMANDS]; print(json.dumps(sorted(sys.modules)))")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    loaded = json.loads(done.stdout)
    # the MCP front end and the SDK (MCP backends' settings, runtime.settings.mcp_servers, are plain data)
    sdk = [m for m in loaded if m.split(".")[0] in ("mcp", "mcp_types")]
    front = [m for m in loaded if m == "canal.mcp" or m.startswith("canal.mcp.")]
    assert sdk + front == []
    backends = [m for m in loaded if m.startswith("canal.runtime.mcpremote.")]
    assert backends == []
    web = ("canal.console", "starlette", "uvicorn", "jinja2", "webauthn")
    assert [m for m in loaded if m.startswith(web)] == []


def test_no_front_end_reaches_behind_the_facade() -> None:
    """``Canal`` and its sub-APIs are the one door (STYLE rule 15): no front end names the per-project
    services behind it; the import-linter contract "Front ends never import..." keeps them from importing
    the stores and the server's internals."""
    root = Path(canal.__file__).parent
    behind = re.compile(r"\b_?services\b", re.IGNORECASE)
    reaching = [f"{path.relative_to(root)}:{number}" for name in ("cli", "mcp", "console", "swerex")
                for path in sorted((root / name).rglob("*.py"))
                for number, line in enumerate(path.read_text().splitlines(), 1) if behind.search(line)]
    assert reaching == []
