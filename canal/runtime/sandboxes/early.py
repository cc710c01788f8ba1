"""A new sandbox made while its first command's pipeline and policy load.

A project's first command loads the pipeline and the policy engine (in a server that just started, most
of what Canal imports) and compiles its policy before the pipeline asks for the sandbox; making the
container and starting its session is a quarter to half a second spent mostly in the engine. So the
first command of a ``Canal`` starts them in a thread as soon as its settings passed their check (what
``runtime/api.py`` imports before is only what that check and this thread need), and the pipeline's own
``ensure_sandbox`` takes turns with that thread (its lock) and finds the sandbox made, its session up.

Only once the settings were checked against their approval (``services.config``, in the caller's
thread: refused settings start nothing), only for a sandbox that does not exist at all (one that
exists, stopped or on a replaced folder, is left to the pipeline, which says why it makes it again),
and only on Docker (the in-package fake makes its sandboxes at once). Whatever fails in the thread is
left for the pipeline's own call, which fails the same way in the command's thread, or succeeds.
"""

from __future__ import annotations

import contextlib
import contextvars
import logging
import threading
from collections.abc import Callable, Iterator

from canal.runtime.sandboxes.start import SandboxRef, make_new
from canal.runtime.services import Services
from canal.sandbox.backend import SandboxBackend
from canal.sandbox.docker.backend import DockerBackend
from canal.sandbox.images import BuildEvent

log = logging.getLogger("canal.runtime")


@contextlib.contextmanager
def started_early(services: Services, backend_of: Callable[[], SandboxBackend], ref: SandboxRef,
                  on_build: Callable[[BuildEvent], None] | None = None) -> Iterator[None]:
    """Within the block, ``ref``'s sandbox is being made and its session started in a thread (when
    Docker has none of that name); the block's end waits for the thread."""
    # the approval check first, in this thread: refused settings start nothing (nor an engine client);
    # then the parts the thread reads, made here too (Services builds each part once, without a lock):
    # a fork's store, an allowlist sandbox's egress records (the others need neither)
    config = services.config
    if services.is_fork(ref.name):
        _ = services.forks
    if config.sandbox.network.mode == "allowlist":
        _ = services.egress
    backend = backend_of()
    if not isinstance(backend, DockerBackend) or backend.ready(ref.container) is not None:
        yield
        return
    # the request's streams and environment go with it (server/routed.py): a build's progress shows
    context = contextvars.copy_context()
    thread = threading.Thread(target=context.run, args=(_start, services, backend, ref, on_build),
                              name="canal-early-sandbox", daemon=True)
    thread.start()
    try:
        yield
    finally:
        thread.join()


def _start(services: Services, backend: DockerBackend, ref: SandboxRef,
           on_build: Callable[[BuildEvent], None] | None) -> None:
    try:
        make_new(services, backend, ref, on_build)
    except Exception as exc:  # the pipeline's own ensure_sandbox meets it again, in the command's thread
        log.info("making sandbox %s ahead of its first command failed: %s", ref.container, exc)
