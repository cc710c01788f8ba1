"""The ``sandbox`` argument of run_command and task_start: an existing sandbox or fork of the project.

A new name would start a new full sandbox on the real workspace (its own memory, processes and CPU),
which is not what the description promises (a fork's name runs in the fork's copy): an agent makes one
with fork, and a person with ``canal up NAME``.
"""

from __future__ import annotations

from canal.core.next import act
from canal.mcp.errors import SANDBOX_UNKNOWN
from canal.runtime.api import Canal


def existing_sandboxes(canal: Canal) -> list[str]:
    """The project's own sandbox, every sandbox of the project that exists, and every fork."""
    found = {canal.ref().name, *(row["name"] for row in canal.ps()), *(f.name for f in canal.forks())}
    return sorted(found)


def existing_sandbox(canal: Canal, name: str | None) -> str | None:
    """``name`` when it is None (the project's own sandbox) or names an existing one; else
    ``SANDBOX_UNKNOWN`` with the list of existing ones."""
    if name is None or name == canal.ref().name:
        return name
    known = existing_sandboxes(canal)
    if name in known:
        return name
    msg = (f"No sandbox or fork named {name} in this project (there are: {', '.join(known)}). "
           "Nothing was run.")
    raise SANDBOX_UNKNOWN(msg, hint="leave sandbox out for the project's own sandbox, or make a fork first",
                         next=act("fork.start", name=name), details={"sandbox": name, "existing": known})
