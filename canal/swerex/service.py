"""SWE-ReX's runtime operations on a Canal project: named bash sessions, one-shot commands, files.

Each SWE-ReX session is a sandbox of its own (``swerex-<name>``): its own shell, so a variable set in one
is unset in another, as SWE-ReX promises; all of them see the one workspace, as SWE-ReX's sessions see
one machine. Every command goes through the pipeline ``canal run`` uses (policy, checkpoint, redaction,
audit) with the caller recorded as ``swerex``; the protocol cannot ask a person, so a command the policy
would confirm is refused (the project's sessions are unattended here) and the refusal comes back as a
SWE-ReX error carrying Canal's code and reason. Files are read and written with Canal's file operations
(confined to the workspace, settings files protected, replaced files kept in the trash): a path is the
sandbox's, under ``sandbox.workdir``.

Where Canal answers otherwise on purpose (docs/swerex.md): interactive programs (``is_interactive_command``)
are refused, since a Canal command runs to its end with no terminal; an interrupt ends nothing, because
a command that outlives its timeout is already killed with its whole process tree.
"""

from __future__ import annotations

import io
import re
import subprocess
import threading
import zipfile
from dataclasses import dataclass, field
from pathlib import PurePosixPath
from typing import Any, BinaryIO, cast

from canal.core.errors import CanalError
from canal.runtime.api import Canal
from canal.runtime.run.result import RunResult

ACTOR = "swerex"
PREFIX = "swerex-"
EXEC_SANDBOX = "swerex-exec"
MAX_OUTPUT = 32 * 1024 * 1024  # per stream, as SWE-ReX returns it whole
INTERACTIVE_LIMIT = 10.0
_SESSION = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,40}")
_EXC = "swerex.exceptions."
# the exception classes SWE-ReX's client re-raises (by module path)
VALUE_ERROR, FILE_NOT_FOUND = "builtins.ValueError", "builtins.FileNotFoundError"
PERMISSION = "builtins.PermissionError"
EXISTS, NO_SESSION = f"{_EXC}SessionExistsError", f"{_EXC}SessionDoesNotExistError"
REFUSED, NONZERO = f"{_EXC}SwerexException", f"{_EXC}NonZeroExitCodeError"
TIMEOUT, SYNTAX = f"{_EXC}CommandTimeoutError", f"{_EXC}BashIncorrectSyntaxError"


@dataclass
class SwerexError(Exception):
    """An error as SWE-ReX's client re-raises it: the class it names, its message, its extra data."""

    class_path: str
    message: str
    extra_info: dict[str, Any] = field(default_factory=dict)

    def transfer(self) -> dict[str, Any]:
        return {"message": self.message, "class_path": self.class_path, "traceback": "",
                "extra_info": self.extra_info}


def _canal_refusal(exc: CanalError) -> SwerexError:
    return SwerexError(REFUSED, f"{exc.code}: {exc.message} (Canal)",
                       {"canal_code": exc.code, "canal_hint": exc.hint})


