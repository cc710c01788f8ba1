"""The web console end to end, in a real headless chromium: an approver registers a passkey (the browser's
virtual authenticator), its line goes into canal.yaml and the approver approves that change as their own
OS user, then logs in with the passkey, approves a confirmation a real `canal run` under `approval: human`
left pending (the re-run executes), denies another with a reason (the agent's re-run reads it), and looks
at every page. Meanwhile, in the same logged-in browser, a rebound DNS name and a page of another origin
try to reach the console: refused, recorded. Real OS users, a real Canal server serving the console,
real sandboxes; a screenshot of each page is saved (CANAL_ARTIFACTS)."""

from __future__ import annotations

import http.server
import json
import re
import socket
import threading
from pathlib import Path

from browser_harness import REBOUND_HOST, Shots, wait_for
from console_team import ConsoleTeam
from selenium import webdriver
from selenium.webdriver.common.by import By
from selenium.webdriver.remote.webelement import WebElement

TOKEN = re.compile(r"c_[a-z2-7]{12}")
CONFIG = """policy: {{approval: human}}
approvals:
  approvers:
    - name: bob
      user: {approver}
{passkeys}  console: {{port: {port}}}
"""
PAGES = ("audit", "sandboxes", "tasks", "workflows")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def code_of(text: str) -> str:
    return next((line for line in text.splitlines() if re.fullmatch(r"[A-Z][A-Z_]+", line)), "")


def error_shown(browser: webdriver.Chrome) -> str:
    box = browser.find_element(By.ID, "error")
    return box.text if box.is_displayed() else ""


def body_page(browser: webdriver.Chrome) -> str:
    return str(browser.find_element(By.TAG_NAME, "body").get_attribute("data-page"))


def message_after(browser: webdriver.Chrome, what: str) -> str:
    """The #message the page shows after a decision (or the #error it shows instead: fails with it)."""
    def shown() -> str:
        problem = error_shown(browser)
        assert not problem, f"{what}: the console showed {problem}"
        box = browser.find_element(By.ID, "message")
        return box.text if box.is_displayed() else ""
    return str(wait_for(shown, timeout=20, what=what))


def pending_row(browser: webdriver.Chrome, url: str, token: str) -> WebElement:
    browser.get(url + "approvals")
    rows = browser.find_elements(By.CSS_SELECTOR, f'tr.pending[data-token="{token}"]')
    assert len(rows) == 1, f"no pending row for {token}: {browser.find_element(By.TAG_NAME, 'main').text}"
    return rows[0]


def ask(team: ConsoleTeam, folder: str) -> str:
    """A real `canal run` the policy sends to a person: it exits 120 and names its token."""
    (team.project / folder).mkdir(exist_ok=True)
    (team.project / folder).chmod(0o777)
    asked = team.agent.canal("run", "--", "rm", "-rf", folder, cwd=team.project)
    assert asked.returncode == 120, asked.stdout + asked.stderr
    found = TOKEN.search(asked.stderr)
    assert found is not None, asked.stderr
    return found.group(0)


HOSTILE = """<!doctype html><title>another site</title><pre id="out">waiting</pre><script>
fetch("http://localhost:PORT/api/decide/options", {method: "POST", credentials: "include", mode: "no-cors",
      headers: {"Content-Type": "text/plain"}, body: JSON.stringify({token: "TOKEN", decision: "approve"})})
  .then(() => { document.getElementById("out").textContent = "sent"; })
  .catch((e) => { document.getElementById("out").textContent = "blocked " + e; });
</script>"""


def attack_from_other_sites(browser: webdriver.Chrome, team: ConsoleTeam, port: int, token: str) -> None:
    """In the approver's own logged-in browser: a site whose DNS name was rebound to 127.0.0.1 opens the
    console under its name, and a page of another origin posts to the console's API. Both are refused
    with their codes and recorded; the token stays pending."""
    browser.get(f"http://{REBOUND_HOST}:{port}/approvals")
    assert "CONSOLE_HOST_REFUSED" in error_shown(browser)
    assert token not in browser.page_source

    class Hostile(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            body = HOSTILE.replace("PORT", str(port)).replace("TOKEN", token).encode()
            self.send_response(200)
            self.send_header("Content-Type", "text/html")
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            pass

    site = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Hostile)
    threading.Thread(target=site.serve_forever, daemon=True).start()
    try:
        browser.get(f"http://127.0.0.1:{site.server_address[1]}/")
        wait_for(lambda: browser.find_element(By.ID, "out").text != "waiting", what="the other site's post")
    finally:
        site.shutdown()
        site.server_close()
    refused = [r["data"] for r in audit_events(team, "console.refused")]
    codes = [r["code"] for r in refused]  # type: ignore[index]
    assert "CONSOLE_HOST_REFUSED" in codes
    assert "CONSOLE_ORIGIN_REFUSED" in codes
    pending = json.loads(team.agent.canal("approvals", "--json", cwd=team.project).stdout)["pending"]
    assert [p["status"] for p in pending if p["token"] == token] == ["pending"]


def audit_events(team: ConsoleTeam, event: str) -> list[dict[str, object]]:
    shown = team.agent.canal("audit", "show", "--json", cwd=team.project)
    assert shown.returncode == 0, shown.stderr
    return [r for r in json.loads(shown.stdout)["records"] if r["event"] == event]


