"""The ``SandboxBackend`` protocol: what every backend (Docker, the in-package fake) provides.

``exec`` semantics shared by every backend:

- a ``str`` command runs in the sandbox's persistent session through bash: the working directory and
  exported variables persist from one command to the next, like a terminal (aliases, functions and
  shell options do not); ``session_state`` says what they are now, so a caller decides with them;
- a ``Sequence[str]`` command is an exact argv: no shell is involved, so untrusted values stay whole;
- stdin is /dev/null unless ``stdin`` is given: bytes, or a binary reader streamed as the command reads
  (at most 16 MiB); ``env`` and ``workdir`` apply to this command only;
- ``on_output(stream, chunk)`` sees stdout and stderr as they arrive (for live display);
- ``interrupt(name, signal)`` kills the command running in ``name`` (its whole process tree), which then
  ends with ``EndReason.INTERRUPTED``;
- output past ``OUTPUT_MEMORY_CAP`` bytes per stream is spooled to 0600 files in ``spool_dir`` (or a
  private temporary folder); a non-zero exit, a timeout or an OOM kill is a result, not an exception.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum
from pathlib import Path
from typing import BinaryIO, Protocol, runtime_checkable

from canal.sandbox.egress_squid import EgressRead, ProxyState
from canal.sandbox.errors import SpecInvalid
from canal.sandbox.images import BuiltImage, Progress, PrunedImage
from canal.sandbox.result import ExecResult, SessionState
from canal.sandbox.spec import SandboxSpec

OUTPUT_MEMORY_CAP = 1024 * 1024
MAX_TRANSFER_BYTES = 256 * 1024 * 1024
NAME_PREFIX = "canal-"

LABEL_OWNER = "canal.owner"
LABEL_SANDBOX = "canal.sandbox"
LABEL_EXPIRES = "canal.expires"
LABEL_POOL = "canal.pool"
LABEL_QUOTA = "canal.workspace_quota"  # bytes the bind-mounted workspace may hold


_NAME = re.compile(r"^canal-[a-zA-Z0-9][a-zA-Z0-9_.-]{0,100}$")


def check_name(name: str) -> str:
    """``name`` if it is a valid sandbox name (``canal-`` prefix), else ``SpecInvalid``."""
    if not _NAME.match(name):
        msg = f"Sandbox names start with {NAME_PREFIX!r} and use letters, digits, '_', '.', '-': {name!r}"
        raise SpecInvalid(msg, hint="pick a name such as canal-work-1", details={"name": name})
    return name


POOLED_PREFIX = "canal-pool-"
_POOLED_NAME = re.compile(r"^canal-pool-[0-9a-f]{12}$")


def is_pooled_name(name: str) -> bool:
    """A warm pool's name for a sandbox it made and has not handed out yet."""
    return _POOLED_NAME.match(name) is not None


def handed_to(labels: Mapping[str, str], name: str, owner: str) -> bool:
    """True when a warm pool made this sandbox and handed it to ``owner``. Docker fixes labels when a
    container is made, so a pooled sandbox keeps the pool's owner label; handing it out renames it into
    ``owner``'s names (``<owner>-<sandbox>``), which makes it ``owner``'s like one made on demand."""
    return (labels.get(LABEL_POOL) == "1" and name.startswith(f"{owner}-") and not is_pooled_name(name))


class SandboxStatus(StrEnum):
    CREATED = "created"
    RUNNING = "running"
    PAUSED = "paused"
    RESTARTING = "restarting"
    EXITED = "exited"
    DEAD = "dead"
    REMOVING = "removing"


@dataclass(frozen=True)
class SandboxInfo:
    """One sandbox as the backend sees it now."""

    id: str
    name: str
    image: str
    status: SandboxStatus
    labels: Mapping[str, str] = field(default_factory=dict)
    image_digest: str | None = None
    created_at: datetime | None = None
    expires_at: datetime | None = None

    @property
    def running(self) -> bool:
        return self.status is SandboxStatus.RUNNING


