"""Canal speaks SWE-ReX (the runtime protocol of SWE-agent): ``canal swerex serve`` answers SWE-ReX's
``RemoteRuntime`` with Canal's sandboxes, policy, checkpoints and audit behind every call (docs/swerex.md).
The endpoint imports nothing of SWE-ReX: its wire format is a few JSON bodies and one error shape."""

from __future__ import annotations

import contextlib
import signal
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

from canal.runtime.api import Canal
from canal.swerex.app import make_app
from canal.swerex.service import ACTOR, SwerexService


def serve(project_dir: Path, *, host: str, port: int, api_key: str, on_ready: Callable[[str], None]) -> None:
    """Serve SWE-ReX's protocol for the project at ``project_dir`` until stopped (Ctrl-C, SIGTERM); its
    sessions' sandboxes go with it."""
    import uvicorn  # the web stack loads only here

    class _Server(uvicorn.Server):
        @contextlib.contextmanager
        def capture_signals(self) -> Iterator[None]:  # uvicorn re-raises SIGTERM after its shutdown,
            yield  # which would end the process before the sessions' sandboxes are removed

    canal = Canal(project_dir, actor=ACTOR, unattended=True)
    service = SwerexService(canal)
    server = _Server(uvicorn.Config(make_app(service, api_key), host=host, port=port,
                                    log_level="warning", lifespan="off", access_log=False))

    def stop(_signum: int, _frame: object) -> None:
        server.should_exit = True

    for signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, stop)

    def announce() -> None:
        while not server.started and not server.should_exit:
            time.sleep(0.02)
        if server.started:
            bound = server.servers[0].sockets[0].getsockname()
            on_ready(f"http://{bound[0]}:{bound[1]}")

    threading.Thread(target=announce, name="swerex-ready", daemon=True).start()
    try:
        server.run()
    finally:
        try:
            service.close()
        finally:
            canal.close()