def test_an_approver_registers_logs_in_and_decides_with_a_passkey(console_team: ConsoleTeam,
                                                                  browser: webdriver.Chrome,
                                                                  shots: Shots) -> None:
    team = console_team
    agent, approver, project = team.agent, team.approver, team.project
    port = free_port()
    config = project / "canal.yaml"
    config.write_text(CONFIG.format(approver=approver.name, passkeys="", port=port))
    boot = agent.canal_in_script("-C", str(project), "config", "approve", "--yes")  # the first settings
    assert boot.returncode == 0, boot.stdout

    served = agent.canal("console", "--json", cwd=project)
    assert served.returncode == 0, served.stderr
    url = json.loads(served.stdout)["url"]
    assert url == f"http://localhost:{port}/"

    # register: the virtual authenticator makes the passkey; the page shows the line for canal.yaml
    browser.get(url + "register")
    browser.find_element(By.ID, "approver").send_keys("bob")
    browser.find_element(By.ID, "register").click()
    line = str(wait_for(lambda: browser.find_element(By.ID, "credential-line").text or error_shown(browser),
                        timeout=20, what="the passkey's canal.yaml line"))
    assert re.fullmatch(r"[A-Za-z0-9_-]+:[A-Za-z0-9_-]+", line), line
    shots("register")

    # the passkey counts only once its line is in canal.yaml and an approver approved that change: bob,
    # as his own OS user (the agent cannot approve it)
    config.write_text(CONFIG.format(approver=approver.name, passkeys=f'      passkeys: ["{line}"]\n',
                                    port=port))
    self_approved = agent.canal_in_script("-C", str(project), "config", "approve", "--yes")
    assert "APPROVER_IS_AGENT" in self_approved.stdout
    by_bob = approver.canal("-C", str(project), "config", "approve", "--for", agent.name, "--yes")
    assert by_bob.returncode == 0, by_bob.stderr
    assert "as bob (os-user)" in by_bob.stdout

    # log in with the passkey
    browser.get(url + "login")
    browser.find_element(By.ID, "approver").send_keys("bob")
    shots("login")
    browser.find_element(By.ID, "login").click()
    wait_for(lambda: browser.current_url.endswith("/approvals") or error_shown(browser), timeout=20,
             what="the approvals page after logging in")
    assert not error_shown(browser)

    # approve what a real `canal run` left pending; the agent's re-run executes
    token = ask(team, "build")
    row = pending_row(browser, url, token)
    assert "rm -rf build" in row.find_element(By.CSS_SELECTOR, "code.command").text
    assert "build" in row.find_element(By.CSS_SELECTOR, "td.targets").text
    shots("approvals")
    row.find_element(By.CSS_SELECTOR, "button.approve").click()
    assert f"approved {token}" in message_after(browser, "the approval's message")
    shots("approvals-approved")
    done = agent.canal("run", "--confirm", token, "--", "rm", "-rf", "build", cwd=project)
    assert done.returncode == 0, done.stderr
    assert not (project / "build").exists()

    # deny another with a reason: the agent's re-run is refused and reads it
    denied_token = ask(team, "dist")
    attack_from_other_sites(browser, team, port, denied_token)
    row = pending_row(browser, url, denied_token)
    # the approved rm ran after a checkpoint of the workspace: the page names it
    assert browser.find_element(By.ID, "latest-checkpoint").text.startswith("cp-")
    row.find_element(By.CSS_SELECTOR, "input.reason").send_keys("dist holds the release build")
    row.find_element(By.CSS_SELECTOR, "button.deny").click()
    assert "dist holds the release build" in message_after(browser, "the denial's message")
    shots("approvals-denied")
    refused = agent.canal("run", "--confirm", denied_token, "--", "rm", "-rf", "dist", cwd=project)
    assert refused.returncode == 122, refused.stdout + refused.stderr
    assert code_of(refused.stderr) == "APPROVAL_DENIED", refused.stderr
    assert "dist holds the release build" in refused.stderr
    assert (project / "dist").is_dir()

    # the read-only pages, through the navigation (a finished background task for the tasks page)
    task = agent.canal("task", "start", "--name", "lint", "--", "echo", "lint ok", cwd=project)
    assert task.returncode == 0, task.stderr
    waited = agent.canal("task", "wait", "lint", cwd=project)
    assert waited.returncode == 0, waited.stderr
    for page in PAGES:
        browser.find_element(By.ID, f"nav-{page}").click()
        wait_for(lambda page=page: body_page(browser) == page, what=f"the {page} page")
        assert not error_shown(browser), f"{page}: {error_shown(browser)}"
        shots(page)
    browser.find_element(By.ID, "nav-audit").click()
    wait_for(lambda: "approval.denied" in browser.find_element(By.TAG_NAME, "main").text,
             what="the denial in the audit page")
    browser.find_element(By.ID, "nav-tasks").click()
    assert "echo 'lint ok'" in str(wait_for(lambda: browser.find_element(By.CSS_SELECTOR, "tr.task").text,
                                           what="the task's row"))
    browser.find_element(By.ID, "nav-sandboxes").click()
    assert "default" in str(wait_for(lambda: browser.find_element(By.TAG_NAME, "main").text,
                                     what="the sandboxes page"))

    approved = audit_events(team, "approval.approved")[-1]["data"]
    assert (approved["approver"], approved["how"]) == ("bob", "passkey")  # type: ignore[index]
    denied = audit_events(team, "approval.denied")[-1]["data"]
    assert (denied["approver"], denied["how"]) == ("bob", "passkey")  # type: ignore[index]
    assert len(shots.saved) == 9
    assert all(Path(p).stat().st_size > 5000 for p in shots.saved)
