"""A persistent in-container session: the agent (``canal.sandbox.agent``) in one long-lived exec.

The agent (with its helper modules, as one program) is started with ``python3 -c`` and reached
through the exec's hijacked socket. Docker multiplexes that stream (8-byte headers: stream id,
length); inside stream 1 the agent sends its own frames (type byte, length, payload), so command
output can never be mistaken for protocol. Every request carries a random nonce that the final
frame must echo. A session that goes silent past the grace period, closes, or answers out of
protocol is ``SessionBroken``: the caller drops it.
"""

from __future__ import annotations

import contextlib
import json
import secrets
import select
import socket
import struct
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Protocol, TypeVar

import docker

from canal.core.next import act
from canal.sandbox.docker.agent_program import AGENT_NAME, agent_program
from canal.sandbox.docker.errors import translating
from canal.sandbox.errors import SESSION_FAILED, SandboxError
from canal.sandbox.protocol import (
    Control,
    Hello,
    HelloReply,
    RunCommand,
    RunReply,
    SessionBroken,
    SpawnReply,
    SpawnSpec,
    WorkspaceQuota,
    parse_reply,
)
from canal.sandbox.result import SessionState
from canal.sandbox.spool import Spool

# The agent beats every second while a command runs. A generous grace: a CPU-starved host (2 cores
# under load) must not be mistaken for a wedged session, which would kill the command.
SILENCE_GRACE_S = 15.0
DEADLINE_GRACE_S = 10.0
_HEADER = struct.Struct(">BxxxI")
_FRAME = struct.Struct(">cI")
MAX_FRAME = 4 * 1024 * 1024  # the agent sends at most 64 KiB at a time; more is out of protocol
RECV_BYTES = 1024 * 1024  # one receive takes at most this (what the socket holds)


MAX_STDIN = 16 * 1024 * 1024  # a streamed stdin past this is cut (the command sees end of file)
STDIN_CHUNK = 64 * 1024
DRAIN_S = 2.0  # what a process that failed to start said, read until its end for at most this long
OnOutput = Callable[[str, bytes], None]  # ("stdout" | "stderr", bytes) as they arrive
R = TypeVar("R", HelloReply, RunReply, SpawnReply)


def compact_env(header: dict[str, object], last: object) -> tuple[dict[str, object], object]:
    """A run request's variables as sent: ``env_same`` instead of the same ``env`` as the session's
    previous run request (the git guard's forty-odd variables, every command: 2 KiB of JSON each way).
    Returns the header to send and what the agent now holds (``agent.main.Agent.take_env``)."""
    if header.get("op") != "run":
        return header, last
    env = header.get("env") or {}
    if env and env == last:
        return {**{k: v for k, v in header.items() if k != "env"}, "env_same": True}, last
    return header, env


class Reader(Protocol):
    """A binary stream to feed a command's stdin from (``read1`` when it has one, else ``read``)."""

    def read(self, n: int = -1, /) -> bytes: ...


@dataclass(frozen=True)
class Request:
    command: RunCommand
    stdin: bytes | Reader | None = None  # bytes are sent with the request; a reader is streamed
    deadline_s: float | None = None
    gate: Callable[[], None] | None = None  # the command starts only once it returned (``_exchange``)