class SwerexService:
    """The operations of SWE-ReX's server over one project (one instance per ``canal swerex serve``)."""

    def __init__(self, canal: Canal) -> None:
        self.canal = canal
        self.sessions: dict[str, str] = {}  # SWE-ReX session -> Canal sandbox
        self._lock = threading.Lock()
        self.workdir = PurePosixPath(canal.config.sandbox.workdir)
        # the same folder as the host names it: a client on this host may use either name
        self.host_root = PurePosixPath(canal.project_dir)

    # -- sessions ---------------------------------------------------------------------------------
    def create_session(self, req: dict[str, Any]) -> dict[str, Any]:
        name = str(req.get("session", "default"))
        if not _SESSION.fullmatch(name):
            raise SwerexError(VALUE_ERROR, f"session name {name!r} is not a name (letters, digits, "
                              "_.-, at most 41 characters)")
        with self._lock:
            if name in self.sessions:
                raise SwerexError(EXISTS, f"session {name} already exists")
            self.sessions[name] = f"{PREFIX}{name}"
        output = ""
        try:
            self._guarded(lambda: self.canal.up(self.sessions[name]))
            for line in req.get("startup_source") or []:
                done = self._run(f"source {_single_quoted(str(line))}", self.sessions[name], None)
                output += _output(self.canal, done)
        except BaseException:
            with self._lock:
                self.sessions.pop(name, None)
            raise
        return {"output": output, "session_type": "bash"}

    def close_session(self, req: dict[str, Any]) -> dict[str, Any]:
        name = str(req.get("session", "default"))
        with self._lock:
            sandbox = self.sessions.pop(name, None)
        if sandbox is None:
            raise SwerexError(NO_SESSION, f"session {name!r} does not exist")
        self._guarded(lambda: self.canal.down(sandbox))
        return {"session_type": "bash"}

    def run_in_session(self, action: dict[str, Any]) -> dict[str, Any]:
        name = str(action.get("session", "default"))
        sandbox = self.sessions.get(name)
        if sandbox is None:
            raise SwerexError(NO_SESSION, f"session {name!r} does not exist")
        if action.get("action_type") == "bash_interrupt":  # nothing runs between two requests here
            return _observation("", 0)
        command = str(action.get("command", ""))
        if action.get("is_interactive_command") or action.get("is_interactive_quit"):
            return self._interactive(command, sandbox, action.get("timeout"))
        _check_syntax(command)
        if not _has_commands(command):
            return _observation("", 0)
        done = self._run(command, sandbox, action.get("timeout"))
        output = _output(self.canal, done)
        if action.get("check", "raise") == "raise" and done.exit_code != 0:
            msg = (f"Command {command!r} failed with exit code {done.exit_code}. Here is the output:\n"
                   f"{output!r}")
            raise SwerexError(NONZERO, _with(action.get("error_msg"), msg))
        return _observation(output, done.exit_code)

    def _interactive(self, command: str, sandbox: str, timeout: Any) -> dict[str, Any]:
        """An interactive program runs as a command with its stdin open and no terminal, so no prompt it
        would print to a terminal can be expected: it ends at its timeout (10 s unless given) and says so."""
        limit = float(timeout) if timeout else INTERACTIVE_LIMIT
        stdin = cast(BinaryIO, _OpenStdin(limit + 1.0))
        done = self._guarded(lambda: self.canal.run(command, sandbox=sandbox, timeout_s=limit,
                                                    unattended=True, stdin=stdin))
        if done.status == "timeout":
            msg = (f"timeout after {limit} seconds while running command {command!r}: Canal runs it "
                   "without a terminal, so an interactive prompt never appears (docs/swerex.md)")
            raise SwerexError(TIMEOUT, msg)
        _check_outcome(done, timeout)
        return _observation(_output(self.canal, done), done.exit_code)

    # -- one-shot commands ------------------------------------------------------------------------
    def execute(self, req: dict[str, Any]) -> dict[str, Any]:
        command = req.get("command", "")
        shell = bool(req.get("shell", False))
        if isinstance(command, str) and not shell:
            command = [command]
        if isinstance(command, str) and not _has_commands(command):
            return {"stdout": "", "stderr": "", "exit_code": 0}
        timeout = req.get("timeout")
        env = {str(k): str(v) for k, v in (req.get("env") or {}).items()}
        cwd = req.get("cwd")
        if isinstance(command, list):
            argv = [str(a) for a in command]
            if cwd:  # the one way to start elsewhere without a shell string: env -C DIR (coreutils)
                argv = ["env", "-C", str(cwd), *argv]
            done = self._guarded(lambda: self.canal.run_argv(argv, env=env or None, sandbox=EXEC_SANDBOX,
                                                             timeout_s=timeout, unattended=True))
        else:
            text = command if not cwd else f"cd {_single_quoted(str(cwd))} && {command}"
            if env:
                msg = "env with shell=True is not supported by Canal: set the variables in the command"
                raise SwerexError(VALUE_ERROR, msg)
            done = self._run(text, EXEC_SANDBOX, timeout)
        _check_outcome(done, timeout)
        stdout, stderr = _streams(self.canal, done)
        if req.get("merge_output_streams"):  # stdout, then stderr: Canal keeps them apart
            stdout, stderr = stdout + stderr, ""
        if req.get("check") and done.exit_code != 0:
            msg = (f"Command {command!r} failed with exit code {done.exit_code}. Stdout:\n{stdout!r}\n"
                   f"Stderr:\n{stderr!r}")
            raise SwerexError(NONZERO, _with(req.get("error_msg"), msg))
        return {"stdout": stdout, "stderr": stderr, "exit_code": done.exit_code}

    # -- files ------------------------------------------------------------------------------------
    def read_file(self, req: dict[str, Any]) -> dict[str, Any]:
        rel = self._relative(str(req.get("path", "")))
        try:
            data = self.canal.files.read_bytes(rel)
        except CanalError as exc:
            raise _canal_refusal(exc) from None
        if data is None:
            raise SwerexError(FILE_NOT_FOUND, f"[Errno 2] No such file or directory: "
                              f"'{req.get('path')}'")
        text = data.decode(req.get("encoding") or "utf-8", errors=req.get("errors") or "strict")
        return {"content": self.canal.redactor(text)}

    def write_file(self, req: dict[str, Any]) -> dict[str, Any]:
        self.write_bytes(str(req.get("path", "")), str(req.get("content", "")).encode())
        return {}

    def write_bytes(self, path: str, data: bytes) -> None:
        rel = self._relative(path)
        self._guarded(lambda: self.canal.files.write(rel, data))

    def upload(self, target: str, data: bytes, *, unzip: bool) -> dict[str, Any]:
        if not unzip:
            self.write_bytes(target, data)
            return {}
        try:
            archive = zipfile.ZipFile(io.BytesIO(data))
        except zipfile.BadZipFile as exc:
            raise SwerexError(VALUE_ERROR, f"the upload is not a zip archive: {exc}") from None
        with archive:
            files = [info for info in archive.infolist() if not info.is_dir()]
            for info in files:  # every name is checked before anything is written: refused whole
                name = PurePosixPath(info.filename)
                if name.is_absolute() or ".." in name.parts:
                    raise SwerexError(VALUE_ERROR, f"the archive names {info.filename!r}, outside "
                                      "the target")
            for info in files:
                self.write_bytes(str(PurePosixPath(target) / info.filename), archive.read(info))
        return {}

    def close(self) -> dict[str, Any]:
        with self._lock:
            sandboxes = [*self.sessions.values(), EXEC_SANDBOX]
            self.sessions.clear()
        for sandbox in sandboxes:
            self._guarded(lambda s=sandbox: self.canal.down(s))
        return {}

    # -- helpers ------------------------------------------------------------------------------------
    def _relative(self, path: str) -> str:
        """A path of the sandbox (under ``sandbox.workdir``), or of the host's project folder, as a path
        of the workspace; anything else is refused (Canal's file operations stay in the workspace)."""
        given = PurePosixPath(path)
        if not given.is_absolute():
            return str(given)
        for root in (self.workdir, self.host_root):
            if given.is_relative_to(root):
                return str(given.relative_to(root)) if given != root else "."
        raise SwerexError(PERMISSION, f"PATH_OUTSIDE_WORKSPACE: {path} is outside the workspace "
                          f"{self.workdir} (Canal): files are read and written there only")

    def _run(self, command: str, sandbox: str, timeout: Any) -> RunResult:
        done: RunResult = self._guarded(lambda: self.canal.run(command, sandbox=sandbox, timeout_s=timeout,
                                                               unattended=True))
        _check_outcome(done, timeout)
        return done

    @staticmethod
    def _guarded(call: Any) -> Any:
        try:
            return call()
        except CanalError as exc:
            raise _canal_refusal(exc) from None


