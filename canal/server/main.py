"""The server process: ``python -m canal.server [--daemon]`` (the client starts it on demand, by that name).

It listens first and imports the CLI, the policy engine and the Docker client in the background, so
the first call waits for as little as possible. It runs the same CLI as ``canal`` in-process, one thread
per call (``cli_op.py``), with one set of shared resources for every project it serves
(``runtime/sandboxes/resources.py``), given to every ``Canal`` it makes.
"""

from __future__ import annotations

import argparse
import faulthandler
import logging
import os
import signal
import sys
import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TextIO

from canal.client.paths import build_id, server_paths
from canal.server.daemon import IDLE_TIMEOUT_S, Daemon, Handler

if TYPE_CHECKING:
    from canal.runtime.sandboxes.resources import Resources

LOG_CAP = 1024 * 1024
LOG_KEEP = 256 * 1024
PRELOAD_WAIT_S = 0.05


def _daemonize() -> None:
    """Detach: the starting client waits only for the first fork; the server is nobody's child."""
    if os.fork() > 0:
        os._exit(0)
    os.setsid()
    if os.fork() > 0:
        os._exit(0)


def _trim_log(path: str) -> None:
    try:
        if os.path.getsize(path) <= LOG_CAP:
            return
        with open(path, "rb") as fh:
            fh.seek(-LOG_KEEP, os.SEEK_END)
            tail = fh.read()
        with open(path, "wb") as fh:
            fh.write(tail)
    except OSError:
        return


def _open_log(path: str) -> TextIO:
    _trim_log(path)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    for std in (1, 2):
        os.dup2(fd, std)
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.close(devnull)
    return os.fdopen(fd, "w", buffering=1, encoding="utf-8", errors="backslashreplace")


def _preload(when_quiet: Callable[[Callable[[], object]], bool], resources: Resources) -> None:
    """Load what requests need (the CLI says what, in steps: ``cli_op.ServedCli.preload``), then make
    the warm pools (which remove what a crashed server left), each step only while no request runs. A
    request's own thread loads what it needs; a step beside it would take the CPU it waits for: a new
    project's first command, which started this server, checks its settings and starts its sandbox on
    the imports it needs, then loads the pipeline and the policy while the engine makes the sandbox."""
    log = logging.getLogger("canal.server")
    try:
        from canal.server.cli_op import served_cli

        steps = [*served_cli().preload(), _redaction_workers]
    except Exception:
        log.exception("preloading failed (requests will load it)")
        return
    for step in steps:
        try:
            _when_quiet(when_quiet, step)
        except Exception:
            log.exception("preloading failed (requests will load it)")
            return
    try:
        _when_quiet(when_quiet, resources.pools)
    except Exception as exc:  # no engine yet: the first sandbox a pool can serve makes them
        log.info("the warm pools were not made ahead: %s", exc)


def _redaction_workers() -> object:
    """Worker processes for the long outputs dense with findings (base64: ``host.redact.pool``), started
    at the first such output and stopped with the server."""
    from canal.host.redact import pool

    return pool.enable()


def _loaded_pool() -> Any:
    """``canal.host.redact.pool`` when the preload loaded it to enable the workers: never imported only
    to be closed or asked."""
    return sys.modules.get("canal.host.redact.pool")


def _close_redaction_workers() -> None:
    pool = _loaded_pool()
    if pool is not None:
        pool.close()


def _redaction_status() -> dict[str, Any]:
    pool = _loaded_pool()
    workers = pool.workers() if pool is not None else None
    return {"redaction_workers": {"size": workers.size, "texts_sent": workers.sent}} if workers else {}


def _when_quiet(when_quiet: Callable[[Callable[[], object]], bool], step: Callable[[], object]) -> None:
    """``step``, once no request runs (a request arriving meanwhile waits for it: ``Daemon.when_quiet``)."""
    while not when_quiet(step):
        time.sleep(PRELOAD_WAIT_S)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="canal-server")
    parser.add_argument("--daemon", action="store_true", help="detach from the starting client")
    parser.add_argument("--idle-timeout", type=float,
                        default=float(os.environ.get("CANAL_SERVER_IDLE_S") or IDLE_TIMEOUT_S))
    args = parser.parse_args(argv)
    os.umask(0o077)
    paths = server_paths()
    if args.daemon:
        _daemonize()
    os.chdir("/")
    log_stream = _open_log(str(paths.log))
    logging.basicConfig(stream=log_stream, level=logging.INFO,
                        format="%(asctime)s canal-server[%(process)d] %(levelname)s %(name)s: %(message)s")
    from canal.runtime.sandboxes.resources import Shared
    from canal.server import routed
    from canal.server.api_ops import api_handler
    from canal.server.cli_op import cli_handler
    from canal.server.kept import KeptCanals

    resources = Shared(pool_owner=f"canal-pool-{os.geteuid()}-{paths.name.removeprefix('server-')}")
    kept = KeptCanals(resources)
    handlers: dict[str, Handler] = {"cli": cli_handler(resources), "api": api_handler(kept)}
    daemon = Daemon(paths, build_id(), handlers, idle_timeout_s=args.idle_timeout)
    if not daemon.acquire():
        logging.getLogger("canal.server").info("another server holds %s: exiting", paths.lock)
        return
    routed.install(log_stream)
    from canal.server.door_ops import handle as door_handle
    from canal.server.door_route import Doors

    doors = Doors(paths.name.removeprefix("server-"), door_handle)
    doors.open()
    daemon.on_stop.append(doors.close)
    daemon.on_stop.append(resources.close)
    daemon.on_stop.append(_close_redaction_workers)
    daemon.status_extra.append(_redaction_status)
    daemon.status_extra.append(resources.status)
    daemon.status_extra.append(kept.status)
    daemon.keep_awake.append(resources.busy)
    faulthandler.register(signal.SIGUSR1, file=log_stream, all_threads=True)  # a stack dump on demand
    signal.signal(signal.SIGTERM, lambda *_: daemon.stop("SIGTERM"))
    signal.signal(signal.SIGINT, lambda *_: daemon.stop("SIGINT"))
    preload = threading.Thread(target=_preload, args=(daemon.when_quiet, resources), name="canal-preload",
                               daemon=True)
    preload.start()
    daemon.serve()
    logging.getLogger("canal.server").info("stopped")
    sys.exit(0)


if __name__ == "__main__":
    main()
