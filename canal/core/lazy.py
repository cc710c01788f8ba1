"""A package's re-exported names, each imported from its module on first use (PEP 562).

A package whose ``__init__`` imported all its modules made every import of one of them pay for all:
``canal.runtime.settings.config`` needs ``canal.host.checkpoints.settings``, and with it came the
checkpoint store, its scanner and pathspec, on a new project's first command before its sandbox could
start. Such a package lists its names by module instead, and imports them for mypy only::

    if TYPE_CHECKING:
        from canal.host.checkpoints.store import CheckpointStore
    __getattr__ = exports(__name__, {".store": ("CheckpointStore",)})
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping
from importlib import import_module
from typing import Any


def exports(package: str, by_module: Mapping[str, tuple[str, ...]]) -> Callable[[str], Any]:
    """The ``__getattr__`` of ``package``: each name of ``by_module`` (module, relative or absolute ->
    names) imported from its module when first asked for, then kept on the package."""
    where = {name: module for module, names in by_module.items() for name in names}

    def __getattr__(name: str) -> Any:
        module = where.get(name)
        if module is None:
            msg = f"module {package!r} has no attribute {name!r}"
            raise AttributeError(msg)
        value = getattr(import_module(module, package), name)
        setattr(sys.modules[package], name, value)
        return value

    return __getattr__

