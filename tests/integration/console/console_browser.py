"""A small HTTP client for the console tests (standard library): keeps the session cookie, sends the
Origin and CSRF token the console's own page would, and lets a test send what a browser would not."""

from __future__ import annotations

import http.client
import json
import re
from dataclasses import dataclass, field
from typing import Any

CSRF = re.compile(r'<meta name="csrf" content="([^"]*)">')


@dataclass
class Answer:
    status: int
    headers: dict[str, str]
    text: str

    def json(self) -> Any:
        return json.loads(self.text)

    def code(self) -> str:
        """The refusal's code: from a JSON error, or the page's #error."""
        if self.text.startswith("{"):
            return str(self.json().get("error", {}).get("code", ""))
        found = re.search(r'<div id="error"[^>]*><code>([A-Z_]+)</code>', self.text)
        return found.group(1) if found else ""


@dataclass
class Browser:
    port: int
    cookies: dict[str, str] = field(default_factory=dict)
    csrf: str = ""

    @property
    def origin(self) -> str:
        return f"http://localhost:{self.port}"

    def request(self, method: str, path: str, body: dict[str, Any] | None = None, *,
                headers: dict[str, str] | None = None, host: str | None = None) -> Answer:
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
        sent = {"Host": host or f"localhost:{self.port}"}
        if self.cookies:
            sent["Cookie"] = "; ".join(f"{k}={v}" for k, v in self.cookies.items())
        data = None
        if body is not None:
            data = json.dumps(body).encode()
            sent.update({"Content-Type": "application/json", "Origin": self.origin,
                         "X-CSRF-Token": self.csrf})
        sent.update(headers or {})
        try:
            conn.request(method, path, body=data, headers=sent)
            response = conn.getresponse()
            text = response.read().decode()
            for name, value in response.getheaders():
                if name.lower() == "set-cookie":
                    key, _, rest = value.partition("=")
                    self.cookies[key] = rest.split(";")[0]
            answer = Answer(response.status, {k.lower(): v for k, v in response.getheaders()}, text)
        finally:
            conn.close()
        found = CSRF.search(answer.text)
        if found and found.group(1):
            self.csrf = found.group(1)
        return answer

    def get(self, path: str, **kwargs: Any) -> Answer:
        return self.request("GET", path, **kwargs)

    def post(self, path: str, body: dict[str, Any], **kwargs: Any) -> Answer:
        return self.request("POST", path, body, **kwargs)
