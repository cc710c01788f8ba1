"""Canal: agent commands in hardened containers, under a CEL policy, with an audit log.

The public API::

    from canal import Canal

    with Canal("/path/to/project") as canal:
        result = canal.run("pytest -q")
        print(result.text)

``CanalError`` is the root of every error Canal raises (``code``, ``exit_code``, ``message``, ``hint``,
``next``, ``details``; docs/errors.md lists the codes).

Names are imported on first use, so ``import canal`` (and every ``canal.*`` submodule) stays cheap.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

from canal.core.version import __version__ as __version__

if TYPE_CHECKING:
    from canal.core.errors import CanalError
    from canal.runtime.api import Canal
    from canal.runtime.run.result import RunResult

__all__ = ["Canal", "CanalError", "RunResult"]

_EXPORTS = {"Canal": "canal.runtime.api", "CanalError": "canal.core.errors",
            "RunResult": "canal.runtime.run.result"}


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        msg = f"module 'canal' has no attribute {name!r}"
        raise AttributeError(msg)
    return getattr(import_module(module), name)
