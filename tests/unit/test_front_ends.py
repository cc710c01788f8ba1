"""The CLI and the MCP front end are independent: ``canal mcp`` finds its server by name, through the
package's ``canal.front_ends`` entry point, and loading every CLI command imports nothing of MCP."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from canal.runtime.cli.mcp_cmd import FrontEndMissing, front_end


def test_the_mcp_verb_finds_the_mcp_server_by_its_entry_point() -> None:
    from canal.runtime.mcp import serve

    assert front_end("mcp") is serve


def test_an_unknown_front_end_is_a_typed_error() -> None:
    with pytest.raises(FrontEndMissing) as info:
        front_end("console")
    assert info.value.code == "FRONT_END_MISSING"


def test_loading_every_cli_command_imports_no_mcp_module() -> None:
    probe = ("import sys, json; from canal.runtime.cli.main import COMMANDS, load_command; "
             "[load_command(n) for n in COMMANDS]; print(json.dumps(sorted(sys.modules)))")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    loaded = json.loads(done.stdout)
    assert [m for m in loaded if m.startswith(("canal.runtime.mcp", "mcp", "mcp_types"))] == []
