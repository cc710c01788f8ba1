"""What to do after a command failed for a reason of the sandbox's making, as next actions.

Two failures cost an agent turns because the error does not say why: a program under ``/tmp`` or the
home folder (tmpfs, mounted noexec) fails with ``Permission denied`` and exit 126, and a tool the image
lacks (``make: command not found``, exit 127) that an image preset has. Each hint is a sentence and
next actions; the front end words the actions (``canal.core.next``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from canal.core.next import NextAction, act
from canal.sandbox.docker.project_image import PRESETS
from canal.sandbox.result import ExecResult

NOEXEC = ("/tmp", "/home/agent", "/dev/shm")  # tmpfs mounts without exec (Docker's default)
_TAIL = 4096
# bash: "bash: line 1: make: command not found"; dash: "sh: 1: make: not found"
_NOT_FOUND = re.compile(r"(?:^|: )([^\s:/]+): (?:command )?not found\s*$", re.MULTILINE)
# Programs a preset installs, by the package that brings them.
_PROGRAM_PACKAGES = {
    "make": "make", "gcc": "build-essential", "g++": "build-essential", "cc": "build-essential",
    "c++": "build-essential", "pip": "python3-pip", "pip3": "python3-pip", "pkg-config": "pkg-config",
    "node": "nodejs", "npm": "npm", "npx": "npm", "git": "git", "python3": "python3",
}


@dataclass(frozen=True)
class Hint:
    text: str  # what is true, in words for every reader
    next: tuple[NextAction, ...] = ()


def failure_hints(command: str, result: ExecResult, *, cwd: str, workdir: str) -> list[Hint]:
    """Hints for a command that exited 126 (noexec) or 127 (not found); none for anything else."""
    if result.exit_code not in (126, 127):
        return []
    stderr = _tail(result)
    if result.exit_code == 126 and "Permission denied" in stderr:
        return _noexec(command, stderr, cwd, workdir)
    return _not_found(stderr)


def _tail(result: ExecResult) -> str:
    with result.stderr.open() as src:
        if result.stderr.size > _TAIL:
            src.seek(result.stderr.size - _TAIL)
        return src.read().decode("utf-8", "replace")


def _noexec(command: str, stderr: str, cwd: str, workdir: str) -> list[Hint]:
    where = [m for m in NOEXEC if m in command or m in stderr or cwd == m or cwd.startswith(m + "/")]
    if not where:
        return []
    mount = where[0]
    venv = f"{workdir.rstrip('/')}/.venv"
    text = (f"{mount} is mounted noexec in the sandbox: no program in it can run. Keep programs and "
            f"virtual environments in the workspace ({workdir}) instead")
    return [Hint(text, (act("run", "a venv in the workspace", command=f"python3 -m venv {venv}"),))]


def _not_found(stderr: str) -> list[Hint]:
    found = _NOT_FOUND.search(stderr)
    if found is None:
        return []
    program = found.group(1)
    package = _PROGRAM_PACKAGES.get(program)
    presets = sorted(name for name, packages in PRESETS.items() if package in packages)
    if not presets:
        return []  # not a tool an image preset brings (a typo, or a project's own program)
    which = " or ".join(f"image: {{preset: {p}}}" for p in presets)
    has = f"the image preset {presets[0]} has it" if len(presets) == 1 else \
        f"the image presets {', '.join(presets)} have it"
    return [Hint(f"{program} is not in the sandbox's image; {has}: add {which} to canal.yaml (or its "
                 "package to image.apt), and a person approves the change",
                 (act("config.approve"),))]


def soft_deletes(targets: tuple[str, ...], rule_ids: tuple[str, ...], workdir: str) -> list[NextAction]:
    """For a recursive delete the policy refused: the same delete as a move to the trash (``canal rm
    -r``, the ``remove`` tool), which needs no confirmation and ``restore`` undoes. Only for targets in
    the workspace, named without a glob."""
    if "rm-recursive" not in rule_ids or not targets:
        return []
    root = workdir.rstrip("/") + "/"
    rels = [t[len(root):] for t in targets if t.startswith(root) and not re.search(r"[*?\[]", t)]
    if len(rels) != len(targets) or not all(rels):
        return []
    note = "moves it to the trash; restore puts it back"
    return [act("remove", note, path=rel, recursive=True) for rel in rels[:3]]
