"""The ``canal`` command as a thin client of the per-user server (standard library only).

It forwards what a process is (argv, working directory, environment, umask, which of its streams are
terminals) and the server runs the very same CLI for it, streaming stdout and stderr back and ending
with the exit code. So every command behaves as it does in-process, while the policy, the engine
client and the sandbox sessions stay warm in the server, shared by every call and every front door.

Stdin is read only when the command reads it (the server grants credit as it asks). SIGINT, SIGTERM
and SIGHUP are forwarded: the command in the sandbox is killed and its result reports why; a second
Ctrl-C leaves at once (the server, seeing the client gone, kills the command all the same).

``CANAL_NO_SERVER=1`` runs everything in this process. ``canal approve``, ``config`` and ``init`` always
do: a person answers them at this terminal. ``canal server status|stop|logs`` are the client's own.
"""

from __future__ import annotations

import errno
import os
import select
import sys

from canal.client import wire
from canal.client.lifecycle import connect_or_start
from canal.client.paths import ServerPaths, build_id, server_paths

TYPE_CHECKING = False  # not typing's: its import is 3-5 ms of every call (mypy reads this name the same)
if TYPE_CHECKING:
    import signal
    from collections.abc import Sequence
    from typing import Any, NoReturn

    from canal.client.errors import ServerError
else:  # the signal module's functions and numbers without its enums (enum: 3-5 ms of every call)
    import _signal as signal

# a person answers at their own terminal; swerex serve is a long-lived server of its own in the foreground
LOCAL_COMMANDS = frozenset({"approve", "config", "init", "swerex"})
SIGNAL_NAMES: dict[int, str] = {signal.SIGINT: "INT", signal.SIGTERM: "TERM", signal.SIGHUP: "HUP"}
CANAL_ERROR_EXIT = 125


def main(argv: Sequence[str] | None = None) -> NoReturn:
    args = list(sys.argv[1:] if argv is None else argv)
    if os.environ.get("CANAL_NO_SERVER") == "1" or _command(args) in LOCAL_COMMANDS:
        from canal.cli.main import cli

        cli.main(args=args, prog_name="canal")
        raise SystemExit(0)
    try:
        if _command(args) == "server":
            from canal.cli.server_admin import server_command

            raise SystemExit(server_command(args[args.index("server") + 1:]))
        paths = server_paths()
        raise SystemExit(Call(paths, args).run())
    except Exception as exc:
        from canal.client.errors import ServerError  # the error root loads on errors only

        if not isinstance(exc, ServerError):
            raise
        _report(exc, args)
        raise SystemExit(exc.exit_code) from None


GROUP_OPTIONS_WITH_VALUE = frozenset({"-C", "--project"})  # the canal group's own options


def _command(args: Sequence[str]) -> str:
    """The command name: the first word that is neither an option nor the value of a group option."""
    words = iter(args)
    for word in words:
        if word in GROUP_OPTIONS_WITH_VALUE:
            next(words, None)
        elif not word.startswith("-"):
            return word
    return ""


def _report(exc: ServerError, args: Sequence[str]) -> None:
    # the words (next actions, the redactor) load only on this error path: the hot path stays lean
    from canal.cli.words import error_data, error_text

    options = args[: args.index("--")] if "--" in args else args
    if "--json" in options:
        import json

        sys.stdout.write(json.dumps(error_data(exc), indent=2) + "\n")
    else:
        sys.stderr.write(error_text(exc) + "\n")


def _lost(msg: str, hint: str) -> Exception:
    from canal.client.errors import SERVER_LOST

    return SERVER_LOST(msg, hint=hint)


def request(args: Sequence[str]) -> dict[str, Any]:
    """What the server needs to run ``canal ARGS`` as this process would."""
    env = dict(os.environ)
    tty = {"stdin": os.isatty(0), "stdout": os.isatty(1), "stderr": os.isatty(2)}
    if tty["stdout"] and "COLUMNS" not in env:
        try:
            size = os.get_terminal_size(1)
            env.update(COLUMNS=str(size.columns), LINES=str(size.lines))
        except OSError:
            pass
    umask = os.umask(0o077)
    os.umask(umask)
    try:
        cwd = os.getcwd()
    except OSError:
        cwd = "/"
    encoding = getattr(sys.stdout, "encoding", None) or "utf-8"
    return {"op": "cli", "argv": list(args), "cwd": cwd, "env": env, "umask": umask, "tty": tty,
            "encoding": encoding, "errors": getattr(sys.stdout, "errors", None) or "strict"}