class _OpenStdin(io.RawIOBase):
    """A stdin that stays open (nothing to read) for ``seconds``, then ends: an interactive program waits
    on it as on a terminal nobody types into."""

    def __init__(self, seconds: float) -> None:
        self.ended = threading.Event()
        self.seconds = seconds

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        self.ended.wait(self.seconds)
        return 0


def _check_outcome(done: RunResult, timeout: Any) -> None:
    if done.status == "timeout":
        raise SwerexError(TIMEOUT, f"timeout after {timeout} seconds while running "
                          "the command (Canal killed its whole process tree)")
    if done.status in ("denied", "confirmation_required"):
        code = "POLICY_DENIED" if done.status == "denied" else "CONFIRMATION_REQUIRED"
        rules = list(done.decision.rule_ids) if done.decision else []
        raise SwerexError(REFUSED, f"{code}: {done.reason} (Canal policy; nothing ran)",
                          {"canal_code": code, "rule_ids": rules})


def _streams(canal: Canal, done: RunResult) -> tuple[str, str]:
    """The command's whole stdout and stderr (redacted), as SWE-ReX returns them: not the presenter's view."""
    if done.exec_result is None:
        return done.output, done.stderr or ""
    redact = canal.redactor
    return tuple(redact(_read(out).decode(errors="backslashreplace"))  # type: ignore[return-value]
                 for out in (done.exec_result.stdout, done.exec_result.stderr))


def _read(out: Any) -> bytes:
    with out.open() as fh:
        return bytes(fh.read(MAX_OUTPUT))


def _output(canal: Canal, done: RunResult) -> str:
    stdout, stderr = _streams(canal, done)
    return stdout + stderr


def _observation(output: str, exit_code: int | None) -> dict[str, Any]:
    return {"output": output, "exit_code": exit_code, "failure_reason": "", "expect_string": "",
            "session_type": "bash"}


def _with(prefix: Any, msg: str) -> str:
    return f"{prefix}: {msg}" if prefix else msg


def _single_quoted(text: str) -> str:
    return "'" + text.replace("'", "'\\''") + "'"


def _has_commands(command: str) -> bool:
    """Whether anything but blank lines and comments is there (SWE-ReX runs nothing for those)."""
    return any(line.strip() and not line.strip().startswith("#") for line in command.splitlines())


def _check_syntax(command: str) -> None:
    """``bash -n`` on the host, the command on its stdin (parsed, never run): SWE-ReX's syntax check."""
    done = subprocess.run(["bash", "-n"], input=command.encode(), capture_output=True, timeout=10,
                          check=False)
    if done.returncode == 0:
        return
    stdout = done.stdout.decode(errors="backslashreplace")
    stderr = done.stderr.decode(errors="backslashreplace")
    msg = (f"Error (exit code {done.returncode}) while checking bash command \n{command!r}\n"
           f"---- Stderr ----\n{stderr}\n---- Stdout ----\n{stdout}")
    raise SwerexError(SYNTAX, msg, {"bash_stdout": stdout, "bash_stderr": stderr})
