"""``canal doctor``'s word on the approval doors: can an approver reach this server?

A door that cannot be opened is a failed check with its fix, not a line in the server's log. Asked
through the doors themselves (``status``), each checked to be held by this user.
"""

from __future__ import annotations

import os
from typing import Any

from canal.client.door import door_address, knock_address, server_door, shown
from canal.client.paths import server_paths
from canal.core.next import NextAction, act

# (ok, what was found, the fix in words, the commands that fix it)
DoorVerdict = tuple[bool, str, str, tuple[NextAction, ...]]


def door_verdict() -> DoorVerdict:
    if os.environ.get("CANAL_NO_SERVER"):
        return True, ("in-process (CANAL_NO_SERVER): no server, no approval door; an approver by OS user "
                      "reaches the server canal starts without it"), "", ()
    uid = os.geteuid()
    paths = server_paths()
    own = server_door(uid, paths.name.removeprefix("server-"))
    seen, problem = _status(own, uid)
    if problem:
        return False, f"this server's approval door {shown(own)} {problem}", (
            f"the server's log says why; ss -xlp | grep canal-approvals-{uid} shows who holds the door; "
            "stopping the server, the next command starts one that opens it"), (
            act("server.logs"), act("server.stop"))
    shared = door_address(uid)
    held, trouble = _status(shared, uid)
    if trouble:
        return False, (f"the shared approval door {shown(shared)} {trouble}: approvers reach this server "
                       f"only at {shown(own)}"), (
            f"ss -xlp | grep canal-approvals-{uid} shows who holds it; stop your servers (those of an "
            "older canal cannot send approvers on): the next command starts one"), (
            act("server.stop", all=True),)
    holder = "this server" if held.get("pid") == seen.get("pid") else f"pid {held.get('pid')}"
    return True, (f"approvers reach this server (pid {seen.get('pid')}) at {shown(own)}, and through the "
                  f"shared door {shown(shared)} (held by {holder}), which sends them to the server owning "
                  "their project"), "", ()


def _status(address: str, uid: int) -> tuple[dict[str, Any], str]:
    """The door's status, or why there is none (as words after the door's name)."""
    try:
        answer = knock_address(address, uid, {"op": "status"}, timeout_s=5.0)
    except ConnectionError:
        return {}, "is not open (nobody listens)"
    except PermissionError as exc:
        return {}, f"is held by someone else ({exc})"
    except (OSError, ValueError) as exc:
        return {}, f"does not answer ({exc})"
    status = answer.get("status")
    if not isinstance(status, dict):
        return {}, "is held by a server of an older canal, which cannot send approvers on to other servers"
    return status, ""
