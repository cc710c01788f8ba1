"""The egress allowlist with real containers, through the whole pipeline: what an allowlist sandbox can
reach, what it is refused, what it is told, and what the audit log records."""

from __future__ import annotations

import time

from egress_world import ALLOWED, CONFIG, DENIED, INDEX, PORT, World

from canal.runtime.admin.doctor import check_egress
from canal.runtime.api import Canal
from canal.runtime.sandboxes.egress import EgressRecord
from canal.runtime.settings.config import parse_config

# the test process's own pip, as a zip in the workspace: the sandbox image has Python but no pip
PIP = "python3 /workspace/pip.pyz install --no-cache-dir --disable-pip-version-check"


def attempts(world: World, host: str, *, allowed: bool | None = None) -> list[EgressRecord]:
    found = world.canal.egress_log(limit=1000).records
    return [r for r in found if r.host == host and (allowed is None or r.allowed is allowed)]


def test_an_allowed_name_answers_through_the_proxy_and_is_audited(world: World) -> None:
    result = world.run(f"curl -sf http://{ALLOWED}:{PORT}/hostname")
    assert result.exit_code == 0, result.text
    assert result.output.strip() == "canal-egress-test-server"
    assert "egress denied" not in result.text
    seen = attempts(world, ALLOWED, allowed=True)
    assert seen
    assert (seen[-1].port, seen[-1].kind, seen[-1].sandbox) == (PORT, "http", "default")
    assert seen[-1].bytes_received > 0
    assert seen[-1].bytes_sent > 0


def test_a_denied_name_is_refused_told_and_audited(world: World) -> None:
    result = world.run(f"curl -s http://{DENIED}:{PORT}/hostname")
    # what the tool shows: the proxy's page names the host and the setting to change
    assert f"CANAL_EGRESS_DENIED: {DENIED}:{PORT} is not in this sandbox's egress allowlist" in result.output
    assert "sandbox.network.allow" in result.output
    assert "canal-egress-test-server" not in result.output
    # what Canal adds, whatever the tool shows: the footer
    assert f"egress denied: {DENIED}:{PORT}" in result.text
    assert "sandbox.network.allow" in result.text
    assert attempts(world, DENIED, allowed=False)


def test_a_port_not_allowed_is_refused_by_connect(world: World) -> None:
    result = world.run(f"curl -sfp http://{ALLOWED}:8081/")
    assert result.exit_code in (22, 56), result.text  # CONNECT refused by the proxy (403)
    assert f"egress denied: {ALLOWED}:8081" in result.text
    refused = attempts(world, ALLOWED, allowed=False)
    assert any(r.kind == "connect" and r.method == "CONNECT" and r.port == 8081 for r in refused)
    assert world.run(f"curl -sfp http://{ALLOWED}:{PORT}/hostname").exit_code == 0


def test_a_host_header_cannot_borrow_an_allowed_name(world: World) -> None:
    result = world.run(f"curl -sf -H 'Host: {ALLOWED}:{PORT}' http://{DENIED}:{PORT}/hostname")
    assert result.exit_code == 22, result.text
    assert "canal-egress-test-server" not in result.output
    assert attempts(world, DENIED, allowed=False)


def test_a_dns_lookup_fails_at_once_and_is_audited(world: World) -> None:
    started = time.monotonic()
    result = world.run("getent hosts exfil-secret.example; echo rc=$?")
    assert "rc=2" in result.output, result.text  # not found: nothing answers names
    assert time.monotonic() - started < 5  # refused at once, not a resolver timeout
    assert "exfil-secret.example (DNS)" in result.text
    lookups = attempts(world, "exfil-secret.example", allowed=False)
    assert {r.kind for r in lookups} == {"dns"}
    assert {r.method for r in lookups} >= {"A"}


