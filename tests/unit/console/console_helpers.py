"""Helpers of the console tests: a project whose approved canal.yaml names alice (a passkey, from a
software authenticator) and bob (an SSH key only), and its console app driven with Starlette's
TestClient as if from 127.0.0.1."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from starlette.testclient import TestClient
from webauthn_soft import SoftAuthenticator

from canal.console.app import Console, build
from canal.host.approvals import Approver, DecisionSummary
from canal.runtime.services import Services

PORT = 18765
ORIGIN = f"http://localhost:{PORT}"
BOB_KEY = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOq4dVvP1vq0nC2e7kY3t5GvXq9r4z2mH8n6bJ1aQ0Zk bob"
CSRF = re.compile(r'<meta name="csrf" content="([^"]*)">')


@dataclass
class Setup:
    project: Path
    console: Console
    alice: SoftAuthenticator

    def services(self) -> Services:
        return Services(self.project)

    def client(self, peer: str = "127.0.0.1") -> TestClient:
        return TestClient(build(self.console), base_url=ORIGIN, client=(peer, 50000), follow_redirects=False)

    def refusals(self, event: str = "console.refused") -> list[dict[str, Any]]:
        import json

        lines = self.services().audit.path.read_text().splitlines()
        return [json.loads(line)["data"] for line in lines if f'"event":"{event}"' in line]

    def pending(self, command: str = "rm -rf build") -> str:
        return self.services().approvals.request(
            command, "default", "/workspace", "p1",
            DecisionSummary(("rm-recursive",), "deletes a folder")).token


BOOTSTRAP = Approver(user="bootstrap", how="tty")


def approve_settings(project: Path, text: str, by: Approver = BOOTSTRAP) -> None:
    """Write canal.yaml and record it approved by ``by`` (what `canal config approve` does once the
    approver proved who they are)."""
    (project / "canal.yaml").write_text(text)
    trust = Services(project).trust
    trust.approve(by, trust.status().snapshot.digest)


def settings_text(*lines: str) -> str:
    keys = "".join(f"\n        - \"{line}\"" for line in lines)
    return (f"policy: {{approval: human}}\napprovals:\n  console: {{port: {PORT}}}\n  approvers:\n"
            f"    - name: alice\n      passkeys:{keys}\n    - {{name: bob, ssh_key: '{BOB_KEY}'}}\n")


def csrf_of(html: str) -> str:
    found = CSRF.search(html)
    assert found is not None, html[:500]
    return found.group(1)


def post(client: TestClient, path: str, body: dict[str, Any], csrf: str | None, *,
         origin: str | None = ORIGIN) -> Any:
    headers = {"origin": origin} if origin is not None else {}
    if csrf is not None:
        headers["x-csrf-token"] = csrf
    return client.post(path, json=body, headers=headers)


def login(setup: Setup, client: TestClient, authenticator: SoftAuthenticator | None = None) -> str:
    """Log alice in; the logged-in session's CSRF token."""
    csrf = csrf_of(client.get("/login").text)
    options = post(client, "/api/login/options", {"approver": "alice"}, csrf)
    assert options.status_code == 200, options.text
    signed = (authenticator or setup.alice).get(options.json())
    done = post(client, "/api/login/verify", {"credential": signed}, csrf)
    assert done.status_code == 200, done.text
    return csrf_of(client.get("/approvals").text)
