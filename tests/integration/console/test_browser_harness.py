"""The browser harness itself: the headless chromium starts, its virtual authenticator makes a passkey
and signs in with it (user verified), and a screenshot is saved. A tiny page on loopback stands in for
the console, so a broken harness shows here and not as a console failure."""

from __future__ import annotations

import base64
import http.server
import threading
from collections.abc import Iterator

import pytest
from browser_harness import Shots, wait_for
from selenium import webdriver
from selenium.webdriver.common.by import By

PAGE = b"""<!doctype html><title>passkey check</title><pre id="out">waiting</pre><script>
const b64 = (buf) => btoa(String.fromCharCode(...new Uint8Array(buf)));
(async () => {
  try {
    const made = await navigator.credentials.create({publicKey: {
      challenge: crypto.getRandomValues(new Uint8Array(32)), rp: {name: "canal", id: "localhost"},
      user: {id: new Uint8Array([1, 2, 3, 4]), name: "alice", displayName: "alice"},
      pubKeyCredParams: [{type: "public-key", alg: -7}],
      authenticatorSelection: {residentKey: "required", userVerification: "required"}}});
    const got = await navigator.credentials.get({publicKey: {
      challenge: crypto.getRandomValues(new Uint8Array(32)), rpId: "localhost",
      userVerification: "required"}});
    const flags = new Uint8Array(got.response.authenticatorData)[32];
    document.getElementById("out").textContent = JSON.stringify({made: b64(made.rawId), got: b64(got.rawId),
      user: new TextDecoder().decode(got.response.userHandle), uv: (flags & 4) === 4});
  } catch (e) { document.getElementById("out").textContent = "error " + e; }
})();
</script>"""


class _Page(http.server.BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/html")
        self.end_headers()
        self.wfile.write(PAGE)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def page_url() -> Iterator[str]:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Page)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://localhost:{server.server_address[1]}/"  # localhost: a secure context for WebAuthn
    finally:
        server.shutdown()
        server.server_close()


def test_virtual_authenticator_makes_and_uses_a_passkey(browser: webdriver.Chrome, shots: Shots,
                                                        page_url: str) -> None:
    import json

    browser.get(page_url)
    out = browser.find_element(By.ID, "out")
    wait_for(lambda: out.text != "waiting", what="the passkey page")
    assert not out.text.startswith("error"), out.text
    answer = json.loads(out.text)
    assert answer["made"] == answer["got"]
    assert answer["uv"] is True
    assert answer["user"] == "\x01\x02\x03\x04"
    held = browser.get_credentials()
    assert len(held) == 1
    assert held[0].is_resident_credential
    assert base64.urlsafe_b64decode(held[0].id) == base64.b64decode(answer["made"])
    saved = shots("harness-passkey-check")
    assert saved.read_bytes().startswith(b"\x89PNG")
