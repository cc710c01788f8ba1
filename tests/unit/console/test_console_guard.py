"""Every console request passes the guard: loopback peer, Host (DNS rebinding), Origin on POSTs; every
POST needs a live session and its CSRF token. Each refusal has its code, is shown in #error and audited."""

from __future__ import annotations

import socket
from pathlib import Path

from console_helpers import ORIGIN, PORT, Setup, csrf_of, post

from canal.console.errors import CONSOLE_PORT_BUSY
from canal.console.runner import ConsoleServer
from canal.console.sessions import MAX_SESSIONS, Sessions
from tests.error_codes import raises_code


def error_code(html: str) -> str:
    start = html.index('<div id="error"')
    return html[html.index("<code>", start) + 6:html.index("</code>", start)]


def test_a_peer_that_is_not_loopback_is_refused_and_audited(setup: Setup) -> None:
    page = setup.client(peer="192.0.2.7").get("/login")
    assert page.status_code == 403
    assert error_code(page.text) == "CONSOLE_PEER_REFUSED"
    assert setup.refusals()[-1]["code"] == "CONSOLE_PEER_REFUSED"
    assert setup.refusals()[-1]["peer"] == "192.0.2.7"


def test_a_foreign_host_header_is_refused_dns_rebinding(setup: Setup) -> None:
    page = setup.client().get("/login", headers={"host": f"attacker.example:{PORT}"})
    assert page.status_code == 421
    assert error_code(page.text) == "CONSOLE_HOST_REFUSED"
    assert setup.refusals()[-1]["code"] == "CONSOLE_HOST_REFUSED"
    other_port = setup.client().get("/login", headers={"host": "localhost:9"})
    assert other_port.status_code == 421


def test_127_0_0_1_is_sent_on_to_localhost_the_origin_webauthn_accepts(setup: Setup) -> None:
    page = setup.client().get("/approvals", headers={"host": f"127.0.0.1:{PORT}"})
    assert page.status_code == 303
    assert page.headers["location"] == f"{ORIGIN}/approvals"


def test_a_post_with_a_foreign_or_no_origin_is_refused(setup: Setup) -> None:
    client = setup.client()
    csrf = csrf_of(client.get("/login").text)
    foreign = post(client, "/api/login/options", {"approver": "alice"}, csrf, origin="http://evil.example")
    assert foreign.status_code == 403
    assert foreign.json()["error"]["code"] == "CONSOLE_ORIGIN_REFUSED"
    none = post(client, "/api/login/options", {"approver": "alice"}, csrf, origin=None)
    assert none.json()["error"]["code"] == "CONSOLE_ORIGIN_REFUSED"
    assert [r["code"] for r in setup.refusals()] == ["CONSOLE_ORIGIN_REFUSED"] * 2


def test_a_post_without_a_session_is_refused_and_audited(setup: Setup) -> None:
    client = setup.client()
    answer = post(client, "/api/login/options", {"approver": "alice"}, "made-up")
    assert answer.status_code == 401
    assert answer.json()["error"]["code"] == "CONSOLE_SESSION_MISSING"
    client.cookies.set(setup.console.cookie, "guessed-session-id")
    guessed = post(client, "/api/login/options", {"approver": "alice"}, "made-up")
    assert guessed.json()["error"]["code"] == "CONSOLE_SESSION_MISSING"
    assert [r["code"] for r in setup.refusals()] == ["CONSOLE_SESSION_MISSING"] * 2


def test_a_post_with_a_wrong_or_missing_csrf_token_is_refused_and_audited(setup: Setup) -> None:
    client = setup.client()
    csrf = csrf_of(client.get("/login").text)
    wrong = post(client, "/api/login/options", {"approver": "alice"}, csrf[:-2] + "xx")
    assert wrong.status_code == 403
    assert wrong.json()["error"]["code"] == "CONSOLE_CSRF_INVALID"
    missing = post(client, "/api/login/options", {"approver": "alice"}, None)
    assert missing.json()["error"]["code"] == "CONSOLE_CSRF_INVALID"
    form = client.post("/logout", data={"csrf": "nope"}, headers={"origin": ORIGIN})
    assert "CONSOLE_CSRF_INVALID" in form.text
    assert [r["code"] for r in setup.refusals()] == ["CONSOLE_CSRF_INVALID"] * 3


def test_deciding_needs_a_logged_in_session_not_just_any(setup: Setup) -> None:
    client = setup.client()
    csrf = csrf_of(client.get("/login").text)  # anonymous session
    token = setup.pending()
    answer = post(client, "/api/decide/options", {"token": token, "decision": "approve"}, csrf)
    assert answer.json()["error"]["code"] == "CONSOLE_SESSION_MISSING"


def test_the_session_cookie_is_httponly_samesite_strict_and_pages_are_not_framed(setup: Setup) -> None:
    page = setup.client().get("/login")
    cookie = page.headers["set-cookie"]
    assert cookie.startswith(f"{setup.console.cookie}=")
    assert "HttpOnly" in cookie
    assert "SameSite=strict" in cookie or "SameSite=Strict" in cookie
    assert "frame-ancestors 'none'" in page.headers["content-security-policy"]
    assert "script-src 'self'" in page.headers["content-security-policy"]
    assert page.headers["cache-control"] == "no-store"


def test_pages_other_than_login_and_register_need_a_login(setup: Setup) -> None:
    client = setup.client()
    for page in ("/approvals", "/audit", "/sandboxes", "/tasks", "/workflows"):
        answer = client.get(page)
        assert answer.status_code == 303, page
        assert answer.headers["location"] == "/login"


def test_sessions_expire_and_challenges_count_once() -> None:
    now = [1000.0]
    sessions = Sessions(60, clock=lambda: now[0])
    session = sessions.open()
    assert sessions.get(session.id) is session
    assert session.csrf_ok(session.csrf)
    assert not session.csrf_ok(session.csrf + "x")
    assert not session.csrf_ok(None)
    now[0] += 61
    assert sessions.get(session.id) is None
    fresh = sessions.open()
    logged = sessions.log_in(fresh, "alice")
    assert sessions.get(fresh.id) is None  # logging in makes a new id: the old one is worth nothing
    assert logged.csrf != fresh.csrf
    assert sessions.any_logged_in()


def test_a_flood_of_anonymous_sessions_does_not_log_the_approver_out() -> None:
    sessions = Sessions(600)
    approver = sessions.log_in(sessions.open(), "alice")
    for _ in range(MAX_SESSIONS * 2):
        sessions.open()
    assert sessions.get(approver.id) is approver


def test_a_taken_port_is_one_clear_error() -> None:
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen(1)
        port = holder.getsockname()[1]
        with raises_code(CONSOLE_PORT_BUSY) as busy:
            ConsoleServer(Path("/nonexistent"), port, 600)
    assert busy.value.code == "CONSOLE_PORT_BUSY"
    assert str(port) in busy.value.message


def test_a_flood_of_refused_requests_is_recorded_within_a_budget(setup: Setup) -> None:
    from canal.console.app import RefusalBudget

    now = [0.0]
    setup.console.budget = RefusalBudget(limit=3, window_s=60, clock=lambda: now[0])
    client = setup.client()
    for _ in range(10):
        assert client.get("/login", headers={"host": "rebind.example"}).status_code == 421  # still refused
    assert len(setup.refusals()) == 3
    now[0] += 61
    client.get("/login", headers={"host": "rebind.example"})
    assert setup.refusals()[-1]["suppressed"] == 7