class Call:
    """One forwarded command: connect (starting the server if needed), then pump frames."""

    def __init__(self, paths: ServerPaths, args: Sequence[str]) -> None:
        self.paths = paths
        self.args = list(args)
        self.credit = 0
        self.stdin_open = True
        self.signals: list[int] = []
        self.interrupted = 0

    def run(self) -> int:
        sock = connect_or_start(self.paths, build_id())
        wire.send_json(sock, wire.REQUEST, request(self.args))
        wake_r, wake_w = os.pipe()
        os.set_blocking(wake_w, False)
        previous = {s: signal.signal(s, self._on_signal) for s in SIGNAL_NAMES}
        old_wakeup = signal.set_wakeup_fd(wake_w)
        try:
            return self._pump(sock, wake_r)
        finally:
            signal.set_wakeup_fd(old_wakeup)
            for s, handler in previous.items():
                signal.signal(s, handler)
            for fd in (wake_r, wake_w):
                os.close(fd)
            sock.close()

    def _on_signal(self, signum: int, _frame: object) -> None:
        self.signals.append(signum)

    def _pump(self, sock: wire.Socket, wake: int) -> int:
        while True:
            watch: list[int] = [sock.fileno(), wake]
            if self.credit > 0 and self.stdin_open:
                watch.append(0)
            ready, _, _ = select.select(watch, [], [])
            if wake in ready:
                os.read(wake, 512)
                if self._forward_signals(sock):
                    return 128 + signal.SIGINT
            if 0 in ready:
                self._send_stdin(sock)
            if sock.fileno() in ready:
                code = self._receive(sock)
                if code is not None:
                    return code

    def _forward_signals(self, sock: wire.Socket) -> bool:
        """Send pending signals to the server; True when the person insists (a second Ctrl-C)."""
        pending, self.signals = self.signals, []
        for signum in pending:
            if signum == signal.SIGINT:
                self.interrupted += 1
                if self.interrupted > 1:
                    return True
            try:
                wire.send_json(sock, wire.SIGNAL, {"signal": SIGNAL_NAMES[signum]})
            except OSError:
                return True
        return False

    def _send_stdin(self, sock: wire.Socket) -> None:
        try:
            data = os.read(0, min(self.credit, 65536))
        except OSError:
            data = b""
        if not data:
            self.stdin_open = False
        try:
            if data:
                self.credit -= len(data)
                wire.send(sock, wire.STDIN, data)
            else:
                wire.send(sock, wire.STDIN_END)
        except OSError:
            self.stdin_open = False  # the server finished first: its answer is still there to read

    def _receive(self, sock: wire.Socket) -> int | None:
        try:
            kind, payload = wire.recv(sock)
        except (wire.WireError, OSError) as exc:
            msg = (f"The Canal server stopped while it handled this call ({exc}). "
                   "If a command was running, the audit log keeps its intent record.")
            raise _lost(msg, "canal audit show   (then run the command again)") from exc
        if kind in (wire.STDOUT, wire.STDERR):
            return self._write(1 if kind == wire.STDOUT else 2, payload)
        if kind == wire.CREDIT:
            self.credit += int(wire.loads(payload).get("bytes", 0))
        elif kind == wire.EXIT:
            return int(wire.loads(payload).get("exit", CANAL_ERROR_EXIT))
        elif kind == wire.DATA:
            msg = f"The Canal server refused the call: {wire.loads(payload).get('error')}"
            raise _lost(msg, "canal server stop   (then run the command again)")
        return None

    @staticmethod
    def _write(fd: int, data: bytes) -> int | None:
        view = memoryview(data)
        while view:
            try:
                view = view[os.write(fd, view):]
            except BlockingIOError:
                select.select([], [fd], [])
            except OSError as exc:
                if exc.errno == errno.EPIPE:
                    return 128 + signal.SIGPIPE  # the reader went away, as `cmd | head` does
                raise
        return None
