"""Which engine runtime runs a sandbox: ``runc``, or gVisor (``runsc``) in the flavour its network needs.

``sandbox.runtime: runsc`` names gVisor; the engine may know it under several registrations, because
one runsc binary behaves differently by flag:

- ``runsc-none`` (``--network=none``): gVisor's own network stack with a loopback only. Preferred for
  sandboxes without a network: nothing of the host's network stack is reachable from the Sentry.
- ``runsc-hostinet`` (``--network=host``): the Sentry uses the host kernel's network stack *inside the
  container's own network namespace* (Docker's internal network, not the host's). Needed where the
  plain ``runsc`` refuses networked containers (Debian's 2022 runsc on Linux 6.x: its check for "the
  root network namespace" looks for ``net.core.rmem_default``, which newer kernels show in every
  namespace). Reachability is the namespace's, as under runc; the cost is a wider host-kernel surface.
- ``runsc``: the plain registration gVisor's own install writes.

A runsc sandbox never silently becomes a runc one: when no registration fits, ``RUNTIME_UNKNOWN`` says
how to register one.
"""

from __future__ import annotations

from collections.abc import Sequence

from canal.core.next import act
from canal.sandbox.errors import RUNTIME_FAILED, RUNTIME_UNKNOWN, SandboxError

GVISOR = "runsc"
RUNSC_BINARY = "/usr/bin/runsc"
# Engine registrations tried in order, by whether the sandbox has a network namespace worth keeping.
_GVISOR_OFFLINE = ("runsc-none", "runsc")
_GVISOR_NETWORKED = ("runsc-hostinet", "runsc")
REGISTRATIONS: dict[str, dict[str, object]] = {
    "runsc": {"path": RUNSC_BINARY},
    "runsc-none": {"path": RUNSC_BINARY, "runtimeArgs": ["--network=none"]},
    "runsc-hostinet": {"path": RUNSC_BINARY, "runtimeArgs": ["--network=host"]},
}
REGISTER_HINT = (
    "sudo apt-get install runsc, then register it: on an engine Canal's scripts/ensure-docker started, "
    "re-run sudo scripts/ensure-docker; otherwise add to /etc/docker/daemon.json "
    '"runtimes": {"runsc": {"path": "/usr/bin/runsc"}, "runsc-none": {"path": "/usr/bin/runsc", '
    '"runtimeArgs": ["--network=none"]}} and reload the engine without stopping containers: '
    "sudo kill -HUP $(pidof dockerd)"
)
HOSTINET_HINT = (
    "this runsc cannot give a networked sandbox its own network stack on this kernel; register the "
    'host-stack flavour in /etc/docker/daemon.json: "runsc-hostinet": {"path": "/usr/bin/runsc", '
    '"runtimeArgs": ["--network=host"]} (sudo scripts/ensure-docker does it), then sudo kill -HUP '
    "$(pidof dockerd)"
)
# What the plain runsc says when it hits that kernel check; the message is matched to explain it.
ROOT_NETNS_REFUSAL = "cannot run with network enabled in root network namespace"


def candidates(requested: str, *, networked: bool) -> tuple[str, ...]:
    """Engine runtime names that can run ``requested``, best first."""
    if requested != GVISOR:
        return (requested,)
    return _GVISOR_NETWORKED if networked else _GVISOR_OFFLINE


def engine_runtime(requested: str, *, networked: bool, installed: Sequence[str]) -> str:
    """The engine registration for ``requested``; ``RUNTIME_UNKNOWN`` (never runc instead) when none."""
    for name in candidates(requested, networked=networked):
        if name in installed:
            return name
    wanted = " or ".join(candidates(requested, networked=networked))
    msg = (f"The engine has no container runtime {wanted!r} for runtime: {requested}; "
           f"registered: {', '.join(installed) or '(none)'}. Nothing was started.")
    hint = REGISTER_HINT if requested == GVISOR else "use runtime: runc, or register the runtime with dockerd"
    raise RUNTIME_UNKNOWN(msg, hint=hint, next=act("doctor", "to check") if requested == GVISOR else (),
                         details={"runtime": requested, "wanted": list(candidates(
        requested, networked=networked)), "installed": list(installed)})


def gvisor_status(installed: Sequence[str]) -> tuple[bool, str]:
    """Whether gVisor sandboxes can start (offline at least), and a sentence saying which flavours exist."""
    found = [name for name in REGISTRATIONS if name in installed]
    if not found:
        return False, "runsc (gVisor) is not registered with the engine"
    offline = any(n in installed for n in _GVISOR_OFFLINE)
    networked = "runsc-hostinet" in installed
    tail = "" if networked else (" (networked runsc sandboxes use plain runsc, which needs a newer runsc "
                                 "or kernel)")
    return offline, f"gVisor registered as {', '.join(found)}{tail}"


def runtime_failure(exc: SandboxError, runtime: str) -> SandboxError:
    """``exc`` from a failed start, explained when it is runsc refusing this kernel's namespaces."""
    if ROOT_NETNS_REFUSAL not in exc.message:
        return exc
    msg = (f"gVisor (engine runtime {runtime!r}) refused to start a networked sandbox: "
           f"{ROOT_NETNS_REFUSAL}. Nothing was started.")
    return RUNTIME_FAILED(msg, hint=HOSTINET_HINT, details={**exc.details, "runtime": runtime})
