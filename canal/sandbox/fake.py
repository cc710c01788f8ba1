"""``FakeBackend``: an in-memory ``SandboxBackend`` for unit tests. It runs nothing on the host.

Commands are answered by handlers keyed by program name (``fake.on("pytest", handler)``). Built in:
``true``, ``false``, ``echo``, ``cat`` (stdin or a file), ``pwd``, ``cd``, ``export``, ``exit N``,
``printenv NAME``. A ``str`` command is split with ``shlex`` into one simple command (no pipes); cwd
and exported variables persist across ``str`` commands, as in the Docker backend.
"""

from __future__ import annotations

import dataclasses
import posixpath
import shlex
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path, PurePosixPath
from typing import BinaryIO

from canal.sandbox.backend import (
    LABEL_EXPIRES,
    LABEL_OWNER,
    LABEL_SANDBOX,
    MAX_TRANSFER_BYTES,
    OUTPUT_MEMORY_CAP,
    SandboxInfo,
    SandboxStatus,
    check_name,
)
from canal.sandbox.egress_squid import EgressAttempt, EgressRead, ProxyState
from canal.sandbox.errors import FILE_TRANSFER_REFUSED, ImageNotFound, SandboxExists, SandboxNotFound
from canal.sandbox.files import check_relative
from canal.sandbox.images import CANAL_IMAGES, BuiltImage, Progress, PrunedImage
from canal.sandbox.result import ExecResult, SessionState
from canal.sandbox.spec import SandboxSpec, check_mounts
from canal.sandbox.spool import Spool


@dataclass(frozen=True)
class FakeCall:
    """One command as a handler sees it."""

    argv: tuple[str, ...]
    stdin: bytes
    env: Mapping[str, str]
    cwd: str
    files: dict[str, bytes]


@dataclass(frozen=True)
class FakeReply:
    stdout: bytes = b""
    stderr: bytes = b""
    exit_code: int = 0


Handler = Callable[[FakeCall], FakeReply]


@dataclass
class _Box:
    info: SandboxInfo
    spec: SandboxSpec
    cwd: str
    env: dict[str, str]
    files: dict[str, bytes] = field(default_factory=dict)  # absolute path -> content


