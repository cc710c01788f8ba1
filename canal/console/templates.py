"""The console's pages: Jinja2 templates in ``templates/``, rendered on the server (autoescaped), with one
static script (``static/console.js``) for the WebAuthn ceremonies.

DOM contract (the browser test and anyone scripting the console rely on it; docs/approvals.md too):

- every page: nav links ``a#nav-approvals``, ``a#nav-audit``, ``a#nav-sandboxes``, ``a#nav-tasks``,
  ``a#nav-workflows``; any error in ``#error``, whose ``code`` element holds the UPPER_SNAKE code; the
  session's CSRF token in ``meta[name=csrf]`` and in every form's ``input[name=csrf]``;
- ``/login``: ``input#approver``, ``button#login``;
- ``/register``: ``input#approver``, ``button#register``; after success ``pre#credential-line`` holds
  the line to add under the approver's ``passkeys`` in canal.yaml;
- ``/approvals``: one ``tr.pending[data-token="TOKEN"]`` per approval waiting for a decision, holding
  ``input.reason``, ``button.approve``, ``button.deny``; after a decision ``#message`` says the outcome
  (and the row loses its ``pending`` class);
- ``/audit``: ``form#audit-filter`` (``select[name=kind]``, ``input[name=q]``), ``#verify-status``
  (``ok`` or ``tampered``), ``tr.record`` per record; ``/sandboxes``, ``/tasks``, ``/workflows``: one
  ``tr.sandbox``, ``tr.task``, ``tr.workflow-run`` per row;
- ``/settings`` (nav ``a#nav-settings``): ``#settings-state`` (``approved`` or ``unapproved``), ``tr.change``
  per changed setting, and while unapproved ``button#approve-settings[data-digest]``.
"""

from __future__ import annotations

import time
from datetime import UTC, datetime
from typing import Any

from jinja2 import Environment, PackageLoader, select_autoescape
from markupsafe import Markup
from starlette.responses import HTMLResponse

from canal.core.display import visible

NAV = (("approvals", "Approvals"), ("audit", "Audit log"), ("sandboxes", "Sandboxes"), ("tasks", "Tasks"),
       ("workflows", "Workflows"), ("settings", "Settings"))


def _when(ts: float | str | None) -> str:
    if ts is None or ts == "":
        return "-"
    if isinstance(ts, str):
        return ts[:19].replace("T", " ") + "Z"
    return datetime.fromtimestamp(ts, UTC).strftime("%Y-%m-%d %H:%M:%SZ")


def _left(ts: float) -> str:
    left = max(0, int(ts - time.time()))
    return f"{left // 60}m{left % 60:02d}s"


def _shown(value: Any) -> Any:
    """Every value a page prints, with the characters that move the cursor or hide text escaped
    (markup the templates built themselves is theirs, and passes as it is)."""
    return visible(value) if isinstance(value, str) and not isinstance(value, Markup) else value


def environment() -> Environment:
    env = Environment(loader=PackageLoader("canal.console", "templates"),
                      autoescape=select_autoescape(default=True, default_for_string=True), finalize=_shown)
    env.filters["when"] = _when
    env.filters["left"] = _left
    env.globals["nav"] = NAV
    return env


class Pages:
    def __init__(self) -> None:
        self.env = environment()

    def render(self, name: str, status: int = 200, **context: Any) -> HTMLResponse:
        html = self.env.get_template(f"{name}.html").render(**context)
        return HTMLResponse(html, status_code=status)
