"""Passkeys in the console, with a software authenticator: register shows the line (and trusts nothing),
login needs a credential in canal.yaml, each decision is a fresh assertion bound to the token, decision,
command digest and reason, whose evidence verifies off the host; replays and strangers are refused."""

from __future__ import annotations

import json
import re

from console_helpers import ORIGIN, Setup, approve_settings, csrf_of, login, post, settings_text
from webauthn_soft import SoftAuthenticator

from canal.host.approvals import APPROVAL_DENIED, Approver
from canal.host.approvals.errors import PASSKEY_INVALID
from canal.host.approvals.passkey import verify_evidence
from tests.error_codes import raises_code


def test_register_shows_the_line_to_add_and_trusts_nothing_by_itself(setup: Setup) -> None:
    client = setup.client()
    page = client.get("/register")
    assert 'id="approver"' in page.text
    assert 'id="register"' in page.text
    assert 'id="credential-line"' in page.text
    csrf = csrf_of(page.text)
    options = post(client, "/api/register/options", {"approver": "bob"}, csrf)
    assert options.status_code == 200, options.text
    assert options.json()["publicKey"]["authenticatorSelection"]["userVerification"] == "required"
    newcomer = SoftAuthenticator(ORIGIN)
    done = post(client, "/api/register/verify", {"credential": newcomer.create(options.json())}, csrf)
    assert done.status_code == 200, done.text
    assert done.json()["line"] == newcomer.line()
    assert newcomer.line() in done.json()["yaml"]
    assert "config approve" in done.json()["next"]
    # bob has no passkey in canal.yaml yet: logging in with the new one is refused
    other = setup.client()
    csrf2 = csrf_of(other.get("/login").text)
    refused = post(other, "/api/login/options", {"approver": "bob"}, csrf2)
    assert refused.json()["error"]["code"] == "APPROVER_UNKNOWN"
    assert setup.refusals()[-1]["code"] == "APPROVER_UNKNOWN"


def test_register_is_only_for_an_approver_in_canal_yaml(setup: Setup) -> None:
    client = setup.client()
    csrf = csrf_of(client.get("/register").text)
    answer = post(client, "/api/register/options", {"approver": "mallory"}, csrf)
    assert answer.json()["error"]["code"] == "APPROVER_UNKNOWN"


def test_login_with_a_passkey_in_canal_yaml_makes_a_new_session(setup: Setup) -> None:
    client = setup.client()
    csrf = csrf_of(client.get("/login").text)
    anonymous = client.cookies.get(setup.console.cookie)
    logged_csrf = login(setup, client)
    assert logged_csrf != csrf
    assert client.cookies.get(setup.console.cookie) != anonymous
    page = client.get("/approvals")
    assert page.status_code == 200
    for nav in ("approvals", "audit", "sandboxes", "tasks", "workflows"):
        assert f'id="nav-{nav}"' in page.text
    assert [r["approver"] for r in setup.refusals("console.login")] == ["alice"]


def test_a_credential_not_in_canal_yaml_is_refused_and_audited(setup: Setup) -> None:
    client = setup.client()
    csrf = csrf_of(client.get("/login").text)
    options = post(client, "/api/login/options", {"approver": "alice"}, csrf)
    stranger = SoftAuthenticator(ORIGIN)
    signed = stranger.get({"publicKey": {**options.json()["publicKey"], "allowCredentials": []}})
    answer = post(client, "/api/login/verify", {"credential": signed}, csrf)
    assert answer.status_code == 400
    assert answer.json()["error"]["code"] == "PASSKEY_UNKNOWN"
    assert setup.refusals()[-1]["code"] == "PASSKEY_UNKNOWN"
    assert client.get("/approvals").status_code == 303  # still not logged in


def test_an_assertion_for_another_origin_or_without_user_verification_is_refused(setup: Setup) -> None:
    client = setup.client()
    csrf = csrf_of(client.get("/login").text)
    options = post(client, "/api/login/options", {"approver": "alice"}, csrf)
    phished = setup.alice.get(options.json(), origin="http://localhost.attacker.example")
    assert post(client, "/api/login/verify", {"credential": phished}, csrf).json()["error"]["code"] \
        == "PASSKEY_INVALID"
    options = post(client, "/api/login/options", {"approver": "alice"}, csrf)
    setup.alice.user_verified = False
    unverified = setup.alice.get(options.json())
    assert post(client, "/api/login/verify", {"credential": unverified}, csrf).json()["error"]["code"] \
        == "PASSKEY_INVALID"


def test_approvals_page_lists_pending_with_rule_reason_targets(setup: Setup) -> None:
    client = setup.client()
    login(setup, client)
    token = setup.pending("rm -rf build")
    page = client.get("/approvals").text
    row = re.search(rf'<tr class="pending" data-token="{token}">(.*?)</tr>', page, re.S)
    assert row is not None, page
    for part in ('class="reason"', 'class="approve"', 'class="deny"', "rm -rf build", "rm-recursive",
                 "deletes a folder", "/workspace/build"):
        assert part in row.group(1), part


