"""Choosing the engine runtime for runc and gVisor, and what is said when there is none."""

from __future__ import annotations

import json
import os
import runpy
import subprocess
import sys
from pathlib import Path

import pytest

from canal.sandbox.docker.spec import run_kwargs
from canal.sandbox.errors import RUNTIME_FAILED, RUNTIME_UNKNOWN, EngineError
from canal.sandbox.runtimes import (
    REGISTRATIONS,
    ROOT_NETNS_REFUSAL,
    engine_runtime,
    gvisor_status,
    runtime_failure,
)
from canal.sandbox.spec import SandboxSpec
from tests.error_codes import raises_code

SCRIPT = Path(__file__).resolve().parents[3] / "scripts" / "register-runsc"
ALL = ["runc", "runsc", "runsc-none", "runsc-hostinet"]


def test_gvisor_flavour_follows_the_network() -> None:
    assert engine_runtime("runsc", networked=False, installed=ALL) == "runsc-none"
    assert engine_runtime("runsc", networked=True, installed=ALL) == "runsc-hostinet"
    assert engine_runtime("runsc", networked=True, installed=["runc", "runsc"]) == "runsc"
    assert engine_runtime("runc", networked=True, installed=ALL) == "runc"


@pytest.mark.parametrize("installed", [["runc"], ["runc", "io.containerd.runc.v2"], []])
def test_gvisor_missing_is_an_error_never_runc(installed: list[str]) -> None:
    with raises_code(RUNTIME_UNKNOWN) as info:
        engine_runtime("runsc", networked=False, installed=installed)
    assert "Nothing was started" in info.value.message
    assert "ensure-docker" in info.value.hint
    assert "kill -HUP" in info.value.hint


def test_runsc_refusing_the_kernel_is_explained() -> None:
    raw = EngineError(f"Docker failed to create canal-x: OCI runtime start failed: {ROOT_NETNS_REFUSAL}")
    err = runtime_failure(raw, "runsc")
    assert RUNTIME_FAILED.matches(err)
    assert "runsc-hostinet" in err.hint
    other = EngineError("Docker failed to create canal-x: no space left")
    assert runtime_failure(other, "runsc") is other


def test_gvisor_status() -> None:
    assert gvisor_status(["runc"])[0] is False
    assert gvisor_status(["runc", "runsc-none"]) == (True, "gVisor registered as runsc-none (networked runsc "
                                                     "sandboxes use plain runsc, which needs a newer runsc "
                                                     "or kernel)")
    assert gvisor_status(ALL)[0] is True


def test_gvisor_moves_the_process_limit_inside() -> None:
    spec = SandboxSpec(limits={"pids": 64})  # type: ignore[arg-type]
    runc = run_kwargs(spec, name="canal-x", labels={}, runtime="runc")
    assert runc["pids_limit"] == 64
    assert [(u.name, u.soft, u.hard) for u in runc["ulimits"]] == [("msgqueue", 0, 0)]
    gvisor = run_kwargs(spec, name="canal-x", labels={}, runtime="runsc-none")
    assert gvisor["runtime"] == "runsc-none"
    assert [(u.name, u.soft, u.hard) for u in gvisor["ulimits"]] == [("msgqueue", 0, 0), ("nproc", 64, 64)]
    assert gvisor["pids_limit"] > 64 * 16


def _register(path: Path, hostinet: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "CANAL_RUNSC_HOSTINET": hostinet}
    return subprocess.run([sys.executable, str(SCRIPT), str(path)], capture_output=True, text=True,
                          check=False, env=env)


def test_register_runsc_keeps_other_settings_and_is_idempotent(tmp_path: Path) -> None:
    path = tmp_path / "daemon.json"
    path.write_text(json.dumps({"log-level": "warn", "runtimes": {"kata": {"path": "/usr/bin/kata"}}}))
    first = _register(path, "1")
    assert (first.returncode, first.stdout) == (0, "changed\n")
    data = json.loads(path.read_text())
    assert data["log-level"] == "warn"
    assert data["runtimes"] == {"kata": {"path": "/usr/bin/kata"}, **REGISTRATIONS}
    assert _register(path, "1").stdout == "unchanged\n"


def test_register_runsc_without_the_kernel_problem_and_on_bad_json(tmp_path: Path) -> None:
    path = tmp_path / "daemon.json"
    assert _register(path, "0").stdout == "changed\n"
    assert "runsc-hostinet" not in json.loads(path.read_text())["runtimes"]
    path.write_text("{not json")
    bad = _register(path, "0")
    assert bad.returncode == 1
    assert "not valid JSON" in bad.stderr
    assert path.read_text() == "{not json"


def test_script_and_library_agree_on_the_registrations() -> None:
    script = runpy.run_path(str(SCRIPT), run_name="register_runsc")
    assert {**script["RUNTIMES"], **script["HOSTINET"]} == REGISTRATIONS
