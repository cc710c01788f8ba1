"""The CLI inside the server: ``run`` runs one forwarded ``canal`` command exactly as ``canal`` would run
it in-process, on the server's resources; ``preload`` says what to load ahead, and in which order. The server
finds this module by name (``canal.server.cli_op``) and gives each command its own streams, environment,
working directory and interrupts; nothing here knows of the server.
"""

from __future__ import annotations

import logging
import sys
import traceback
from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from canal.runtime.sandboxes.resources import Resources

log = logging.getLogger("canal.server")


def exit_code(exc: SystemExit) -> int:
    """What Python's own exit would make of ``SystemExit(code)``."""
    code = exc.code
    if code is None:
        return 0
    if isinstance(code, int):
        return code & 0xFF
    sys.stderr.write(f"{code}\n")
    return 1


def run(argv: list[str], resources: Resources | None) -> int:
    """``canal ARGV`` in this process, with ``resources`` for its ``Canal`` (None: it owns its own);
    returns the exit status."""
    from canal.cli.main import cli

    try:
        cli.main(args=argv, prog_name="canal", standalone_mode=True, obj=resources)
    except SystemExit as exc:
        return exit_code(exc)
    except KeyboardInterrupt:
        return 130
    except Exception:
        traceback.print_exc(file=sys.stderr)
        log.exception("canal %s failed", " ".join(argv[:2]))
        return 1
    return 0


def preload() -> list[Callable[[], object]]:
    """What the server loads ahead, as steps in the order a first ``canal run`` needs them: the CLI and
    its ``run``; the API up to a sandbox's start (the settings' check, the Docker SDK); the pipeline, the
    policy engine and cel-python's parser; then what other doors need (the MCP front end and its SDK),
    and what the first big output would (the redactor's numpy and rule gate)."""
    return [_cli, _api, _pipeline, _mcp, _redactor]


def _cli() -> object:
    from canal.cli.main import load_command

    return load_command("run")


def _api() -> object:
    from canal.runtime import api

    return api


def _pipeline() -> object:
    from canal.policy.cel.celenv import environment
    from canal.runtime.run import pipeline

    return pipeline, environment()


def _mcp() -> object:
    from canal.cli.admin.mcp_cmd import front_end

    return front_end("mcp")


def _redactor() -> object:
    """What the first big output would pay for: the redactor's numpy and rule gate (0.2-0.5 s)."""
    from canal.runtime.run.pipeline import warm_up

    warm_up()
    return None
