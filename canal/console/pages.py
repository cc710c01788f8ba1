"""The console's pages (GET, read-only): login and register (anyone on loopback: they open an anonymous
session for the ceremony), and, once logged in, approvals, the audit log, sandboxes, tasks, workflow runs."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import BaseRoute, Route

from canal.console import views
from canal.console.app import Console
from canal.console.sessions import Session
from canal.core.errors import CanalError
from canal.runtime.errors import error_json

Gather = Callable[[], dict[str, Any]]


def _render(console: Console, session: Session, page: str, title: str, template: str,
            gather: Gather | None = None) -> Response:
    context: dict[str, Any] = {}
    error = None
    if gather is not None:
        try:
            context = gather()
        except CanalError as exc:
            error = error_json(exc)
    response = console.pages.render(template, title=title, page=page, project=console.project_dir.name,
                                    csrf=session.csrf, approver=session.approver, error=error,
                                    **({"rows": []} | context))
    console.set_cookie(response, session)
    return response


def _open_page(console: Console, page: str, title: str) -> Callable[[Request], Any]:
    """Login and register: any visitor gets a session (anonymous) to carry the ceremony's CSRF token."""
    async def handler(request: Request) -> Response:
        session = console.session(request) or console.sessions.open()
        return _render(console, session, page, title, page)
    return handler


def _page(console: Console, page: str, title: str, template: str,
          gather: Callable[[Console, Request], dict[str, Any]]) -> Callable[[Request], Any]:
    async def handler(request: Request) -> Response:
        session = console.session(request)
        if session is None or session.approver is None:
            return RedirectResponse("/login", status_code=303)
        return await run_in_threadpool(_render, console, session, page, title, template,
                                       lambda: gather(console, request))
    return handler


def _approvals(console: Console, request: Request) -> dict[str, Any]:
    with console.canal() as canal:
        return {"rows": views.pending_rows(canal), "checkpoint": views.latest_checkpoint(canal)}


def _audit(console: Console, request: Request) -> dict[str, Any]:
    kind = request.query_params.get("kind", "")[:100]
    q = request.query_params.get("q", "")[:200]
    with console.canal() as canal:
        found = views.audit_view(canal, kind, q)
        checkpoint = views.latest_checkpoint(canal)
    return {"report": found.report, "kinds": found.kinds, "shown": found.shown, "matched": found.matched,
            "kind": kind, "q": q, "checkpoint": checkpoint}


def _settings(console: Console, request: Request) -> dict[str, Any]:
    with console.canal() as canal:
        return {"trust": canal.settings.status().to_json()}


def _table(columns: list[str], row_class: str, empty: str,
           rows: Callable[[Any], list[list[Any]]]) -> Callable[[Console, Request], dict[str, Any]]:
    def gather(console: Console, request: Request) -> dict[str, Any]:
        with console.canal() as canal:
            found = rows(canal)
        return {"columns": columns, "row_class": row_class, "empty": empty, "rows": found}
    return gather


_sandboxes = _table(["name", "status", "image", "container", "expires"], "sandbox",
                    "No sandbox of this project exists.",
                    lambda c: [[r["name"], r["status"], r["image"], r["container"], r["expires_at"] or "-"]
                               for r in c.ps()])
_tasks = _table(["id", "name", "sandbox", "state", "exit", "time (s)", "command"], "task", "No tasks.",
                lambda c: [[s["id"], s["name"] or "-", s["sandbox"], s["state"],
                            "-" if s["exit_code"] is None else s["exit_code"], s["duration_s"], s["command"]]
                           for s in (r.summary() for r in c.tasks.list())])
_workflows = _table(["run", "workflow", "version", "status", "current step", "updated"], "workflow-run",
                    "No workflow runs.",
                    lambda c: [[r.run_id, r.workflow, r.version, r.status, r.current_step or "-",
                                r.updated_at] for r in c.workflows.runs()])


def routes(console: Console) -> list[BaseRoute]:
    from canal.console.app import guarded

    def home(request: Request) -> Response:
        return RedirectResponse("/approvals", status_code=303)

    pages = [("/login", _open_page(console, "login", "Log in")),
             ("/register", _open_page(console, "register", "Register a passkey")),
             ("/approvals", _page(console, "approvals", "Pending approvals", "approvals", _approvals)),
             ("/audit", _page(console, "audit", "Audit log", "audit", _audit)),
             ("/sandboxes", _page(console, "sandboxes", "Sandboxes", "table", _sandboxes)),
             ("/tasks", _page(console, "tasks", "Tasks", "table", _tasks)),
             ("/workflows", _page(console, "workflows", "Workflow runs", "table", _workflows)),
             ("/settings", _page(console, "settings", "Settings (canal.yaml)", "settings", _settings))]
    return [Route("/", home), *(Route(path, guarded(console, handler)) for path, handler in pages)]
