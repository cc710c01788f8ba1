"""The agent as a sandbox's ``python3`` receives it: its modules' compiled code, and their sources.

The agent package (``canal.sandbox.agent``) ships whole as one program whose modules a finder serves
from memory: nothing is written inside the sandbox, where a command could change it. ``python3 -c``
runs a short loader (``agent_boot``, so ``ps`` in the sandbox shows one line) that reads a few lines
of source from stdin, which read the program's two parts: the modules' code objects, marshalled behind
the host's bytecode magic number, then the same program as source. A sandbox whose Python reads that
bytecode (a CPython of the same minor version: the default image's Debian python3 and a host's 3.11)
runs the code; any other compiles the source. Compiling the agent's 100 KB of source was about 20 ms
of every session's start in the sandbox, the largest part of the agent's own start-up.

The host takes the code from the package's own bytecode cache (``__pycache__``, which an install
writes) through importlib's loader, which checks it against the sources and compiles when it is stale
or missing; the code's file names are the sandbox's (the host's install path stays on the host).
"""

from __future__ import annotations

import functools
import marshal
import sys
from importlib.machinery import SourceFileLoader
from importlib.util import MAGIC_NUMBER
from pathlib import Path
from types import CodeType
from typing import NamedTuple

AGENT_PACKAGE = "canal.sandbox.agent"
AGENT_NAME = "canal-agent"

# Serves MODULES (name: (is a package, its source or its marshalled code)) from memory, then runs the
# agent. The same text for both parts: the source program defines MODULES first; the boot gives the
# code part's its own. A module's code is read when it is imported: a session imports a few of them.
LOADER = (
    "import marshal, sys\n"
    "from importlib.machinery import ModuleSpec\n"
    "class Shipped:\n"
    "    def find_spec(self, name, path=None, target=None):\n"
    "        if name in MODULES:\n"
    "            return ModuleSpec(name, self, is_package=MODULES[name][0])\n"
    "    def create_module(self, spec):\n"
    "        return None\n"
    "    def exec_module(self, module):\n"
    "        package, code = MODULES[module.__name__]\n"
    "        module.__file__ = module.__name__.replace('.', '/') + ('/__init__.py' if package else '.py')\n"
    "        if isinstance(code, str):\n"
    "            code = compile(code, module.__file__, 'exec')\n"
    "        else:\n"
    "            code = marshal.loads(code)\n"
    "        exec(code, module.__dict__)\n"
    "sys.meta_path.insert(0, Shipped())\n"
    f"import {AGENT_PACKAGE}.main\n"
    f"{AGENT_PACKAGE}.main.main()\n"
)


def _files() -> dict[str, tuple[bool, Path]]:
    import canal.sandbox.agent as package

    folder = Path(package.__file__).parent
    found: dict[str, tuple[bool, Path]] = {}
    for path in sorted(folder.glob("*.py")):
        name = AGENT_PACKAGE if path.name == "__init__.py" else f"{AGENT_PACKAGE}.{path.stem}"
        found[name] = (path.name == "__init__.py", path)
    return found


# bare parents: nothing else of Canal is in the sandbox
PARENTS: dict[str, tuple[bool, str]] = {"canal": (True, ""), "canal.sandbox": (True, "")}


def agent_modules() -> dict[str, tuple[bool, str]]:
    """The agent package as it ships: each module's name, whether it is a package, and its source."""
    return {**PARENTS, **{name: (package, path.read_text()) for name, (package, path) in _files().items()}}


def agent_source() -> str:
    """The agent as one program of source, for any ``python3``."""
    return f"MODULES = {agent_modules()!r}\n" + LOADER


def sandbox_file(name: str, package: bool) -> str:
    """The file name a module has in the sandbox (what the loader sets as ``__file__``)."""
    return name.replace(".", "/") + ("/__init__.py" if package else ".py")


def _renamed(code: CodeType, filename: str) -> CodeType:
    consts = tuple(_renamed(c, filename) if isinstance(c, CodeType) else c for c in code.co_consts)
    return code.replace(co_filename=filename, co_consts=consts)


def _module_code(name: str, package: bool, path: Path) -> CodeType:
    filename = sandbox_file(name, package)
    if sys.flags.optimize:  # the cache holds the host's optimisation level; the sandbox runs plain python3
        code = compile(path.read_bytes(), filename, "exec", dont_inherit=True, optimize=0)
    else:
        loaded = SourceFileLoader(name, str(path)).get_code(name)
        assert loaded is not None  # a source file always has code
        code = loaded
    return _renamed(code, filename)


def agent_code() -> bytes:
    """The code part: the host's magic number, then (MODULES with each module's marshalled code, the
    loader's code)."""
    modules: dict[str, tuple[bool, str | bytes]] = dict(PARENTS)
    for name, (package, path) in _files().items():
        modules[name] = (package, marshal.dumps(_module_code(name, package, path)))
    loader = compile(LOADER, AGENT_NAME, "exec", dont_inherit=True, optimize=0)
    return MAGIC_NUMBER + marshal.dumps((modules, loader))


AGENT_SOURCE = agent_source()


class Launch(NamedTuple):
    """The agent's command line and what it reads from stdin first."""

    boot: str
    data: bytes


def agent_boot(size: int) -> str:
    """The command line: read ``size`` bytes of source from stdin and run them (``ps`` in the sandbox
    shows this one short line, not the agent's program)."""
    return (f"import os;b=b''\nwhile len(b)<{size}:b+=os.read(0,{size}-len(b))or os._exit(70)\n"
            "exec(compile(b,'canal-agent','exec'))")


def _chooser(code_size: int, source_size: int) -> bytes:
    """What the boot line runs: read the code part and the source part, run the code when this Python
    reads the host's bytecode (the same magic number), else compile the source."""
    return (
        "import marshal,_frozen_importlib_external as e\n"
        "def take(n):\n"
        " b=bytearray()\n"
        " while len(b)<n:b+=os.read(0,n-len(b))or os._exit(70)\n"
        " return bytes(b)\n"
        f"b=take({code_size});s=take({source_size})\n"
        "try:\n"
        " if b[:4]!=e.MAGIC_NUMBER:raise ValueError\n"
        " MODULES,c=marshal.loads(b[4:])\n"
        "except Exception:c=compile(s,'canal-agent','exec')\n"
        "del b,s,take\n"
        "exec(c)\n"
    ).encode()


def pack(code: bytes, source: bytes) -> Launch:
    """The launch of a program whose code part is ``code`` (magic number first) and source ``source``."""
    chooser = _chooser(len(code), len(source))
    return Launch(agent_boot(len(chooser)), chooser + code + source)


@functools.cache
def agent_program() -> Launch:
    """The agent's launch: the code part, then the source program (made once per process)."""
    return pack(agent_code(), AGENT_SOURCE.encode())