class _Demux:
    """Reads Docker's multiplexed stream; stdout bytes are buffered, stderr kept for diagnostics.

    Each receive takes what the socket holds (up to ``RECV_BYTES``) and unpacks every whole frame in
    it: a big output comes in a few large reads rather than four small ones per 64 KiB frame, each of
    which waited for the interpreter lock while another thread (the early save) held it."""

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self.buf = bytearray()
        self.raw = bytearray()  # received, not yet unpacked (the start of a frame)
        self.agent_stderr = bytearray()
        self.first = bytearray()  # the first bytes of stdout, to explain an agent that never spoke

    def _recv(self) -> bytes:
        try:
            chunk = self.sock.recv(RECV_BYTES)
        except TimeoutError as exc:
            msg = "the session stopped answering"
            raise SessionBroken(msg) from exc
        except OSError as exc:
            msg = f"the session connection failed: {exc}"
            raise SessionBroken(msg) from exc
        if not chunk:
            msg = "the session ended"
            raise SessionBroken(msg)
        return chunk

    def fill(self) -> None:
        chunk = self._recv()
        data: bytes | bytearray = chunk
        if self.raw:  # the start of a frame came with the last receive
            self.raw += chunk
            data = self.raw
        at = self._unpack(data)
        self.raw = bytearray(data[at:])

    def _unpack(self, data: bytes | bytearray) -> int:
        """Every whole frame of ``data`` into ``buf`` (stdout) or ``agent_stderr``; where the rest starts.
        Payloads are copied once, into ``buf``."""
        at = 0
        with memoryview(data) as view:
            while len(data) - at >= _HEADER.size:
                stream, length = _HEADER.unpack_from(data, at)
                start, end = at + _HEADER.size, at + _HEADER.size + length
                if end > len(data):
                    break
                if stream == 1:
                    self.buf += view[start:end]
                    if len(self.first) < 512:
                        self.first += view[start:min(end, start + 512 - len(self.first))]
                else:
                    self.agent_stderr = (self.agent_stderr + view[start:end])[-8192:]
                at = end
        return at

    @property
    def pending(self) -> bool:
        """Bytes received and not yet read."""
        return bool(self.buf or self.raw)

    def read(self, n: int) -> bytes:
        while len(self.buf) < n:
            self.fill()
        out = bytes(self.buf[:n])
        del self.buf[:n]
        return out


