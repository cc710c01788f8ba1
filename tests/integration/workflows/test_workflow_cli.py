"""Workflows end to end through the ``canal`` CLI, each command in its own process, steps in real
sandboxes: gate rejection, a chain of automated steps, a crash mid-step recovered from a new process,
a confirmation point, completion, and no sensitive value in clear in any state or audit byte."""

from __future__ import annotations

import hashlib
import json
import signal
import time

from wf_cli import CliProject

TOKEN = "tok-Canal-e2e-7f3a9c1b5d"  # a sensitive gate value: must never reach disk in clear
GATE = {"project_name": "demo", "host": "demo.example.test", "api_token": TOKEN, "colour": "blue"}


def test_project_bootstrap_end_to_end_in_separate_processes(cli_project: CliProject) -> None:
    started = cli_project.json("workflow", "start", "project-bootstrap")
    run = started["run_id"]
    assert started["step"]["id"] == "collect-project-info"
    assert {f["name"] for f in started["step"]["fields"]} == {"project_name", "host", "api_token", "tier"}

    rejected = cli_project.run("workflow", "advance", run, "--gate-data", '{"project_name": "demo"}')
    assert rejected.returncode == 2
    assert rejected.stderr.splitlines()[:4] == [
        "GATE_REJECTED",
        "step collect-project-info rejected the gate data; nothing was saved.",
        "  missing host: Service domain, e.g. api.example.test",
        "  missing api_token: API token for the service (never shown again)",
    ]
    assert rejected.stdout == ""

    advanced = cli_project.json("workflow", "advance", run, "--gate-data", json.dumps(GATE))
    assert advanced["status"] == "waiting_input"
    assert advanced["accepted"] == ["api_token", "host", "project_name", "tier"]
    assert advanced["dropped"] == ["colour"]
    assert [(r["id"], r["outcome"], r["exit_code"]) for r in advanced["ran"]] == [
        ("create-project", "ok", 0), ("register-service", "ok", 0)]
    assert advanced["step"]["id"] == "done"

    current = cli_project.json("workflow", "current", run)
    completed = {c["id"]: c for c in current["completed"]}
    assert completed["collect-project-info"]["gate"]["api_token"] == "****"
    created = completed["create-project"]["result"]
    # the token reached the sandbox (as an environment variable): its fingerprint proves it
    assert created["token_fingerprint"] == hashlib.sha256(TOKEN.encode()).hexdigest()[:12]
    assert completed["register-service"]["result"]["project_id"] == created["project_id"]

    finished = cli_project.json("workflow", "advance", run)
    assert finished["status"] == "completed"
    assert cli_project.json("workflow", "runs")["runs"][0]["status"] == "completed"

    files = dict(cli_project.every_file_bytes())
    assert any(p.name == f"wfrun.{run}.json" for p in files)
    assert any("audit" in p.parts for p in files)
    leaks = [str(p) for p, data in files.items() if TOKEN.encode() in data]
    assert leaks == []
    audit = cli_project.json("audit", "show")
    events = [r["event"] for r in audit["records"]]
    assert {"workflow.run.started", "workflow.gate.accepted", "workflow.step.completed",
            "workflow.run.completed"} <= set(events)
    assert TOKEN not in json.dumps(audit)


def _wait_for_step(cli_project: CliProject, run: str, step: str) -> dict[str, object]:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        view = cli_project.json("workflow", "current", run)
        if view["status"] == "running" and view["step"] and view["step"]["id"] == step:
            return view
        time.sleep(0.3)
    raise AssertionError(f"step {step} never started: {view}")


def test_process_killed_mid_step_is_recovered_exactly_by_a_new_process(cli_project: CliProject) -> None:
    run = cli_project.json("workflow", "start", "slow-steps")["run_id"]
    label = f"k{run[3:]}"
    advance = cli_project.popen("workflow", "advance", run, "--gate-data", json.dumps({"label": label}))
    try:
        running = _wait_for_step(cli_project, run, "slow")
    finally:
        advance.send_signal(signal.SIGKILL)
        advance.communicate(timeout=30)
    assert advance.returncode == -signal.SIGKILL

    recovered = cli_project.json("workflow", "current", run)
    assert recovered["status"] == "needs_attention"
    assert recovered["step"]["id"] == "slow"
    assert recovered["attention"].startswith("step slow (attempt 1) was started at ")
    assert recovered["completed"] == running["completed"]
    assert [(c["id"], c["result"]) for c in recovered["completed"]] == [
        ("label", None), ("stamp", {"stamped": label})]
    assert cli_project.json("workflow", "current", run) == recovered  # stable on a second look

    refused = cli_project.run("workflow", "advance", run)
    assert refused.returncode == 2
    assert refused.stderr.startswith("RUN_NEEDS_ATTENTION\n")
    assert f"canal workflow advance {run} --retry" in refused.stderr

    retried = cli_project.json("workflow", "advance", run, "--retry")
    assert retried["status"] == "completed"
    assert [(r["id"], r["attempts"]) for r in retried["ran"]] == [("slow", 2)]
    shown = cli_project.json("workflow", "show", run)
    assert shown["completed"][-1]["result"] == {"label": label, "first_attempt": False}


def test_confirmation_point_pauses_and_resumes_with_the_token(cli_project: CliProject) -> None:
    run = cli_project.json("workflow", "start", "cleanup-build")["run_id"]
    staged = cli_project.json("workflow", "advance", run, "--gate-data", '{"directory": "dist-e2e"}')
    assert [r["id"] for r in staged["ran"]] == ["prepare"]
    assert staged["step"]["id"] == "review"
    assert "/tmp/canal-builds/dist-e2e**: 3 files, 3072 bytes" in staged["step"]["instructions"]

    paused = cli_project.json("workflow", "advance", run, code=120)
    assert paused["status"] == "waiting_confirmation"
    token = paused["confirmation"]["token"]
    assert paused["confirmation"]["step"] == "delete-build"
    assert paused["hint"] == "ask the user"
    assert paused["next"] == [{"kind": "workflow.advance", "args": {"run_id": run, "confirm": token},
                               "note": ""}]

    again = cli_project.run("workflow", "advance", run)
    assert again.returncode == 120
    assert again.stderr.startswith("CONFIRMATION_REQUIRED\nstep delete-build waits for confirmation")
    assert cli_project.json("workflow", "current", run)["status"] == "waiting_confirmation"

    wrong = cli_project.run("workflow", "advance", run, "--confirm", "c_0123456789ab")
    assert wrong.returncode == 122, wrong.stderr
    assert token not in wrong.stdout + wrong.stderr, "a wrong token must never be answered with the right one"

    resumed = cli_project.json("workflow", "advance", run, "--confirm", token)
    assert resumed["status"] == "completed"
    assert [(r["id"], r["outcome"]) for r in resumed["ran"]] == [("delete-build", "ok"), ("verify", "ok")]
    verified = cli_project.json("workflow", "show", run)["completed"][-1]
    assert verified["result"] == {"path": "/tmp/canal-builds/dist-e2e", "deleted": True}


def test_unattended_run_fails_at_the_confirmation_point(cli_project: CliProject) -> None:
    run = cli_project.json("workflow", "start", "cleanup-build", "--unattended")["run_id"]
    cli_project.json("workflow", "advance", run, "--gate-data", '{"directory": "dist-unattended"}')
    failed = cli_project.json("workflow", "advance", run, code=1)
    assert failed["status"] == "failed"
    assert failed["failure"]["step"] == "delete-build"
    assert failed["failure"]["code"] in ("CONFIRMATION_UNATTENDED", "POLICY_DENIED")
