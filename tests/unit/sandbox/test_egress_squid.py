"""squid's configuration for an allowlist, and the proxy's log lines parsed into attempts."""

from __future__ import annotations

from canal.sandbox.egress import AllowEntry
from canal.sandbox.egress_squid import parse_access_line, parse_dns_line, squid_conf


def conf(*entries: object) -> list[str]:
    allow = tuple(AllowEntry.model_validate(e) for e in entries)
    return squid_conf(allow, port=3128, sandboxes="172.30.0.0/16", blocked=["172.31.0.1/32"]).splitlines()


def test_only_the_list_is_allowed_and_everything_else_denied_last() -> None:
    lines = conf("github.com:443", "*.example.org")
    assert "acl allow0_host dstdomain -n github.com" in lines
    assert "acl allow0_port port 443" in lines
    assert "acl allow1_host dstdom_regex -n -i ^([a-z0-9-]+\\.){1}example\\.org$" in lines
    assert "acl allow1_port port 80 443" in lines
    assert lines[-1] == "http_access deny all"
    assert [line for line in lines if line.startswith("http_access allow")] == [
        "http_access allow allow0_host allow0_port", "http_access allow allow1_host allow1_port"]


def test_requests_come_only_from_the_sandboxes_network() -> None:
    lines = conf("pypi.org")
    access = [line for line in lines if line.startswith("http_access")]
    assert access[0] == "http_access deny !sandboxes"
    assert "acl sandboxes src 172.30.0.0/16" in lines


def test_only_http_and_connect_pass_the_gateway() -> None:
    """squid would also fetch ftp:// or gopher:// URLs to an allowed host and port: not through Canal."""
    lines = conf("pypi.org")
    assert "acl canal_proto proto HTTP HTTPS" in lines
    assert lines.index("http_access deny !CONNECT !canal_proto") < lines.index(
        "http_access allow allow0_host allow0_port")


def test_an_allowed_name_resolving_to_the_host_or_metadata_is_refused() -> None:
    lines = conf("pypi.org")
    blocked = next(line for line in lines if line.startswith("acl canal_blocked dst "))
    for net in ("127.0.0.0/8", "169.254.0.0/16", "::1", "172.31.0.1"):
        assert net in blocked.split()
    # checked only after host and port matched: a denied name is never looked up
    deny = lines.index("http_access deny allow0_host allow0_port canal_blocked")
    assert deny < lines.index("http_access allow allow0_host allow0_port")
    assert not any(line.startswith("http_access deny canal_blocked") for line in lines)


def test_no_acl_looks_a_name_up_to_match_it() -> None:
    """``-n`` on every name ACL: matching never resolves (a lookup would carry the name outside)."""
    lines = conf("pypi.org", {"host": "10.1.2.3", "port": 443, "wide": True}, {"host": "*", "wide": True})
    names = [line for line in lines if line.startswith("acl allow") and "_host " in line]
    assert names == ["acl allow0_host dstdomain -n pypi.org", "acl allow1_host dstdomain -n 10.1.2.3",
                     "acl allow2_host dstdom_regex -n ."]


def test_denials_carry_canal_pages() -> None:
    lines = conf("pypi.org")
    assert "deny_info ERR_CANAL_DENIED all" in lines
    assert "deny_info ERR_CANAL_BLOCKED canal_blocked" in lines
    assert "error_directory /etc/squid/canal-errors" in lines


def test_access_lines_parse() -> None:
    line = "CANAL 1700000000.123 172.20.0.3 CONNECT denied.test 443 TCP_DENIED 403 120 3900"
    denied = parse_access_line(line, 1700000000.2)
    assert denied is not None
    assert (denied.kind, denied.host, denied.port, denied.allowed, denied.bytes_sent) == (
        "connect", "denied.test", 443, False, 120)
    assert denied.at == 1700000000.2
    ok = parse_access_line("CANAL 1700000000.5 172.20.0.3 GET allowed.test 8080 TCP_MISS 200 90 512", 1.0)
    assert ok is not None
    assert (ok.kind, ok.allowed, ok.bytes_received) == ("http", True, 512)
    assert ok.destination == "allowed.test:8080"
    escaped = parse_access_line("CANAL 1.0 172.20.0.3 GET a%20b.test - TCP_DENIED 403 1 2", 1.0)
    assert escaped is not None
    assert (escaped.host, escaped.port) == ("a b.test", None)
    assert parse_access_line("garbage", 1.0) is None
    assert parse_access_line("CANAL 1 2 3 4 5 6 x 8 9", 1.0) is None


def test_dns_lines_parse() -> None:
    line = "Dec  1 15:31:13 dnsmasq[10]: query[AAAA] exfil.example from 172.29.0.3"
    attempt = parse_dns_line(line, 5.0)
    assert attempt is not None
    assert (attempt.kind, attempt.method, attempt.host, attempt.client, attempt.allowed) == (
        "dns", "AAAA", "exfil.example", "172.29.0.3", False)
    assert parse_dns_line("dnsmasq[10]: config exfil.example is NXDOMAIN", 5.0) is None
    assert parse_dns_line("dnsmasq[10]: started, version 2.90", 5.0) is None