class Session:
    """One agent process in one container. Not thread-safe: the backend holds a lock per sandbox."""

    def __init__(self, client: docker.DockerClient, container_id: str, *, user: str, workdir: str,
                 init: bool, quota: WorkspaceQuota | None = None) -> None:
        self.container_id = container_id
        mode = "serve" if init else "serve-noinit"
        launch = agent_program()
        argv = ["python3", "-c", launch.boot, AGENT_NAME, mode]
        with translating("start a session in", name=container_id):
            api = client.api
            exec_id = api.exec_create(container_id, argv, stdin=True, stdout=True, stderr=True,
                                      tty=False, user=user, workdir=workdir)["Id"]
            raw = api.exec_start(exec_id, socket=True)
        self._raw = raw  # a SocketIO over the socket: both must be closed to release the fd
        self.sock: socket.socket = getattr(raw, "_sock", raw)
        self.sock.settimeout(SILENCE_GRACE_S)
        self.demux = _Demux(self.sock)
        self.closed = False
        try:  # what the loader on the command line reads first
            send_program(self.sock, self.demux, launch.data, SILENCE_GRACE_S)
        except SessionBroken as exc:
            raise self._failed(exc) from exc
        except OSError as exc:
            raise self._failed(SessionBroken(f"the session connection failed: {exc}")) from exc
        self._send_lock = threading.Lock()
        self._current: str | None = None  # the nonce of the request in flight
        self.stdin_cut = False
        self.state: SessionState | None = None  # from the agent's last reply: cwd and changed variables
        self._sent_env: object = {}  # the variables of the last run request (``compact_env``)
        try:
            hello = self._exchange(Hello(quota=quota).wire(), None, 30.0, HelloReply, None, None)
        except SessionBroken as exc:
            raise self._failed(exc) from exc
        self.agent_pid = hello.pid

    def _failed(self, exc: SessionBroken) -> SandboxError:
        self.close()  # its connection's file descriptors with it
        said = bytes(self.demux.first + self.demux.agent_stderr)[:600]
        msg = (f"Canal's session agent did not start in sandbox {self.container_id[:12]} ({exc.why}); "
               f"it needs python3 and bash in the image. The sandbox said: {said!r}")
        return SESSION_FAILED(msg, hint="use an image with python3 and bash, such as the default one",
                             next=act("image.build"),
                             details={"container": self.container_id, "why": exc.why,
                                      "output": said.decode(errors="replace")})

    def request(self, req: Request, out: Spool | None, err: Spool | None,
                on_output: OnOutput | None = None) -> RunReply:
        """Run one command and collect its frames until the final reply; ``SessionBroken`` on failure."""
        return self._exchange(req.command.wire(), req.stdin, req.deadline_s, RunReply, out, err, on_output,
                              req.gate)

    def spawn_spec(self, req: SpawnSpec, err: Spool | None, *, deadline_s: float | None = None) -> SpawnReply:
        """Ask the agent for a background task's starting state (``SpawnSpec``); ``SessionBroken`` on
        failure."""
        return self._exchange(req.wire(), None, deadline_s, SpawnReply, None, err)

    def _exchange(self, header: dict[str, object], stdin: bytes | Reader | None, deadline_s: float | None,
                  model: type[R], out: Spool | None, err: Spool | None,
                  on_output: OnOutput | None = None, gate: Callable[[], None] | None = None) -> R:
        """One request and its reply. With ``gate``, the agent prepares the command and holds it until
        the gate has returned (``go``), so the gate's work (the intent's fdatasync) overlaps the
        request's way in; a gate that raises cancels it (nothing runs) and its exception propagates."""
        if self.closed:
            msg = "the session is closed"
            raise SessionBroken(msg)
        nonce = secrets.token_hex(8)
        upfront = stdin if isinstance(stdin, bytes) else b""
        header, self._sent_env = compact_env(dict(header, id=nonce, stdin_len=len(upfront)), self._sent_env)
        streamed = stdin is not None and not isinstance(stdin, bytes)
        if streamed:
            header["stdin"] = "stream"
        if gate is not None:
            header["hold"] = True
        done = threading.Event()
        self.stdin_cut = False
        try:
            self._send(header, upfront, nonce)
            if gate is not None:
                self._release(gate, nonce, deadline_s, model, out, err)
            if streamed:
                feeder = threading.Thread(target=self._feed, args=(nonce, stdin, done), daemon=True,
                                          name="canal-stdin-feeder")
                feeder.start()
            reply = parse_reply(self._collect(deadline_s, out, err, on_output), model, nonce)
            self.state = reply.state.session() if reply.state is not None else self.state
            return reply
        except SessionBroken:
            self.close()
            raise
        except OSError as exc:
            self.close()
            msg = f"the session connection failed: {exc}"
            raise SessionBroken(msg) from exc
        finally:
            self._current = None
            done.set()

    def _release(self, gate: Callable[[], None], nonce: str, deadline_s: float | None, model: type[R],
                 out: Spool | None, err: Spool | None) -> None:
        """Run ``gate``, then let the held command start; when the gate raises, cancel it, read the
        agent's reply (so the session stays in step) and raise the gate's exception."""
        try:
            gate()
        except BaseException:
            self._control({"ctl": "cancel", "id": nonce})
            try:
                parse_reply(self._collect(deadline_s, out, err, None), model, nonce)
            except SessionBroken:
                self.close()
            raise
        self._send({"ctl": "go", "id": nonce, "stdin_len": 0})

    def _send(self, header: Mapping[str, object], payload: bytes = b"", nonce: str | None = None) -> None:
        body = json.dumps(header).encode()
        with self._send_lock:
            self.sock.sendall(struct.pack(">I", len(body)) + body + payload)
            if nonce is not None:
                self._current = nonce  # a kill sent from now on reaches the agent after the request

    def _control(self, header: Control, payload: bytes = b"") -> None:
        """A control frame for the request in flight; dropped when the session has gone."""
        try:
            self._send({**header, "stdin_len": len(payload)}, payload)
        except OSError:
            return

    def interrupt(self, signal: str) -> bool:
        """Ask the agent to kill the command in flight (its whole tree); False when none is running."""
        nonce = self._current
        if nonce is None or self.closed:
            return False
        self._control({"ctl": "kill", "id": nonce, "signal": signal})
        return True

    def _feed(self, nonce: str, source: Reader, done: threading.Event) -> None:
        """Stream ``source`` to the command's stdin (at most ``MAX_STDIN`` bytes), then end it."""
        read = getattr(source, "read1", source.read)
        sent = 0
        try:
            while not done.is_set():
                chunk = read(min(STDIN_CHUNK, MAX_STDIN + 1 - sent))
                if not chunk or done.is_set():
                    break
                if sent + len(chunk) > MAX_STDIN:
                    self.stdin_cut = True
                    chunk = chunk[:MAX_STDIN - sent]
                self._control({"ctl": "stdin", "id": nonce}, chunk)
                sent += len(chunk)
                if self.stdin_cut:
                    break
        except (OSError, ValueError):
            pass  # the source broke: the command sees end of file
        if not done.is_set():
            self._control({"ctl": "eof", "id": nonce})

    def _collect(self, deadline_s: float | None, out: Spool | None,
                 err: Spool | None, on_output: OnOutput | None) -> bytes:
        """Output frames go to the spools as they come; returns the payload of the final frame."""
        deadline = None if deadline_s is None else time.monotonic() + deadline_s
        while True:
            if deadline is not None and time.monotonic() > deadline:
                msg = "the session did not finish the command by its deadline"
                raise SessionBroken(msg)
            kind, length = _FRAME.unpack(self.demux.read(_FRAME.size))
            if length > MAX_FRAME:
                msg = f"the session sent an oversized frame ({length} bytes)"
                raise SessionBroken(msg)
            payload = self.demux.read(length)
            if kind in (b"o", b"e"):
                spool = out if kind == b"o" else err
                if spool is not None:
                    spool.write(payload)
                if on_output is not None:
                    on_output("stdout" if kind == b"o" else "stderr", payload)
            elif kind == b"x":
                return payload
            elif kind != b"h":
                msg = f"the session sent an unknown frame {kind!r}"
                raise SessionBroken(msg)

    def alive(self) -> bool:
        """With no request in flight: nothing to read (a closed or chatty connection is not alive)."""
        if self.closed:
            return False
        try:
            readable, _, _ = select.select([self.sock], [], [], 0)
        except (OSError, ValueError):
            return False
        return not readable and not self.demux.pending

    def close(self) -> None:
        if not self.closed:
            self.closed = True
            self.sock.close()
            if self._raw is not self.sock:
                self._raw.close()


def send_program(sock: socket.socket, demux: _Demux, program: bytes, timeout_s: float) -> None:
    """Send the agent's program (what its boot line reads first) unless the process speaks first: it
    says nothing before it has read it all, so anything it sends (an exec error, its end) means it did
    not start: what it said is read into ``demux`` and ``SessionBroken`` raised. (A blocking send waited
    for the timeout once the program outgrew the connection's buffers, with nobody reading it.)"""
    view = memoryview(program)
    while view:
        readable, writable, _ = select.select([sock], [sock], [], timeout_s)
        if readable:
            sock.settimeout(DRAIN_S)
            with contextlib.suppress(SessionBroken):
                while True:  # until its end: what it said, for the error
                    demux.fill()
            msg = "its process ended before it read the agent's program"
            raise SessionBroken(msg)
        if not writable:
            msg = f"the sandbox read none of the agent's program for {timeout_s:.0f} s"
            raise SessionBroken(msg)
        view = view[sock.send(view[:STDIN_CHUNK]):]


def command_deadline(timeout_s: float | None) -> float | None:
    return None if timeout_s is None else timeout_s + DEADLINE_GRACE_S