@runtime_checkable
class SandboxBackend(Protocol):
    """Creates, runs commands in, and removes sandboxes. Names carry the ``canal-`` prefix."""

    def create(self, name: str, spec: SandboxSpec) -> SandboxInfo:
        """Create and start a sandbox. Raises ``SandboxExists``, ``MOUNT_REFUSED``, ``ImageNotFound``..."""
        ...

    def get(self, name: str) -> SandboxInfo | None: ...

    def list(self, *, all_owners: bool = False, name_prefix: str = "") -> list[SandboxInfo]:
        """Sandboxes of this backend's owner (every Canal sandbox with ``all_owners``) whose names start
        with ``name_prefix``."""
        ...

    def stop(self, name: str) -> None:
        """Stop the sandbox's processes; raises ``SandboxNotFound`` when there is none."""
        ...

    def remove(self, name: str) -> None:
        """Remove the sandbox and everything in it. Idempotent: a missing sandbox is not an error."""
        ...

    def exec(
        self,
        name: str,
        command: str | Sequence[str],
        *,
        timeout_s: float | None = None,
        idle_timeout_s: float | None = None,
        stdin: bytes | BinaryIO | None = None,
        env: Mapping[str, str] | None = None,
        workdir: str | None = None,
        spool_dir: Path | None = None,
        on_output: Callable[[str, bytes], None] | None = None,
        expect_state: str | None = None,
        gate: Callable[[], None] | None = None,
    ) -> ExecResult:
        """``expect_state``: the ``SessionState.digest()`` the caller decided on; when the session's state
        differs (another command ran in between), nothing runs and the exit code is 126.

        ``gate``: called once the command is ready to start and before it starts (the pipeline puts its
        intent record on disk there, while the request travels); the command starts only after it
        returns, and when it raises nothing runs and the exception propagates."""
        ...

    def session_state(self, name: str) -> SessionState | None:
        """The working directory and changed exported variables the next ``str`` command runs with,
        known without a round trip; None when this backend has not run anything in ``name`` yet."""
        ...

    def ready(self, name: str) -> SandboxInfo | None:
        """The sandbox, when its session is up and well, known without asking the engine; else None."""
        ...

    def warm(self, name: str) -> None:
        """Start the sandbox's session now, so its first command does not pay for it."""
        ...

    def ensure_image(self, tag: str, *, force: bool = False, on_event: Progress | None = None) -> BuiltImage:
        """One of Canal's own images (``CANAL_IMAGES``), built unless one from the same build context is
        there already (``force`` rebuilds); ``ImageNotFound`` for any other tag."""
        ...

    def images_prune(self, *, only_label: str | None = None) -> Sequence[PrunedImage]:
        """Remove Canal's own images that are untagged and used by no container (never another
        image); ``only_label`` narrows it to images also carrying that label."""
        ...

    def interrupt(self, name: str, signal: str) -> bool:
        """Kill the command running in ``name``; ``signal`` (``INT``, ``TERM``...) is reported in its
        result. False when no command is running there."""
        ...

    def put_files(self, name: str, files: Mapping[str, bytes], *, dest: str = "/workspace",
                  max_bytes: int = MAX_TRANSFER_BYTES) -> None:
        """Write ``files`` (relative path -> content) under ``dest``. Raises ``FILE_TRANSFER_REFUSED``."""
        ...

    def get_files(self, name: str, path: str, *, max_bytes: int = MAX_TRANSFER_BYTES) -> dict[str, bytes]:
        """Regular files at or under ``path``, keyed by path relative to ``path``'s parent."""
        ...

    # egress: allowlist sandboxes (``network: allowlist``) leave through proxies the backend runs
    def egress_read(self, cursors: Mapping[str, int]) -> EgressRead:
        """Attempts the proxies logged after ``cursors`` (opaque; start with ``{}``), oldest first, and
        the cursors to pass next time."""
        ...

    def egress_prune(self, *, all_owners: bool = False) -> Sequence[str]:
        """Remove the proxies no sandbox uses (callers read their attempts first); returns their names."""
        ...

    def egress_states(self) -> Sequence[ProxyState]: ...

    def close(self) -> None:
        """Release client resources (sessions, connections). Sandboxes stay; ``remove`` them."""
        ...