def decide(setup: Setup, client: object, csrf: str, token: str, decision: str, reason: str = "") -> tuple:
    options = post(client, "/api/decide/options", {"token": token, "decision": decision, "reason": reason},
                   csrf)
    assert options.status_code == 200, options.text
    signed = setup.alice.get(options.json())
    return options.json(), signed, post(client, "/api/decide/verify", {"credential": signed}, csrf)


def test_approve_is_a_fresh_assertion_bound_to_the_decision_and_verifies_off_host(setup: Setup) -> None:
    client = setup.client()
    csrf = login(setup, client)
    token = setup.pending()
    options, _signed, answer = decide(setup, client, csrf, token, "approve")
    assert answer.status_code == 200, answer.text
    assert answer.json()["pending"]["status"] == "approved"
    assert answer.json()["pending"]["approved_by"] == "alice (passkey)"
    message = options["message"]
    assert f"token {token}\n" in message
    assert "decision approve\n" in message
    assert "command-sha256 " in message
    record = [json.loads(line) for line in setup.services().audit.path.read_text().splitlines()
              if '"event":"approval.approved"' in line][-1]
    evidence = record["data"]["evidence"]
    assert record["data"]["how"] == "passkey"
    assert evidence["message"] == message
    verify_evidence(evidence, setup.alice.line().split(":")[1])  # the public key alone: off the host
    forged = {**evidence, "message": message.replace("decision approve", "decision deny")}
    with raises_code(PASSKEY_INVALID):
        verify_evidence(forged, setup.alice.line().split(":")[1])
    done = setup.services().approvals.redeem(token, "rm -rf build", "default", "/workspace", "p1")
    assert done.approver == "alice"
    assert done.how == "passkey"


def test_a_replayed_assertion_is_refused_and_audited(setup: Setup) -> None:
    client = setup.client()
    csrf = login(setup, client)
    token = setup.pending()
    _options, signed, first = decide(setup, client, csrf, token, "approve")
    assert first.status_code == 200
    again = post(client, "/api/decide/verify", {"credential": signed}, csrf)
    assert again.json()["error"]["code"] == "PASSKEY_REPLAYED"
    refused = setup.refusals("approval.refused")[-1]
    assert refused["code"] == "PASSKEY_REPLAYED"
    assert refused["method"] == "passkey"


def test_an_assertion_over_another_decision_is_refused(setup: Setup) -> None:
    """The challenge binds the decision: a signature over 'approve' cannot carry a 'deny', nor another
    token (each options call hands out its own challenge, and verify takes the one it names)."""
    client = setup.client()
    csrf = login(setup, client)
    first, second = setup.pending(), setup.pending("rm -rf dist")
    approve_options = post(client, "/api/decide/options", {"token": first, "decision": "approve"}, csrf)
    post(client, "/api/decide/options", {"token": second, "decision": "approve"}, csrf)
    signed = setup.alice.get(approve_options.json())
    done = post(client, "/api/decide/verify", {"credential": signed}, csrf)
    assert done.json()["pending"]["token"] == first  # the one its challenge named, nothing else
    assert setup.services().approvals.show(second).status == "pending"


def test_deny_with_a_reason_the_agent_reads(setup: Setup) -> None:
    client = setup.client()
    csrf = login(setup, client)
    token = setup.pending()
    options, _signed, answer = decide(setup, client, csrf, token, "deny", "build/ holds the release")
    assert answer.json()["pending"]["status"] == "denied"
    assert "build/ holds the release" in answer.json()["message"]
    assert "reason-sha256 " in options["message"]
    with raises_code(APPROVAL_DENIED) as denied:
        setup.services().approvals.redeem(token, "rm -rf build", "default", "/workspace", "p1")
    assert "build/ holds the release" in denied.value.message


def test_a_removed_passkey_no_longer_decides(setup: Setup) -> None:
    client = setup.client()
    csrf = login(setup, client)
    token = setup.pending()
    options = post(client, "/api/decide/options", {"token": token, "decision": "approve"}, csrf)
    other = SoftAuthenticator(ORIGIN)
    approve_settings(setup.project, settings_text(other.line()), Approver(user="bob", how="ssh"))
    answer = post(client, "/api/decide/verify", {"credential": setup.alice.get(options.json())}, csrf)
    assert answer.json()["error"]["code"] == "PASSKEY_UNKNOWN"
    assert setup.services().approvals.show(token).status == "pending"