class FakeBackend:
    def __init__(self, *, owner: str = "canal", protected_paths: Sequence[Path] = (),
                 output_cap: int = OUTPUT_MEMORY_CAP) -> None:
        self.owner = owner
        self.protected_paths = tuple(protected_paths)
        self.output_cap = output_cap
        self.handlers: dict[str, Handler] = {}
        self.calls: list[FakeCall] = []
        self._boxes: dict[str, _Box] = {}
        self._lock = threading.Lock()
        self._counter = 0
        # egress: what "the proxy" logged (tests append attempts), read like the Docker backend's
        self.egress_log: list[EgressAttempt] = []
        self._proxies: set[str] = set()
        self.dangling_images: list[PrunedImage] = []  # what images_prune removes (tests add some)
        self.images_built: list[str] = []  # what ensure_image was asked for

    def on(self, program: str, handler: Handler) -> None:
        self.handlers[program] = handler

    def create(self, name: str, spec: SandboxSpec) -> SandboxInfo:
        check_name(name)
        check_mounts(spec, self.protected_paths)
        now = datetime.now(tz=UTC)
        expires = now + timedelta(seconds=spec.ttl_s)
        with self._lock:
            if name in self._boxes:
                msg = f"A sandbox named {name!r} exists."
                raise SandboxExists(msg, hint=f"pick another name, or remove the old one: {name}")
            self._counter += 1
            labels = {**spec.labels, LABEL_OWNER: self.owner, LABEL_SANDBOX: name,
                      LABEL_EXPIRES: str(int(expires.timestamp()))}
            info = SandboxInfo(id=f"fake{self._counter:012d}", name=name, image=spec.image,
                               status=SandboxStatus.RUNNING, labels=labels, created_at=now,
                               expires_at=expires)
            self._boxes[name] = _Box(info, spec, spec.workdir, dict(spec.env))
            if spec.network.mode == "allowlist":
                self._proxies.add(f"{self.owner}-egress")
        return info

    def get(self, name: str) -> SandboxInfo | None:
        box = self._boxes.get(name)
        return None if box is None else box.info

    def list(self, *, all_owners: bool = False, name_prefix: str = "") -> list[SandboxInfo]:
        return [box.info for box in self._boxes.values()
                if (all_owners or box.info.labels[LABEL_OWNER] == self.owner)
                and box.info.name.startswith(name_prefix)]

    def stop(self, name: str) -> None:
        box = self._require(name)
        box.info = dataclasses.replace(box.info, status=SandboxStatus.EXITED)

    def remove(self, name: str) -> None:
        with self._lock:
            self._boxes.pop(name, None)

    def close(self) -> None:
        return None

    def egress_read(self, cursors: Mapping[str, int]) -> EgressRead:
        start = cursors.get("fake", 0)
        return list(self.egress_log[start:]), {"fake": len(self.egress_log)}

    def egress_prune(self, *, all_owners: bool = False) -> Sequence[str]:
        if any(box.spec.network.mode == "allowlist" for box in self._boxes.values()):
            return []
        removed, self._proxies = sorted(self._proxies), set()
        return removed

    def images_prune(self, *, only_label: str | None = None) -> Sequence[PrunedImage]:
        removed, self.dangling_images = list(self.dangling_images), []
        return removed

    def egress_states(self) -> Sequence[ProxyState]:
        used = sum(box.spec.network.mode == "allowlist" for box in self._boxes.values())
        return [ProxyState(name, True, "running", used) for name in sorted(self._proxies)]

    def _require(self, name: str) -> _Box:
        box = self._boxes.get(name)
        if box is None:
            msg = f"No Canal sandbox named {name!r}."
            raise SandboxNotFound(msg, hint="list them with backend.list()", details={"name": name})
        return box

    def ready(self, name: str) -> SandboxInfo | None:
        box = self._boxes.get(name)
        return box.info if box is not None and box.info.running else None

    def warm(self, name: str) -> None:
        self._require(name)  # a fake sandbox has no session to start

    def ensure_image(self, tag: str, *, force: bool = False, on_event: Progress | None = None) -> BuiltImage:
        if tag not in CANAL_IMAGES:
            msg = f"{tag} is not one of Canal's images; the fake backend has only those."
            raise ImageNotFound(msg, details={"image": tag})
        self.images_built.append(tag)
        return BuiltImage(tag, image_id="sha256:fake", cached=not force, base="fake")

    def interrupt(self, name: str, signal: str) -> bool:
        return False  # fake commands end at once: nothing is ever running to interrupt

    def session_state(self, name: str) -> SessionState | None:
        box = self._boxes.get(name)
        if box is None:
            return None
        start = box.spec.env
        changed = tuple(sorted(k for k in set(box.env) | set(start) if box.env.get(k) != start.get(k)))
        path = box.env.get("PATH", "") if "PATH" in changed else ""
        return SessionState(cwd=box.cwd, changed=changed, path=path)

    def exec(self, name: str, command: str | Sequence[str], *, timeout_s: float | None = None,
             idle_timeout_s: float | None = None, stdin: bytes | BinaryIO | None = None,
             env: Mapping[str, str] | None = None, workdir: str | None = None,
             spool_dir: Path | None = None,
             on_output: Callable[[str, bytes], None] | None = None,
             expect_state: str | None = None, gate: Callable[[], None] | None = None) -> ExecResult:
        box = self._require(name)
        if gate is not None:
            gate()
        state = self.session_state(name)
        if expect_state and state is not None and state.digest() != expect_state:
            err = Spool(self.output_cap, spool_dir, "stderr")
            err.write(b"canal: the session changed after the policy decided; nothing ran\n")
            return ExecResult(stdout=Spool(0, spool_dir, "stdout").finish(), stderr=err.finish(),
                              exit_code=126, duration_s=0.0, session=state)
        argv = tuple(shlex.split(command)) if isinstance(command, str) else tuple(command)
        data = stdin if isinstance(stdin, bytes) else (stdin.read() if stdin is not None else b"")
        call = FakeCall(argv, data, {**box.env, **(env or {})}, workdir or box.cwd, box.files)
        self.calls.append(call)
        # as in the Docker session: per-command variables are undone after it, cwd and exports persist
        reply = self._dispatch(box, call, persist=isinstance(command, str) and not workdir)
        out, err = Spool(self.output_cap, spool_dir, "stdout"), Spool(self.output_cap, spool_dir, "stderr")
        out.write(reply.stdout)
        err.write(reply.stderr)
        if on_output is not None:
            for stream, chunk in (("stdout", reply.stdout), ("stderr", reply.stderr)):
                if chunk:
                    on_output(stream, chunk)
        return ExecResult(stdout=out.finish(), stderr=err.finish(), exit_code=reply.exit_code, duration_s=0.0,
                          timeout_s=timeout_s, idle_timeout_s=idle_timeout_s,
                          memory_limit_bytes=box.spec.limits.memory, session=self.session_state(name))

    def _dispatch(self, box: _Box, call: FakeCall, *, persist: bool) -> FakeReply:
        if not call.argv:
            return FakeReply()
        program, args = call.argv[0], call.argv[1:]
        if program in self.handlers:
            return self.handlers[program](call)
        if program == "cd" and persist:
            box.cwd = posixpath.normpath(posixpath.join(box.cwd, args[0] if args else "/"))
            return FakeReply()
        if program == "export" and persist:
            for item in args:
                key, _, value = item.partition("=")
                box.env[key] = value
            return FakeReply()
        return _builtin(program, args, call)

    def put_files(self, name: str, files: Mapping[str, bytes], *, dest: str = "/workspace",
                  max_bytes: int = MAX_TRANSFER_BYTES) -> None:
        box = self._require(name)
        total = sum(len(v) for v in files.values())
        if total > max_bytes:
            msg = f"Refused to send {total} bytes: the limit is {max_bytes}."
            raise FILE_TRANSFER_REFUSED(msg, hint="send fewer or smaller files, or raise max_bytes")
        for rel, data in files.items():
            box.files[str(PurePosixPath(dest, check_relative(rel)))] = bytes(data)

    def get_files(self, name: str, path: str, *, max_bytes: int = MAX_TRANSFER_BYTES) -> dict[str, bytes]:
        box = self._require(name)
        root = PurePosixPath(path)
        found = {str(PurePosixPath(p).relative_to(root.parent)): d for p, d in box.files.items()
                 if PurePosixPath(p) == root or PurePosixPath(p).is_relative_to(root)}
        if not found:
            msg = f"Could not read {path} in {name}: no such file."
            raise FILE_TRANSFER_REFUSED(msg, hint="check the path", details={"path": path})
        if sum(len(d) for d in found.values()) > max_bytes:
            msg = f"Refused to read {path}: larger than {max_bytes} bytes."
            raise FILE_TRANSFER_REFUSED(msg, hint="read a smaller path, or raise max_bytes")
        return found


def _builtin(program: str, args: tuple[str, ...], call: FakeCall) -> FakeReply:
    if program == "true":
        return FakeReply()
    if program == "false":
        return FakeReply(exit_code=1)
    if program == "echo":
        return FakeReply(stdout=" ".join(args).encode() + b"\n")
    if program == "pwd":
        return FakeReply(stdout=call.cwd.encode() + b"\n")
    if program == "printenv":
        value = call.env.get(args[0]) if args else None
        return FakeReply(stdout=f"{value}\n".encode()) if value is not None else FakeReply(exit_code=1)
    if program == "exit":
        return FakeReply(exit_code=int(args[0]) if args else 0)
    if program == "cat":
        if not args:
            return FakeReply(stdout=call.stdin)
        path = str(PurePosixPath(call.cwd, args[0]))
        if path in call.files:
            return FakeReply(stdout=call.files[path])
        return FakeReply(stderr=f"cat: {args[0]}: No such file or directory\n".encode(), exit_code=1)
    return FakeReply(stderr=f"{program}: command not found\n".encode(), exit_code=127)
