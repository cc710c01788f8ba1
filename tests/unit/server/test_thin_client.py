"""The thin client's hot path imports the standard library and a few small Canal modules, nothing else."""

from __future__ import annotations

import ast
import subprocess
import sys

import pytest

HEAVY = ("click", "docker", "celpy", "lark", "pydantic", "yaml", "regex", "cryptography", "mcp", "anyio",
         "canal.runtime.api", "canal.policy", "canal.sandbox", "canal.host.redact",
         # the standard library costs start-up too: these come with dataclasses and error rendering
         "dataclasses", "inspect", "ast", "canal.cli.words", "canal.core.next", "subprocess",
         # and these with annotations, paths, digests and context managers (issue 33: the client took 56
         # ms of CPU a call against Python's own 27 ms; typing alone is 3-5 ms, pathlib 3-7 ms with
         # urllib.parse, hashlib's OpenSSL 2-4 ms)
         "typing", "pathlib", "_hashlib", "contextlib", "urllib", "importlib.metadata",
         # json's package imports re, and re, signal and socket import enum and functools: together 8-10
         # ms of CPU, most of what the client cost over Python's own start (issue 33, stop 51)
         "json", "re", "enum", "functools", "socket", "signal", "selectors", "collections")


def _loaded(probe: str) -> list[str]:
    """The modules a fresh interpreter holds after ``probe`` (printed with repr: json is on the list)."""
    code = f"import sys; {probe}; print(repr(sorted(sys.modules)))"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    loaded = ast.literal_eval(done.stdout)
    assert "canal.cli.client" in loaded
    return list(loaded)


def test_client_imports_nothing_heavy() -> None:
    loaded = _loaded("import canal.cli.client as c; c.request(['run', '--', 'true']); "
                     "from canal.client.paths import build_id, server_paths; build_id(); server_paths(); "
                     "from canal.client import wire; wire.loads(wire.encode(b'X', b'{}')[5:]); "
                     "import canal.client.lifecycle")
    heavy = [m for m in loaded if any(m == h or m.startswith(h + ".") for h in HEAVY)]
    assert heavy == []


def test_the_command_is_found_after_the_group_options() -> None:
    from canal.cli.client import _command

    assert _command(["-C", "/p", "approve", "c_1"]) == "approve"
    assert _command(["--project", "approve", "run", "--", "ls"]) == "run"  # a folder named approve
    assert _command(["--json", "server", "status"]) == "server"


def test_the_build_id_is_taken_once_per_process(monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 33: ``Canal.connect(project).run`` stat-ed the whole package on every call (2.4 ms)."""
    from canal.client import paths

    monkeypatch.setattr(paths, "_built", None)
    scans: list[str] = []
    real = paths._scan_build
    monkeypatch.setattr(paths, "_scan_build", lambda: scans.append("scan") or real())
    first = paths.build_id()
    assert [paths.build_id() for _ in range(3)] == [first] * 3
    assert scans == ["scan"]
    monkeypatch.setattr(paths, "_built", (-1, "another process's"))  # a forked child takes its own
    assert paths.build_id() == first
    assert scans == ["scan", "scan"]