def test_another_approvers_passkey_cannot_sign_in_alices_session(setup: Setup) -> None:
    client = setup.client()
    csrf = login(setup, client)
    bob = SoftAuthenticator(ORIGIN)
    text = settings_text(setup.alice.line()).replace(
        "    - {name: bob,", f"    - {{name: bob, passkeys: ['{bob.line()}'],")
    approve_settings(setup.project, text, Approver(user="bob", how="ssh"))
    token = setup.pending()
    options = post(client, "/api/decide/options", {"token": token, "decision": "approve"}, csrf)
    signed = bob.get({"publicKey": {**options.json()["publicKey"], "allowCredentials": []}})
    answer = post(client, "/api/decide/verify", {"credential": signed}, csrf)
    assert answer.json()["error"]["code"] == "PASSKEY_UNKNOWN"
    assert setup.services().approvals.show(token).status == "pending"


def test_the_agent_is_told_an_approver_can_decide_in_the_console(setup: Setup) -> None:
    from canal.host.approvals.verify import approve_ways
    from canal.runtime.run.commands import ways_text

    ways = approve_ways(str(setup.project), setup.services().config.approvals)
    said = ways_text("c_aaaaaaaabbbb", ways)
    assert f"http://localhost:{setup.console.port}/approvals" in said
    assert "--ssh-key KEY" in said  # bob's way too


def test_log_out_ends_the_session(setup: Setup) -> None:
    client = setup.client()
    csrf = login(setup, client)
    done = client.post("/logout", data={"csrf": csrf}, headers={"origin": ORIGIN})
    assert done.status_code == 303
    assert done.headers["location"] == "/login"
    assert client.get("/approvals").status_code == 303  # the cookie names no session any more
    assert not setup.console.sessions.any_logged_in()


def test_an_unapproved_edit_of_canal_yaml_does_not_lock_the_approver_out(setup: Setup) -> None:
    """Who may log in are the approvers of the settings approved last (never the new content's): an
    edit waiting for approval leaves login and the audit page working; pages that need the settings in
    force say CONFIG_UNAPPROVED."""
    client = setup.client()
    text = (setup.project / "canal.yaml").read_text()
    (setup.project / "canal.yaml").write_text(text.replace("approval: human", "approval: agent"))
    login(setup, client)
    assert client.get("/audit").status_code == 200
    assert "<code>CONFIG_UNAPPROVED</code>" in client.get("/approvals").text
    mallory = SoftAuthenticator(ORIGIN)  # named in the new content only: not an approver yet
    (setup.project / "canal.yaml").write_text(settings_text(mallory.line()))
    other = setup.client()
    csrf = csrf_of(other.get("/login").text)
    options = post(other, "/api/login/options", {"approver": "alice"}, csrf)
    signed = mallory.get({"publicKey": {**options.json()["publicKey"], "allowCredentials": []}})
    assert post(other, "/api/login/verify", {"credential": signed}, csrf).json()["error"]["code"] \
        == "PASSKEY_UNKNOWN"


def test_a_new_approver_in_an_edit_waiting_for_approval_can_register_not_log_in(setup: Setup) -> None:
    text = (setup.project / "canal.yaml").read_text() + "    - {name: carol, user: nobody}\n"
    (setup.project / "canal.yaml").write_text(text)
    client = setup.client()
    csrf = csrf_of(client.get("/register").text)
    assert post(client, "/api/register/options", {"approver": "carol"}, csrf).status_code == 200
    assert post(client, "/api/login/options", {"approver": "carol"}, csrf).json()["error"]["code"] \
        == "APPROVER_UNKNOWN"


def test_an_approver_approves_changed_settings_with_a_passkey(setup: Setup) -> None:
    """A passkey-only approver can approve a change of canal.yaml (here: their second passkey); the
    assertion is over the text an SSH approver would sign for that digest; replaying it is refused."""
    client = setup.client()
    csrf = login(setup, client)
    laptop = SoftAuthenticator(ORIGIN)
    (setup.project / "canal.yaml").write_text(settings_text(setup.alice.line(), laptop.line()))
    page = client.get("/settings").text
    assert '<strong id="settings-state">unapproved</strong>' in page
    digest = re.search(r'id="approve-settings" data-digest="([^"]+)"', page).group(1)  # type: ignore[union-attr]
    options = post(client, "/api/config/options", {"digest": digest}, csrf)
    assert "decision approve-config\n" in options.json()["message"]
    assert f"digest {digest}\n" in options.json()["message"]
    signed = setup.alice.get(options.json())
    done = post(client, "/api/config/verify", {"credential": signed}, csrf)
    assert done.status_code == 200, done.text
    assert (done.json()["approved_by"], done.json()["how"]) == ("alice", "passkey")
    assert setup.services().trust.status().state == "approved"
    record = setup.refusals("config.approve")[-1]
    verify_evidence(record["evidence"], setup.alice.line().split(":")[1])
    again = post(client, "/api/config/verify", {"credential": signed}, csrf)
    assert again.json()["error"]["code"] == "PASSKEY_REPLAYED"
    assert setup.refusals("config.refused")[-1]["code"] == "PASSKEY_REPLAYED"
    assert '<strong id="settings-state">approved</strong>' in client.get("/settings").text
