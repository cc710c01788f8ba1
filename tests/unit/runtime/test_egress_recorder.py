"""Egress attempts into the audit log, over the in-package FakeBackend: once each, in order, and named
in the footer of the command that made them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from canal.cli.words import say as cli_words
from canal.runtime.api import Canal
from canal.runtime.sandboxes.egress import EVENT, denied_footer
from canal.runtime.settings.config import CanalConfig, parse_config
from canal.sandbox.egress_squid import EgressAttempt
from canal.sandbox.fake import FakeBackend

ALLOWLIST = "sandbox:\n  network: {mode: allowlist, allow: ['pypi.org:443']}\n"


def attempt(host: str, *, port: int | None = 443, allowed: bool = False, kind: str = "connect",
            sandbox: str | None = None, at: float = 1_700_000_000.0) -> EgressAttempt:
    dns = kind == "dns"
    status = "refused" if dns else ("TCP_TUNNEL" if allowed else "TCP_DENIED")
    return EgressAttempt(at=at, client="172.30.0.3", kind=kind, method="A" if dns else "CONNECT",  # type: ignore[arg-type]
                         host=host, port=None if dns else port, allowed=allowed, status=status,
                         http_status=200 if allowed else 403, bytes_sent=10, bytes_received=20,
                         sandbox=sandbox)


def make(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, config: CanalConfig) -> Canal:
    monkeypatch.setenv("CANAL_CONFIG_DIR", str(tmp_path / "config"))
    monkeypatch.setenv("CANAL_STATE_DIR", str(tmp_path / "state"))
    monkeypatch.delenv("CANAL_KEY", raising=False)
    project = tmp_path / "project"
    project.mkdir()
    return Canal(project, config=config, backend=FakeBackend())


def events(canal: Canal) -> list[dict[str, object]]:
    return [json.loads(line) for line in canal._services.audit.path.read_text().splitlines()]


def test_each_attempt_is_recorded_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    canal = make(tmp_path, monkeypatch, parse_config(ALLOWLIST))
    backend = canal.backend
    assert isinstance(backend, FakeBackend)
    backend.egress_log += [attempt("pypi.org", allowed=True), attempt("evil.example")]
    assert len(canal._services.egress.collect(backend)) == 2
    assert canal._services.egress.collect(backend) == []
    recorded = [e for e in events(canal) if e["event"] == EVENT]
    assert [(e["data"]["host"], e["data"]["allowed"]) for e in recorded] == [  # type: ignore[index]
        ("pypi.org", True), ("evil.example", False)]
    assert recorded[0]["data"]["at"] == "2023-11-14T22:13:20.000000Z"  # type: ignore[index]
    assert all(e["actor"] == "sandbox" for e in recorded)


def test_the_cursor_survives_a_new_process(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    canal = make(tmp_path, monkeypatch, parse_config(ALLOWLIST))
    backend = canal.backend
    assert isinstance(backend, FakeBackend)
    backend.egress_log.append(attempt("evil.example"))
    canal._services.egress.collect(backend)
    fresh = Canal(canal.project_dir, config=parse_config(ALLOWLIST), backend=backend)
    backend.egress_log.append(attempt("second.example"))
    assert [a.host for a in fresh._services.egress.collect(backend)] == ["second.example"]
    assert [r.host for r in fresh.egress_log().records] == ["evil.example", "second.example"]


def test_a_command_names_what_its_sandbox_was_refused(tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    canal = make(tmp_path, monkeypatch, parse_config(ALLOWLIST))
    backend = canal.backend
    assert isinstance(backend, FakeBackend)
    canal.run("true")
    container = canal.ref().container
    backend.egress_log += [attempt("evil.example", sandbox=container),
                           attempt("leak.example", kind="dns", sandbox=container),
                           attempt("pypi.org", allowed=True, sandbox=container),
                           attempt("other.example", sandbox="canal-someone-else")]
    result = canal.run("true", say=cli_words)
    assert "egress denied: evil.example:443, leak.example (DNS) (not in sandbox.network.allow" in result.text
    assert "canal config approve" in result.text
    assert "other.example" not in result.text
    assert "egress denied" not in canal.run("true").text  # told once, recorded once
    assert [r.host for r in canal.egress_log(denied_only=True).records] == [
        "evil.example", "leak.example", "other.example"]
    assert [r.sandbox for r in canal.egress_log(sandbox="default").records] == ["default"] * 3


def test_without_an_allowlist_nothing_is_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    canal = make(tmp_path, monkeypatch, CanalConfig())
    backend = canal.backend
    assert isinstance(backend, FakeBackend)
    canal.run("true")
    backend.egress_log.append(attempt("evil.example"))
    assert "egress" not in canal.run("true").text
    assert not any(e["event"] == EVENT for e in events(canal))


def test_down_removes_the_proxy_after_recording(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    canal = make(tmp_path, monkeypatch, parse_config(ALLOWLIST))
    backend = canal.backend
    assert isinstance(backend, FakeBackend)
    canal.up()
    backend.egress_log.append(attempt("late.example"))
    assert canal.down()
    names = [e["event"] for e in events(canal)]
    assert names.index(EVENT) < names.index("egress.proxy_removed")
    assert backend.egress_states() == []


def test_footer_counts_what_it_does_not_name() -> None:
    many = [attempt(f"h{i}.example") for i in range(5)] + [attempt("h0.example")]
    (line,) = denied_footer(many, "canal-x-default")
    assert line.startswith("egress denied: h0.example:443, h1.example:443, h2.example:443, +2 more (")
    assert denied_footer([attempt("ok.example", allowed=True)], "canal-x-default") == []
