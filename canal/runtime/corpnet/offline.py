"""The hint after a network failure in a sandbox without a network (``sandbox.network: none``).

pip there ends in ``Could not find a version ... (from versions: none)``, npm and curl in a resolver error:
nothing says the sandbox has no network at all. A failed command whose output ends in one of these gets
a footer naming the setting that gives it a way out, and the document that says how.
"""

from __future__ import annotations

import os

from canal.core.next import Say, act
from canal.sandbox.result import CapturedOutput, ExecResult

SETTING = "sandbox.network"
# what pip, npm, curl, git, apt, Python and Node print when a name cannot be resolved or reached
SIGNS = (b"(from versions: none)", b"Temporary failure in name resolution", b"Could not resolve host",
         b"Network is unreachable", b"Name or service not known", b"EAI_AGAIN", b"ENOTFOUND",
         b"Failed to establish a new connection", b"Could not resolve proxy", b"getaddrinfo",
         b"No address associated with hostname", b"Could not connect to")
TAIL = 64 * 1024


def offline_footer(result: ExecResult, say: Say | None = None) -> list[str]:
    """The footer part for a failed command of a ``network: none`` sandbox that tried the network."""
    if result.ok or not any(sign in _tail(out) for out in (result.stderr, result.stdout) for sign in SIGNS):
        return []
    approve = say(act("config.approve")) if say is not None else None
    how = f"; a person sets it and runs {approve}" if approve else ""
    return [f"this sandbox has no network ({SETTING}: none): package indexes are reachable only through "
            f"an allowlist ({SETTING}: {{mode: allowlist, allow: [INDEX_HOST]}}, or image.index_url with "
            f"allow_mirrors: true){how}; docs/egress.md"]


def _tail(out: CapturedOutput) -> bytes:
    with out.open() as fh:
        if out.size > TAIL:
            fh.seek(out.size - TAIL, os.SEEK_SET)
        return fh.read(TAIL)
