"""Translate a ``SandboxSpec`` into ``containers.run`` arguments: the hardening lives here."""

from __future__ import annotations

import time
from typing import Any

from docker.types import Mount as DockerMount
from docker.types import Ulimit

from canal.sandbox.backend import LABEL_EXPIRES, LABEL_OWNER, LABEL_QUOTA, LABEL_SANDBOX
from canal.sandbox.docker.egress import LABEL_ROUTE, EgressRoute
from canal.sandbox.runtimes import GVISOR
from canal.sandbox.spec import SandboxSpec

KEEPALIVE = ["sleep", "infinity"]
# Under gVisor the host's pids cgroup counts the Sentry's own threads (several per process of the
# sandbox on the ptrace platform): a limit sized for processes makes the Sentry panic at its first
# pipe. The process limit moves inside: gVisor enforces RLIMIT_NPROC on its own tasks (under runc
# that limit would count every host process of the uid, so it is set only here); the host limit stays
# as a backstop sized for the Sentry.
GVISOR_HOST_PIDS_BASE = 128
GVISOR_HOST_PIDS_PER_PROCESS = 32
HOME = "/home/agent"


def _tmpfs_options(size: int, user: str, mode: str) -> str:
    uid, _, gid = user.partition(":")
    owner = f",uid={uid},gid={gid or uid}" if uid.isdigit() and (gid or uid).isdigit() else ""
    return f"rw,nosuid,nodev,size={size},mode={mode}{owner}"


def canal_labels(spec: SandboxSpec, *, owner: str, name: str, extra_ttl_s: int = 0) -> dict[str, str]:
    expires = int(time.time()) + spec.ttl_s + extra_ttl_s
    labels = {**spec.labels, LABEL_OWNER: owner, LABEL_SANDBOX: name, LABEL_EXPIRES: str(expires)}
    # a tmpfs workspace has its size; a writable bind mount is watched by the agent
    if spec.workdir_mounted and spec.workdir_writable_mount:
        labels[LABEL_QUOTA] = str(spec.limits.workspace_size)
    return labels


def run_kwargs(spec: SandboxSpec, *, name: str, labels: dict[str, str],
               runtime: str | None = None, route: EgressRoute | None = None) -> dict[str, Any]:
    """Keyword arguments for ``client.containers.run`` (detached, hardened unless the spec says not).

    ``runtime`` is the engine's registration chosen for ``spec.runtime`` (see ``runtimes``); ``route``
    the egress proxy of an allowlist sandbox, whose internal network it joins."""
    tmpfs = {"/tmp": _tmpfs_options(spec.limits.tmp_size, spec.user, "1777"),
             HOME: _tmpfs_options(spec.limits.home_size, spec.user, "0700")}
    if not spec.workdir_mounted:
        tmpfs[spec.workdir] = _tmpfs_options(spec.limits.workspace_size, spec.user, "0755")
    kwargs: dict[str, Any] = {
        "image": spec.image,
        "command": KEEPALIVE,
        "name": name,
        "detach": True,
        "user": spec.user,
        "working_dir": spec.workdir,
        # an allowlist sandbox's proxy settings win: the proxy is its only way out
        "environment": {"HOME": HOME, **spec.env, **(route.env() if route else {})},
        "labels": labels,
        "network_mode": _network_mode(spec, route),
        "read_only": spec.read_only_root,
        "init": spec.init,
        "runtime": runtime or spec.runtime,
        "mem_limit": spec.limits.memory,
        "memswap_limit": spec.limits.memory,
        "nano_cpus": int(spec.limits.cpus * 1e9),
        "pids_limit": spec.limits.pids,
        "tmpfs": tmpfs,
        "mounts": [DockerMount(target=m.target, source=str(m.source.resolve()), type="bind",
                               read_only=m.read_only) for m in spec.mounts],
        "ipc_mode": "private",
        "shm_size": spec.limits.shm_size,
        # no POSIX message queue can be created: it would be memory outside every size limit
        "ulimits": [Ulimit(name="msgqueue", soft=0, hard=0)],
        "stdin_open": False,
        "tty": False,
    }
    if (runtime or spec.runtime).startswith(GVISOR):
        _gvisor_pids(kwargs, spec.limits.pids)
    if route is not None:
        _egress(kwargs, route, gvisor=(runtime or spec.runtime).startswith(GVISOR))
    if spec.cap_drop_all:
        kwargs["cap_drop"] = ["ALL"]
    if spec.no_new_privileges:
        kwargs["security_opt"] = ["no-new-privileges"]
    return kwargs


def _gvisor_pids(kwargs: dict[str, Any], pids: int) -> None:
    kwargs["ulimits"] = [*kwargs["ulimits"], Ulimit(name="nproc", soft=pids, hard=pids)]
    kwargs["pids_limit"] = GVISOR_HOST_PIDS_BASE + GVISOR_HOST_PIDS_PER_PROCESS * pids


def _egress(kwargs: dict[str, Any], route: EgressRoute, *, gvisor: bool) -> None:
    """The internal network's settings. The resolver forwards to the proxy, which refuses (and logs)
    every query; one try of one second if it does not answer, so tools fail fast."""
    kwargs["dns"] = [route.proxy_ip]
    kwargs["dns_opt"] = ["timeout:1", "attempts:1"]
    kwargs["labels"] = {**kwargs["labels"], LABEL_ROUTE: route.proxy}
    if not gvisor:
        # the internal network's gateway has no address: a direct connection waits for an ARP answer
        # that never comes; one probe of 100 ms makes it fail at once (gVisor has its own stack)
        kwargs["sysctls"] = {"net.ipv4.neigh.eth0.mcast_solicit": "1",
                             "net.ipv4.neigh.eth0.retrans_time_ms": "100"}


def _network_mode(spec: SandboxSpec, route: EgressRoute | None) -> str:
    if spec.network.mode == "allowlist":
        if route is None:
            msg = "an allowlist sandbox needs its egress route"
            raise ValueError(msg)
        return route.network
    return spec.network.mode
