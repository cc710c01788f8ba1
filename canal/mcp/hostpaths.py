"""No host path in anything an agent reads over MCP.

The agent knows the project as the sandbox's working folder (``/workspace``); the host folder it maps to,
Canal's state and config folders and the person's home are the host's business (and a hint of where
to aim). Every reply's text and data pass through ``HostPaths`` before they leave the server."""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from canal.runtime.api import Canal

# What would continue a path component: a name character, or a dot followed by one (a dot that ends a
# sentence, "outside the workspace /home/me/proj.", does not continue it)
_CONTINUES = r"[\w\-+@~]|\.[\w.\-+@~]"


class HostPaths:
    """Replaces the host's folders, longest first: the project by the sandbox's working folder, Canal's
    state and config folders and the home folder by placeholders."""

    def __init__(self, canal: Canal) -> None:
        pairs: dict[str, str] = {}
        home = Path.home()
        own = canal.host_folders
        for folder, shown in ((home, "~"), (own["config"], "<canal config>"), (own["state"], "<canal state>"),
                              (canal.project_dir, canal.config.sandbox.workdir)):
            for spelling in {str(folder), os.path.realpath(folder)}:
                if spelling not in ("", "/"):
                    pairs[spelling] = shown
        self._shown = pairs
        names = sorted(pairs, key=len, reverse=True)
        self._pattern = re.compile("|".join(f"{re.escape(n)}(?!{_CONTINUES})" for n in names))

    def text(self, value: str) -> str:
        return self._pattern.sub(lambda m: self._shown[m.group(0)], value)

    def data(self, value: Any) -> Any:
        """``value`` with every string in it (nested) passed through ``text``."""
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, Mapping):
            return {k: self.data(v) for k, v in value.items()}
        if isinstance(value, list | tuple):
            return [self.data(v) for v in value]
        return value
