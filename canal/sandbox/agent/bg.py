"""The background agent (stdlib only; runs inside the sandbox, in an exec of its own beside the
session's agent). It runs background tasks and relays forwarded connections, so neither ever waits
for the foreground session, and the sandbox keeps ``network: none``: a forwarded connection reaches a
port on the sandbox's own loopback from inside, through this exec's stream.

It is the child subreaper of everything it starts (``agent.tree``), and the session's agent spares
its whole tree when it sweeps after a foreground command. Each task is a forked runner
(``agent.runner``). When the host closes the exec's stdin (the server stopped, ``canal down``), every
task's tree is killed and the agent exits.

Requests (host to agent): a 4-byte big-endian length, a JSON header (``op``; ``id`` when it wants a
reply), then ``len`` raw bytes. ``hello``; ``start`` (``n``, ``command``, ``spec``: the file the
session's agent wrote, ``timeout_s``, ``cap``); ``kill`` (``n``, ``why``); ``open`` (``s``, ``port``);
``data`` (``s``, bytes); ``ack`` (``s``, ``bytes`` the host passed on); ``close`` (``s``: no more data
from the host's side); ``reset`` (``s``: drop it).

Frames (agent to host), as the session agent's (type byte, 4-byte length, payload): ``x`` the JSON
reply to a request (its ``id`` echoed); ``v`` a JSON event (``ended`` of a task; ``opened``,
``failed``, ``ack``, ``eof``, ``closed`` of a connection); ``o``/``e`` a task's stdout/stderr (a 4-byte
task number, then bytes); ``d`` a connection's data (a 4-byte stream number, then bytes).

Flow control: at most ``WINDOW`` bytes of a connection are in flight each way; each side acks what it
passed on.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import resource
import selectors
import signal
import socket
import struct
import time

from canal.sandbox.agent.procs import parents, proc_stat
from canal.sandbox.agent.pump import write_frame
from canal.sandbox.agent.runner import run_forked
from canal.sandbox.agent.tree import kill_tree, reap, set_subreaper

TYPE_CHECKING = False  # typing's import is milliseconds of every session's start (mypy reads this the same)
if TYPE_CHECKING:
    from typing import Any

WINDOW = 256 * 1024
CHUNK = 65536
KILL_GRACE_S = 6.0  # more than a tree kill's own budget
DRAIN_S = 0.3  # output still arriving after the runner reported
_NUM = struct.Struct(">I")


class Task:
    def __init__(self, n: int, pid: int, fds: dict[str, int], marker: str, deadline: float | None,
                 cap: int) -> None:
        self.n = n
        self.pid = pid
        self.fds = fds  # "o", "e", "status" -> read end
        self.marker = marker
        self.deadline = deadline
        self.cap = cap
        self.sent = 0
        self.dropped = 0
        self.why: str | None = None  # why it is being killed: cancelled, hard_timeout, shutdown
        self.kill_at: float | None = None
        self.status: dict[str, Any] | None = None
        self.status_buf = b""
        self.reaped = False
        self.drain_until: float | None = None


class Stream:
    def __init__(self, s: int, port: int) -> None:
        self.s = s
        self.port = port
        self.sock: socket.socket | None = None
        self.family = socket.AF_INET
        self.connecting = True
        self.wbuf = bytearray()
        self.unacked = 0
        self.eof_in = False  # the host's side will send no more
        self.eof_out = False  # the port's side closed its writing half
        self.mask = 0
        self.first_error = 0  # the IPv4 attempt's error, reported when ::1 fails too


class BackgroundAgent:
    def __init__(self) -> None:
        self.sel = selectors.DefaultSelector()
        self.tasks: dict[int, Task] = {}
        self.streams: dict[int, Stream] = {}
        self.owners: dict[int, tuple[str, Any]] = {}  # fd -> (kind, task or stream)
        self.inbuf = bytearray()
        self.subreaper = set_subreaper()
        self.running = True

    # the loop ----------------------------------------------------------------------------------
    def serve(self) -> None:
        self.sel.register(0, selectors.EVENT_READ)  # read only when ready: a pipe read then never blocks
        try:
            while self.running:
                for key, mask in self.sel.select(self.wait_s()):
                    self.dispatch(key.fd, mask)
                self.tick()
        except BrokenPipeError:
            pass  # the host is gone
        finally:
            self.shutdown()

    def wait_s(self) -> float:
        times = [t for task in self.tasks.values() for t in (task.deadline, task.kill_at, task.drain_until)
                 if t is not None]
        if any(not task.reaped for task in self.tasks.values()):
            times.append(time.monotonic() + 0.5)  # a runner that ends is noticed within half a second
        return max(0.0, min(times) - time.monotonic()) if times else 60.0

    def dispatch(self, fd: int, mask: int) -> None:
        if fd == 0:
            self.read_requests()
            return
        kind, owner = self.owners[fd]
        if kind == "sock":
            self.on_socket(owner, mask)
        elif kind == "status":
            self.on_status(owner, fd)
        else:
            self.on_output(owner, kind, fd)

    def read_requests(self) -> None:
        chunk = os.read(0, 1 << 20)
        if not chunk:
            self.running = False
            return
        self.inbuf += chunk
        while len(self.inbuf) >= 4:
            size = _NUM.unpack(self.inbuf[:4])[0]
            if len(self.inbuf) < 4 + size:
                return
            header = json.loads(bytes(self.inbuf[4:4 + size]))
            length = int(header.get("len") or 0)
            if len(self.inbuf) < 4 + size + length:
                return
            payload = bytes(self.inbuf[4 + size:4 + size + length])
            del self.inbuf[:4 + size + length]
            reply = self.handle(header, payload)
            if reply is not None and "id" in header:
                write_frame(b"x", json.dumps(dict(reply, id=header["id"])).encode())

    def handle(self, req: dict[str, Any], payload: bytes) -> dict[str, Any] | None:
        op = req.get("op")
        if op == "hello":
            return self.hello(req)
        if op == "start":
            return self.start(req)
        if op == "kill":
            return {"running": self.kill(int(req["n"]), str(req.get("why") or "cancelled"))}
        stream = self.streams.get(int(req.get("s") or 0))
        if op == "open":
            self.open(int(req["s"]), int(req["port"]))
        elif stream is None:
            return None  # a late frame of a connection already closed
        elif op == "data":
            stream.wbuf += payload
            self.watch(stream)
        elif op == "ack":
            stream.unacked = max(0, stream.unacked - int(req.get("bytes") or 0))
            self.watch(stream)
        elif op == "close":
            stream.eof_in = True
            self.flush_eof(stream)
        elif op == "reset":
            self.drop(stream, None)
        return None

    def hello(self, req: dict[str, Any]) -> dict[str, Any]:
        fsize = req.get("fsize")
        if isinstance(fsize, int) and fsize > 0:  # the workspace quota's per-file bound, as the session's
            with contextlib.suppress(ValueError, OSError):
                resource.setrlimit(resource.RLIMIT_FSIZE, (fsize, fsize))
        stat = proc_stat(os.getpid())
        return {"pid": os.getpid(), "start": stat[2] if stat else None, "subreaper": self.subreaper}

    def tick(self) -> None:
        now = time.monotonic()
        for task in list(self.tasks.values()):
            if task.deadline is not None and now >= task.deadline and task.why is None:
                self.kill(task.n, "hard_timeout")
            if task.kill_at is not None and now >= task.kill_at and not task.reaped:
                self.force(task)
            self.check_reaped(task)
            if task.reaped and "status" not in task.fds:  # the runner ended and its report is read
                if task.drain_until is None:
                    task.drain_until = now + DRAIN_S
                outputs_done = not any(k in task.fds for k in ("o", "e"))
                if outputs_done or now >= task.drain_until:
                    self.end(task)

    # tasks -------------------------------------------------------------------------------------
    def start(self, req: dict[str, Any]) -> dict[str, Any]:
        n = int(req["n"])
        spec = self.read_spec(str(req.get("spec") or ""))
        if spec is None:
            return {"error": "the session's state for the task was not found (the session restarted?)"}
        spec.update(command=str(req["command"]), marker=str(req["marker"]),
                    env={**(spec.get("env") or {}), **(req.get("env") or {})})  # git's overrides win
        pipes = {k: os.pipe() for k in ("o", "e", "status")}
        pid = os.fork()
        if pid == 0:
            self.child(pipes, spec)
        for _read_end, write_end in pipes.values():
            os.close(write_end)
        fds = {k: r for k, (r, _) in pipes.items()}
        timeout = req.get("timeout_s")
        deadline = time.monotonic() + float(timeout) if timeout else None
        task = Task(n, pid, fds, spec["marker"], deadline, int(req.get("cap") or 0))
        self.tasks[n] = task
        for kind, fd in fds.items():
            os.set_blocking(fd, False)
            self.owners[fd] = (kind, task)
            self.sel.register(fd, selectors.EVENT_READ)
        return {"pid": pid}

    @staticmethod
    def read_spec(path: str) -> dict[str, Any] | None:
        """The session agent's spawn file: read once, then deleted (it holds the session's variables)."""
        if not path:
            return None
        try:
            with open(path, "rb") as fh:
                data: dict[str, Any] = json.loads(fh.read())
        except (OSError, ValueError):
            return None
        finally:
            with contextlib.suppress(OSError):
                os.unlink(path)
        return data

    def child(self, pipes: dict[str, tuple[int, int]], spec: dict[str, Any]) -> None:
        """In the forked runner: only its own pipes stay open (never the exec's stream)."""
        try:
            null = os.open(os.devnull, os.O_RDONLY)
            os.dup2(null, 0)
            os.dup2(pipes["o"][1], 1)
            os.dup2(pipes["e"][1], 2)
            os.dup2(pipes["status"][1], 3)
            os.closerange(4, 65536)
            signal.signal(signal.SIGPIPE, signal.SIG_DFL)
            run_forked(spec, 3)
        finally:
            os._exit(127)

    def on_output(self, task: Task, kind: str, fd: int) -> None:
        try:
            chunk = os.read(fd, CHUNK)
        except BlockingIOError:
            return
        if not chunk:
            self.close_fd(task, kind)
            return
        room = max(0, task.cap - task.sent) if task.cap else len(chunk)
        if room < len(chunk):
            task.dropped += len(chunk) - room
            chunk = chunk[:room]
        if chunk:
            task.sent += len(chunk)
            write_frame(kind.encode(), _NUM.pack(task.n) + chunk)

    def on_status(self, task: Task, fd: int) -> None:
        try:
            chunk = os.read(fd, 65536)
        except BlockingIOError:
            return
        task.status_buf += chunk
        if not chunk:
            with contextlib.suppress(ValueError):
                task.status = json.loads(task.status_buf or b"null")
            self.close_fd(task, "status")

    def close_fd(self, task: Task, kind: str) -> None:
        fd = task.fds.pop(kind, None)
        if fd is not None:
            self.sel.unregister(fd)
            self.owners.pop(fd, None)
            os.close(fd)

    def check_reaped(self, task: Task) -> None:
        if task.reaped:
            return
        try:
            pid, _ = os.waitpid(task.pid, os.WNOHANG)
        except ChildProcessError:
            pid = task.pid  # reaped already (a tree kill collects every ended child)
        task.reaped = pid == task.pid

    def kill(self, n: int, why: str) -> bool:
        """Ask the runner to kill its task's tree; forced after ``KILL_GRACE_S``. False when it has ended."""
        task = self.tasks.get(n)
        if task is None or task.reaped:
            return False
        if task.why is None:
            task.why = why
            task.kill_at = time.monotonic() + KILL_GRACE_S
        for sig in (signal.SIGCONT, signal.SIGUSR1):  # a stopped runner must wake to act
            with contextlib.suppress(OSError):
                os.kill(task.pid, sig)
        return True

    def force(self, task: Task) -> None:
        """The runner did not act in time (stopped, or killed by its own task): kill the tree from here."""
        kill_tree(frozenset({task.pid}), task.marker)
        task.kill_at = None
        self.check_reaped(task)

    def end(self, task: Task) -> None:
        if task.status is None:  # its runner died (the task killed it?): what it supervised is ours now
            kill_tree(frozenset({task.pid}), task.marker)
            self.kill_orphans()
        for kind in list(task.fds):
            self.close_fd(task, kind)
        del self.tasks[task.n]
        status = task.status or {}
        why = task.why or ("exited" if task.status is not None else "killed")
        event = {"ev": "ended", "n": task.n, "reason": why,
                 "exit_code": status.get("exit_code"), "left": status.get("left", 0),
                 "survivors": status.get("survivors", []), "bytes": task.sent, "dropped": task.dropped,
                 "subreaper": status.get("subreaper")}
        if task.status is None:
            event["detail"] = ("the task's runner did not report (it was stopped or killed); every process "
                               "of the task was killed")
        if status.get("error"):
            event["detail"] = str(status["error"])
        write_frame(b"v", json.dumps(event).encode())

    def kill_orphans(self) -> None:
        """Children of this agent that no runner supervises: left by a runner that died (as the agent is
        their subreaper). They belonged to a task that has ended, so they end too."""
        me = os.getpid()
        runners = frozenset(t.pid for t in self.tasks.values())
        orphans = frozenset(p for p, parent in parents().items() if parent == me and p not in runners)
        if orphans:
            kill_tree(orphans, None, exclude=runners)

    # connections -------------------------------------------------------------------------------
    def open(self, s: int, port: int) -> None:
        stream = Stream(s, port)
        self.streams[s] = stream
        self.connect(stream)

    def connect(self, stream: Stream) -> None:
        try:
            sock = socket.socket(stream.family, socket.SOCK_STREAM)
        except OSError as exc:  # no IPv6 in this sandbox
            self.connect_failed(stream, exc.errno or errno.EAFNOSUPPORT)
            return
        sock.setblocking(False)
        with contextlib.suppress(OSError):  # relayed writes are whole messages: never hold one back
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        stream.sock = sock
        address = "127.0.0.1" if stream.family == socket.AF_INET else "::1"
        code = sock.connect_ex((address, stream.port))
        if code in (0, errno.EINPROGRESS):
            self.owners[sock.fileno()] = ("sock", stream)
            self.watch(stream)
            if code == 0:
                self.connected(stream)
            return
        sock.close()
        self.connect_failed(stream, code)

    def connected(self, stream: Stream) -> None:
        stream.connecting = False
        write_frame(b"v", json.dumps({"ev": "opened", "s": stream.s}).encode())
        self.watch(stream)

    def connect_failed(self, stream: Stream, code: int) -> None:
        if stream.family == socket.AF_INET:
            stream.family = socket.AF_INET6  # a server listening on ::1 only
            stream.first_error = code
            self.unwatch(stream)
            self.connect(stream)
            return
        code = stream.first_error or code
        self.streams.pop(stream.s, None)
        write_frame(b"v", json.dumps({"ev": "failed", "s": stream.s, "error": os.strerror(code),
                                      "errno": errno.errorcode.get(code, str(code))}).encode())

    def on_socket(self, stream: Stream, mask: int) -> None:
        sock = stream.sock
        assert sock is not None
        if stream.connecting:
            code = sock.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR)
            if code:
                self.unwatch(stream)
                sock.close()
                self.connect_failed(stream, code)
            else:
                self.connected(stream)
            return
        try:
            if mask & selectors.EVENT_WRITE and stream.wbuf:
                sent = sock.send(stream.wbuf[:CHUNK])
                del stream.wbuf[:sent]
                write_frame(b"v", json.dumps({"ev": "ack", "s": stream.s, "bytes": sent}).encode())
                self.flush_eof(stream)
            if mask & selectors.EVENT_READ:
                self.read_socket(stream, sock)
        except (BlockingIOError, InterruptedError):
            pass
        except OSError as exc:
            self.drop(stream, exc.strerror or str(exc))
            return
        if stream.s in self.streams:
            self.watch(stream)

    def read_socket(self, stream: Stream, sock: socket.socket) -> None:
        data = sock.recv(min(CHUNK, WINDOW - stream.unacked))
        if data:
            stream.unacked += len(data)
            write_frame(b"d", _NUM.pack(stream.s) + data)
            return
        stream.eof_out = True
        write_frame(b"v", json.dumps({"ev": "eof", "s": stream.s}).encode())
        self.maybe_closed(stream)

    def flush_eof(self, stream: Stream) -> None:
        if stream.eof_in and not stream.wbuf and stream.sock is not None and not stream.connecting:
            with contextlib.suppress(OSError):
                stream.sock.shutdown(socket.SHUT_WR)
            self.maybe_closed(stream)

    def maybe_closed(self, stream: Stream) -> None:
        if stream.eof_in and stream.eof_out and not stream.wbuf:
            self.drop(stream, None)

    def drop(self, stream: Stream, error: str | None) -> None:
        self.unwatch(stream)
        if stream.sock is not None:
            stream.sock.close()
        if self.streams.pop(stream.s, None) is not None:
            event: dict[str, Any] = {"ev": "closed", "s": stream.s}
            if error:
                event["error"] = error
            write_frame(b"v", json.dumps(event).encode())

    def watch(self, stream: Stream) -> None:
        sock = stream.sock
        if sock is None or stream.s not in self.streams:
            return
        mask = 0
        if stream.connecting or stream.wbuf:
            mask |= selectors.EVENT_WRITE
        if not stream.connecting and not stream.eof_out and stream.unacked < WINDOW:
            mask |= selectors.EVENT_READ
        if mask == stream.mask:
            return
        if stream.mask and mask:
            self.sel.modify(sock, mask)
        elif mask:
            self.sel.register(sock, mask)
        else:
            self.sel.unregister(sock)
        stream.mask = mask

    def unwatch(self, stream: Stream) -> None:
        if stream.sock is not None and stream.mask:
            self.sel.unregister(stream.sock)
            stream.mask = 0
        if stream.sock is not None:
            self.owners.pop(stream.sock.fileno(), None)

    # the end -----------------------------------------------------------------------------------
    def shutdown(self) -> None:
        """The host went away: every task's tree is killed (nothing outlives its channel)."""
        for task in list(self.tasks.values()):
            kill_tree(frozenset({task.pid}), task.marker)
        for stream in list(self.streams.values()):
            if stream.sock is not None:
                stream.sock.close()
        reap()


def main() -> None:
    signal.signal(signal.SIGPIPE, signal.SIG_IGN)  # a write to a host that went away raises instead
    BackgroundAgent().serve()