def test_a_direct_ip_and_ipv6_fail_fast_with_no_route(world: World) -> None:
    """They never reach the proxy, so no audit record: docs/egress.md names the gap."""
    started = time.monotonic()
    direct = world.run(f"curl -sf --noproxy '*' -m 5 http://{world.server_ip}:{PORT}/hostname")
    assert direct.exit_code == 7, direct.text  # no route to host: the internal network has no way out
    ipv6 = world.run("curl -sf --noproxy '*' -m 5 'http://[2001:db8::1]:80/'")
    assert ipv6.exit_code == 7, ipv6.text
    address = f"('{world.server_ip}', {PORT})"
    python = world.run(f"python3 -c \"import socket; socket.create_connection({address}, 5)\"")
    assert python.exit_code == 1
    assert "No route to host" in python.text or "unreachable" in python.text
    assert time.monotonic() - started < 10
    assert "canal-egress-test-server" not in direct.output


def test_pip_installs_from_a_package_index_on_an_allowed_name(world: World) -> None:
    result = world.run(f"{PIP} --target /tmp/site --index-url http://{INDEX}:{PORT}/simple/ "
                       f"--trusted-host {INDEX} tinypkg "
                       "&& PYTHONPATH=/tmp/site python3 -c 'import tinypkg; print(tinypkg.ANSWER)'")
    assert result.exit_code == 0, result.text
    assert result.output.strip().splitlines()[-1] == "42"
    fetched = attempts(world, INDEX, allowed=True)
    assert fetched
    assert sum(r.bytes_received for r in fetched) > 500


def test_doctor_reports_the_running_proxy(world: World) -> None:
    check = check_egress(world.project)
    assert check.ok, check
    assert f"{ALLOWED}:{PORT}" in check.detail
    assert "running, 1 sandbox(es)" in check.detail


def test_the_audit_chain_holds_the_attempts(world: World) -> None:
    from canal.host.audit import verify_log

    services = world.canal._services
    keys = services.keys
    from canal.runtime.services import AUDIT_PURPOSE

    report = verify_log(services.audit.path, keys.derive(AUDIT_PURPOSE), keys.primary_id,
                        earlier_keys=keys.derive_all(AUDIT_PURPOSE), project_id=services.project_id)
    assert report.problem is None
    assert world.canal.egress_log(denied_only=True).records
    assert all(not r.allowed for r in world.canal.egress_log(denied_only=True).records)


def test_an_allowlist_sandbox_has_the_same_way_out_under_each_runtime(world: World, runtime: str) -> None:
    config = parse_config(CONFIG.replace("sandbox:\n", f"sandbox:\n  runtime: {runtime}\n"))
    name = f"rt-{runtime}"
    with Canal(world.project, config=config, sandbox=name) as canal:
        try:
            kernel = canal.run("dmesg 2>/dev/null | head -3", timeout_s=60)
            assert ("gVisor" in kernel.output) is (runtime == "runsc"), kernel.text
            allowed = canal.run(f"curl -sf http://{ALLOWED}:{PORT}/hostname", timeout_s=60)
            assert allowed.output.strip() == "canal-egress-test-server", allowed.text
            denied = canal.run(f"curl -s http://{DENIED}:{PORT}/hostname", timeout_s=60)
            assert f"CANAL_EGRESS_DENIED: {DENIED}:{PORT}" in denied.output
            assert f"egress denied: {DENIED}:{PORT}" in denied.text
            lookup = canal.run(f"getent hosts {name}-lookup.example; echo rc=$?", timeout_s=60)
            assert "rc=2" in lookup.output
            direct = canal.run(f"curl -sf --noproxy '*' -m 3 http://{world.server_ip}:{PORT}/", timeout_s=60)
            assert direct.exit_code in (7, 28), direct.text  # no route (gVisor waits for the ARP answer)
            mine = canal.egress_log(sandbox=name).records
            assert {(r.host, r.allowed) for r in mine} >= {(ALLOWED, True), (DENIED, False),
                                                          (f"{name}-lookup.example", False)}
        finally:
            canal.down()
