"""Approval doors when one user runs several servers: each server's own door, and one shared door that
sends an approver to the server owning the project.

A user gets one server per identity (``CANAL_STATE_DIR``, ``DOCKER_HOST``, ``CANAL_CONFIG_DIR``, ...),
but an approver knows only the agent's user, the project and the token. So every server opens its own
door, ``@canal-approvals-<uid>-<fingerprint>``, and each tries the shared one, ``@canal-approvals-<uid>``
(or ``CANAL_APPROVAL_DOOR``): the first holds it, the others try again every few seconds, so it always
has a holder while one of the user's servers runs. The holder answers a request for a project and
token it owns; otherwise it asks the other doors of its user (found in ``/proc/net/unix``, each checked
to be held by its own uid) which one owns them, and answers with that door's address. The approver's
client then connects there itself and checks again who holds it: the decision is always taken by the
owning server from the kernel's word on the approver's uid, never forwarded.
"""

from __future__ import annotations

import logging
import os
import re
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from canal.client.door import Door, DoorHandler, door_address, knock_address, server_door, shown

log = logging.getLogger("canal.server")
RETRY_S = 3.0  # how often a server without the shared door tries to take it
TOKEN_OPS = ("show", "decide")


def owns(request: dict[str, Any]) -> bool:
    """Whether this server holds the project's state (and, for a token, that token's pending record)."""
    from canal.host.approvals.token import parse
    from canal.host.paths import state_path_for
    from canal.runtime.services import APPROVAL_PURPOSE, Services

    project = Path(str(request.get("project") or "")).resolve()
    state = state_path_for(project)
    if not project.is_dir() or not state.is_dir():  # never make state for a path we are handed
        return False
    if str(request.get("op") or "") not in TOKEN_OPS:
        return True
    try:
        token_id = parse(Services(project).keys.derive(APPROVAL_PURPOSE), str(request.get("token") or ""))
    except Exception:  # not a token of this server's keys: another server's, or a forgery
        return False
    return (state / "approvals" / f"{token_id}.json").is_file()


def listening_doors(uid: int) -> list[str]:
    """The per-server doors of ``uid`` listening on this host (abstract names, from /proc/net/unix)."""
    prefix = f"@canal-approvals-{uid}-"
    try:
        text = Path("/proc/net/unix").read_text(errors="replace")
    except OSError:
        return []
    found = {line.split()[-1] for line in text.splitlines()[1:] if line.split()[-1:] != []}
    return sorted("\0" + name[1:] for name in found if re.fullmatch(re.escape(prefix) + "[0-9a-f]{16}", name))


class Doors:
    """This server's own door and its turn at the shared one."""

    def __init__(self, fingerprint: str, handler: DoorHandler,
                 owner: Callable[[dict[str, Any]], bool] = owns) -> None:
        self.uid = os.geteuid()
        self.handler = handler
        self.owns = owner
        self.own = Door(server_door(self.uid, fingerprint), self._own)
        self.shared = Door(door_address(self.uid), self._shared)
        self.own_error = ""
        self._stop = threading.Event()

    def open(self) -> None:
        if not self.own.open():
            self.own_error = self.own.error
            log.error("approval door %s not opened: %s (the doctor command reports it)",
                      shown(self.own.address), self.own.error)
        if not self.shared.open():
            threading.Thread(target=self._take_shared, name="canal-door-retry", daemon=True).start()

    def close(self) -> None:
        self._stop.set()
        self.shared.close()
        self.own.close()

    def _take_shared(self) -> None:
        while not self._stop.wait(RETRY_S):
            if self.shared.open(quiet=True):
                return

    def _status(self) -> dict[str, Any]:
        return {"status": {"own": shown(self.own.address), "own_open": self.own.is_open,
                           "own_error": self.own_error, "shared": shown(self.shared.address),
                           "shared_held": self.shared.is_open, "pid": os.getpid()}}

    def _own(self, peer_uid: int, request: dict[str, Any]) -> dict[str, Any]:
        op = str(request.get("op") or "")
        if op == "status":
            return self._status()
        if op == "owns":
            return {"owns": peer_uid == self.uid and self.owns(request.get("request") or {})}
        return self.handler(peer_uid, request)

    def _shared(self, peer_uid: int, request: dict[str, Any]) -> dict[str, Any]:
        if str(request.get("op") or "") == "status":
            return self._status()
        if self.owns(request):
            return self.handler(peer_uid, request)
        for address in listening_doors(self.uid):
            if address == self.own.address:
                continue
            try:
                answer = knock_address(address, self.uid, {"op": "owns", "request": request}, timeout_s=5.0)
            except (OSError, ValueError) as exc:
                log.info("approval door %s did not answer: %s", shown(address), exc)
                continue
            if answer.get("owns") is True:
                return {"redirect": shown(address)}
        return self.handler(peer_uid, request)  # nobody owns it: refused here, with the reason
