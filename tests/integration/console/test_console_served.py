"""The web console served by a real Canal server, driven as a browser would (a software authenticator
for the passkey): register shows the line; login; a pending approval a real `canal run` made is listed;
approve, and the re-run executes; deny with a reason, and the agent reads it; replayed assertions, wrong
CSRF tokens, missing sessions, foreign Host and Origin, credentials not in canal.yaml: refused, audited."""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from console_browser import Browser
from project_helpers import chown_tree, remove_project_containers
from server_helpers import stop_servers
from webauthn_soft import SoftAuthenticator

from canal.host.approvals import Approver
from canal.host.approvals.errors import PASSKEY_INVALID
from canal.host.approvals.passkey import verify_evidence
from canal.runtime.services import Services
from tests.error_codes import raises_code

CANAL = str(Path(sys.executable).with_name("canal"))
BOB_KEY = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOq4dVvP1vq0nC2e7kY3t5GvXq9r4z2mH8n6bJ1aQ0Zk bob"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass
class Served:
    project: Path
    env: dict[str, str]
    port: int
    alice: SoftAuthenticator

    def canal(self, *args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([CANAL, *args], cwd=self.project, env=self.env, text=True, capture_output=True,
                              timeout=180, check=False, stdin=subprocess.DEVNULL)

    def audit(self, event: str) -> list[dict[str, Any]]:
        shown = self.canal("audit", "show", "--json")
        assert shown.returncode == 0, shown.stderr
        return [r["data"] for r in json.loads(shown.stdout)["records"] if r["event"] == event]


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory, docker_client: Any,
           sandbox_image: str) -> Iterator[Served]:
    root = tmp_path_factory.mktemp("console")
    project = root / "project"
    for folder in ("build", "dist"):
        (project / folder).mkdir(parents=True)
        (project / folder / "out.bin").write_bytes(b"artifact")
    chown_tree(project)
    port = free_port()
    alice = SoftAuthenticator(f"http://localhost:{port}")
    (project / "canal.yaml").write_text(
        f"policy: {{approval: human}}\napprovals:\n  console: {{port: {port}}}\n  approvers:\n"
        f"    - name: alice\n      passkeys: [\"{alice.line()}\"]\n"
        f"    - {{name: bob, ssh_key: '{BOB_KEY}'}}\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith("CANAL_") or k == "CANAL_CACHE_DIR"}
    env.update(CANAL_RUNTIME_DIR=str(root / "rt"), CANAL_STATE_DIR=str(root / "state"),
               CANAL_CONFIG_DIR=str(root / "config"))
    with pytest.MonkeyPatch.context() as mp:  # a person approves the settings (the first ones: at a tty)
        for key in ("CANAL_STATE_DIR", "CANAL_CONFIG_DIR"):
            mp.setenv(key, env[key])
        mp.delenv("CANAL_KEY", raising=False)
        trust = Services(project).trust
        trust.approve(Approver(user="bootstrap", how="tty"), trust.status().snapshot.digest)
    try:
        yield Served(project, env, port, alice)
    finally:
        stop_servers(root / "rt")
        remove_project_containers(docker_client, project)


@pytest.fixture(scope="module")
def console(served: Served) -> Browser:
    started = served.canal("console", "--json")
    assert started.returncode == 0, started.stderr
    assert json.loads(started.stdout)["url"] == f"http://localhost:{served.port}/"
    again = served.canal("console")  # a second call finds the running console
    assert again.returncode == 0, again.stderr
    assert f"http://localhost:{served.port}/" in again.stdout
    return Browser(served.port)


def log_in(served: Served, browser: Browser) -> None:
    browser.get("/login")
    options = browser.post("/api/login/options", {"approver": "alice"})
    assert options.status == 200, options.text
    done = browser.post("/api/login/verify", {"credential": served.alice.get(options.json())})
    assert done.status == 200, done.text
    browser.get("/approvals")  # the logged-in session's CSRF token


def ask(served: Served, folder: str) -> str:
    asked = served.canal("run", "--", "rm", "-rf", folder)
    assert asked.returncode == 120, asked.stdout + asked.stderr
    found = re.search(r"c_[a-z2-7]{12}", asked.stdout + asked.stderr)
    assert found is not None
    return found.group(0)


def decide(served: Served, browser: Browser, token: str, decision: str, reason: str = "") -> Any:
    options = browser.post("/api/decide/options", {"token": token, "decision": decision, "reason": reason})
    assert options.status == 200, options.text
    signed = served.alice.get(options.json())
    return signed, browser.post("/api/decide/verify", {"credential": signed})


def test_nothing_is_served_to_other_addresses(served: Served, console: Browser) -> None:
    listening = [line.split() for line in Path("/proc/net/tcp").read_text().splitlines()[1:]]
    ours = [cols[1] for cols in listening if cols[1].endswith(f":{served.port:04X}") and cols[3] == "0A"]
    assert ours == [f"0100007F:{served.port:04X}"]  # 127.0.0.1 only


def test_register_shows_the_line_for_canal_yaml(served: Served, console: Browser) -> None:
    browser = Browser(served.port)
    page = browser.get("/register")
    assert page.status == 200
    options = browser.post("/api/register/options", {"approver": "bob"})
    assert options.status == 200, options.text
    newcomer = SoftAuthenticator(browser.origin)
    done = browser.post("/api/register/verify", {"credential": newcomer.create(options.json())})
    assert done.status == 200, done.text
    assert done.json()["line"] == newcomer.line()
    assert served.audit("console.registered")[-1]["approver"] == "bob"


def test_approve_in_the_console_and_the_re_run_executes(served: Served, console: Browser) -> None:
    log_in(served, console)
    token = ask(served, "build")
    page = console.get("/approvals")
    assert f'<tr class="pending" data-token="{token}">' in page.text
    assert "rm -rf build" in page.text
    signed, done = decide(served, console, token, "approve")
    assert done.status == 200, done.text
    assert done.json()["pending"]["approved_by"] == "alice (passkey)"
    ran = served.canal("run", "--confirm", token, "--", "rm", "-rf", "build")
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert not (served.project / "build").exists()
    replayed = console.post("/api/decide/verify", {"credential": signed})
    assert replayed.code() == "PASSKEY_REPLAYED"
    approved = served.audit("approval.approved")[-1]
    assert approved["how"] == "passkey"
    assert approved["evidence"]["credential_id"] == served.alice.id


def test_deny_with_a_reason_and_the_agent_reads_it(served: Served, console: Browser) -> None:
    token = ask(served, "dist")
    _signed, done = decide(served, console, token, "deny", "dist/ is the release")
    assert done.json()["pending"]["status"] == "denied", done.text
    again = served.canal("run", "--confirm", token, "--", "rm", "-rf", "dist")
    assert again.returncode == 122
    assert "APPROVAL_DENIED" in again.stderr
    assert "dist/ is the release" in again.stderr
    assert (served.project / "dist").is_dir()


def test_refusals_each_have_their_code_and_are_audited(served: Served, console: Browser) -> None:
    stranger = Browser(served.port)
    assert stranger.post("/api/login/options", {"approver": "alice"}).code() == "CONSOLE_SESSION_MISSING"
    stranger.get("/login")
    good_csrf, stranger.csrf = stranger.csrf, "forged"
    assert stranger.post("/api/login/options", {"approver": "alice"}).code() == "CONSOLE_CSRF_INVALID"
    stranger.csrf = good_csrf
    assert stranger.get("/login", host=f"rebind.example:{served.port}").code() == "CONSOLE_HOST_REFUSED"
    foreign = stranger.post("/api/login/options", {"approver": "alice"},
                            headers={"Origin": "http://evil.example"})
    assert foreign.code() == "CONSOLE_ORIGIN_REFUSED"
    options = stranger.post("/api/login/options", {"approver": "alice"})
    impostor = SoftAuthenticator(stranger.origin)
    signed = impostor.get({"publicKey": {**options.json()["publicKey"], "allowCredentials": []}})
    assert stranger.post("/api/login/verify", {"credential": signed}).code() == "PASSKEY_UNKNOWN"
    codes = [r["code"] for r in served.audit("console.refused")]
    for code in ("CONSOLE_SESSION_MISSING", "CONSOLE_CSRF_INVALID", "CONSOLE_HOST_REFUSED",
                 "CONSOLE_ORIGIN_REFUSED", "PASSKEY_UNKNOWN"):
        assert code in codes, codes
    assert "PASSKEY_REPLAYED" in [r["code"] for r in served.audit("approval.refused")]
    verified = served.canal("audit", "verify")
    assert verified.returncode == 0, verified.stderr


def test_an_exported_copy_verifies_the_passkey_decision_with_the_public_key_alone(served: Served,
                                                                                 console: Browser) -> None:
    exported = served.canal("audit", "export", "--format", "jsonl")
    assert exported.returncode == 0, exported.stderr
    records = [json.loads(line) for line in exported.stdout.splitlines()]
    approved = [r for r in records if r["event"] == "approval.approved" and r["data"]["how"] == "passkey"]
    assert approved
    public_key = served.alice.line().split(":")[1]  # what canal.yaml holds: no secret of the host
    for record in approved:
        verify_evidence(record["data"]["evidence"], public_key)
    tampered = {**approved[0]["data"]["evidence"], "client_data_json": approved[0]["data"]["evidence"][
        "authenticator_data"]}
    with raises_code(PASSKEY_INVALID):
        verify_evidence(tampered, public_key)


def test_read_only_pages_show_the_audit_log_sandboxes_tasks_and_runs(served: Served,
                                                                     console: Browser) -> None:
    log_in(served, console)
    audit = console.get("/audit?kind=approval&q=passkey")
    assert audit.status == 200, audit.text
    assert '<strong id="verify-status" class="ok">ok</strong>' in audit.text
    assert 'class="record" data-event="approval.approved"' in audit.text
    assert 'data-event="run.started"' not in audit.text  # filtered by kind
    sandboxes = console.get("/sandboxes")
    assert '<tr class="sandbox">' in sandboxes.text, sandboxes.text
    assert "<td>default</td>" in sandboxes.text
    for page in ("/tasks", "/workflows"):
        shown = console.get(page)
        assert shown.status == 200
        assert 'id="error" role="alert" hidden' in shown.text, shown.text
