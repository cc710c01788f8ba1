"""The host's end of a sandbox's background agent (``agent.bg``): background tasks and relayed
connections, on an exec of their own, so neither ever waits for the foreground session.

One ``Background`` per sandbox, started the first time a task or a forwarded connection needs it. A
reader thread takes every frame the agent sends and hands it on: task output and endings to the
task's ``TaskSink``, connection data and events to the connection's ``StreamSink``. Sinks are called
on that thread and must not block for long (a forwarded connection queues what it receives).

When the channel ends (the sandbox went away, the agent was killed), every task still known ends with
reason ``lost`` and every connection is closed with an error.
"""

from __future__ import annotations

import itertools
import json
import logging
import secrets
import socket
import struct
import threading
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

import docker

from canal.sandbox.docker.agent_program import AGENT_NAME, agent_program
from canal.sandbox.docker.errors import translating
from canal.sandbox.docker.session import MAX_FRAME, _Demux, send_program
from canal.sandbox.errors import SESSION_FAILED, SandboxError
from canal.sandbox.protocol import SessionBroken

log = logging.getLogger("canal.sandbox")
_FRAME = struct.Struct(">cI")
_NUM = struct.Struct(">I")
REQUEST_TIMEOUT_S = 30.0
WINDOW = 256 * 1024  # bytes of one connection in flight each way (the agent's WINDOW too)


@dataclass(frozen=True)
class TaskEnd:
    """How a background task ended, as the agent reports it (Layer 1: nothing decided here)."""

    reason: str  # exited | hard_timeout | killed (its runner was) | lost | the host's kill reason
    exit_code: int | None
    output_bytes: int = 0  # passed on (at most the cap)
    dropped_bytes: int = 0  # over the cap, not passed on
    left: int = 0  # processes the command left running, killed when it ended
    survivors: tuple[int, ...] = ()
    detail: str = ""


@dataclass(frozen=True)
class TaskSpec:
    """What to start: the command (bash), its hard timeout, and how much output to pass on."""

    command: str
    timeout_s: float | None
    output_cap: int
    env: Mapping[str, str] = field(default_factory=dict)  # over the session's variables (git's overrides)
    marker: str = field(default_factory=lambda: secrets.token_hex(8))


class TaskSink(Protocol):
    def output(self, stream: str, data: bytes) -> None:
        """``stream`` is ``stdout`` or ``stderr``; called on the reader thread, in arrival order."""
        ...

    def ended(self, end: TaskEnd) -> None: ...


class StreamSink(Protocol):
    """The host's side of one relayed connection."""

    def opened(self) -> None: ...

    def failed(self, error: str, code: str) -> None:
        """Nothing answered at the port (``code`` such as ``ECONNREFUSED``)."""
        ...

    def data(self, data: bytes) -> None: ...

    def acked(self, n: int) -> None:
        """The agent passed ``n`` more bytes on to the port: that much more may be sent."""
        ...

    def eof(self) -> None:
        """The port's side closed its writing half."""
        ...

    def closed(self, error: str | None) -> None: ...


@runtime_checkable
class BackgroundBackend(Protocol):
    """What a backend offers for background tasks and forwarded ports (the Docker backend does)."""

    def start_task(self, name: str, n: int, spec: TaskSpec, sink: TaskSink, *,
                   expect_state: str | None = None) -> int:
        """Start task number ``n`` from the session's current cwd and variables; returns its runner's
        pid. ``TaskStartRefused`` when the session's state is not ``expect_state`` any more."""
        ...

    def cancel_task(self, name: str, n: int, why: str) -> bool:
        """Kill task ``n``'s whole tree (its ending reports ``why``); False when it is not running."""
        ...

    def open_stream(self, name: str, port: int, sink: StreamSink) -> Relay:
        """A connection to ``port`` on the sandbox's own loopback, relayed through the agent."""
        ...


class Relay:
    """The host's handle on one relayed connection: send (within the window), close, reset."""

    def __init__(self, channel: Background, s: int) -> None:
        self.channel = channel
        self.s = s

    def send(self, data: bytes) -> None:
        self.channel.send({"op": "data", "s": self.s}, data)

    def ack(self, n: int) -> None:
        self.channel.send({"op": "ack", "s": self.s, "bytes": n})

    def close_write(self) -> None:
        self.channel.send({"op": "close", "s": self.s})

    def reset(self) -> None:
        self.channel.send({"op": "reset", "s": self.s})
        self.channel.forget(self.s)


class Background:
    """One background agent in one container. Thread-safe."""

    def __init__(self, client: docker.DockerClient, container_id: str, *, user: str, workdir: str,
                 fsize: int | None = None) -> None:
        self.container_id = container_id
        launch = agent_program()
        argv = ["python3", "-c", launch.boot, AGENT_NAME, "background"]  # a short ps line
        with translating("start the background agent in", name=container_id):
            api = client.api
            exec_id = api.exec_create(container_id, argv, stdin=True, stdout=True, stderr=True,
                                      tty=False, user=user, workdir=workdir)["Id"]
            raw = api.exec_start(exec_id, socket=True)
        self._raw = raw
        self.sock = getattr(raw, "_sock", raw)
        self.sock.settimeout(REQUEST_TIMEOUT_S)
        self.demux = _Demux(self.sock)
        try:  # what the loader on the command line reads first
            send_program(self.sock, self.demux, launch.data, REQUEST_TIMEOUT_S)
        except (SessionBroken, OSError) as exc:
            self.sock.close()
            raise self._not_started(exc) from exc
        self._send_lock = threading.Lock()  # one frame at a time on the socket
        self._lock = threading.Lock()  # the tables below (never held while sending)
        self._ids = itertools.count(1)
        self._replies: dict[int, list[dict[str, Any]]] = {}
        self._reply_ready = threading.Condition(self._lock)
        self._tasks: dict[int, TaskSink] = {}
        self._marks: dict[int, str] = {}  # running tasks' markers, which the session's sweeps spare too
        self._streams: dict[int, StreamSink] = {}
        self._stream_ids = itertools.count(1)
        self.closed = False
        self.why_closed = ""
        hello = self._hello(fsize)
        self.pid = int(hello["pid"])
        self.start = int(hello["start"]) if hello.get("start") is not None else None
        self.subreaper = bool(hello.get("subreaper"))
        self.sock.settimeout(None)  # the agent speaks when it has something to say
        self._reader = threading.Thread(target=self._read_loop, name=f"canal-bg-{container_id[:12]}",
                                        daemon=True)
        self._reader.start()

    def _hello(self, fsize: int | None) -> dict[str, Any]:
        try:
            self._send_frame({"op": "hello", "id": 0, "fsize": fsize})
            while True:
                kind, payload = self._frame()
                if kind == b"x":
                    reply: dict[str, Any] = json.loads(payload)
                    return reply
        except (SessionBroken, OSError, ValueError) as exc:
            self.close()
            raise self._not_started(exc) from exc

    def _not_started(self, exc: Exception) -> SandboxError:
        said = bytes(self.demux.first + self.demux.agent_stderr)[:600]
        msg = (f"Canal's background agent did not start in sandbox {self.container_id[:12]} ({exc}); "
               f"it needs python3 in the image. The sandbox said: {said!r}")
        return SESSION_FAILED(msg, hint="use an image with python3 and bash, such as the default one",
                              details={"container": self.container_id})

    @property
    def identity(self) -> tuple[int, int] | None:
        """(pid, start time): how the session's agent knows which tree to spare."""
        if self.closed or self.start is None:
            return None
        return self.pid, self.start

    # sending -----------------------------------------------------------------------------------
    def _send_frame(self, header: Mapping[str, Any], payload: bytes = b"") -> None:
        body = json.dumps(dict(header, len=len(payload))).encode()
        with self._send_lock:
            self.sock.sendall(_NUM.pack(len(body)) + body + payload)

    def send(self, header: Mapping[str, Any], payload: bytes = b"") -> None:
        """Fire and forget; dropped once the channel has closed (its sinks were told)."""
        if self.closed:
            return
        try:
            self._send_frame(header, payload)
        except OSError:
            return  # the reader sees the end and tells every sink

    def request(self, header: Mapping[str, Any], timeout_s: float = REQUEST_TIMEOUT_S) -> dict[str, Any]:
        """Send and wait for the agent's reply; ``SessionBroken`` when the channel ends first."""
        with self._lock:
            if self.closed:
                raise SessionBroken(self.why_closed or "the background agent has ended")
            rid = next(self._ids)
            box: list[dict[str, Any]] = []
            self._replies[rid] = box
        try:
            self._send_frame(dict(header, id=rid))
            with self._lock:
                if not self._reply_ready.wait_for(lambda: bool(box) or self.closed, timeout_s):
                    msg = "the background agent did not answer in time"
                    raise SessionBroken(msg)
        except OSError as exc:
            msg = f"the background channel failed: {exc}"
            raise SessionBroken(msg) from exc
        finally:
            with self._lock:
                self._replies.pop(rid, None)
        if not box:
            raise SessionBroken(self.why_closed or "the background agent has ended")
        return box[0]

    # tasks -------------------------------------------------------------------------------------
    def start_task(self, n: int, spec: TaskSpec, spawn_file: str, sink: TaskSink) -> int:
        with self._lock:
            self._tasks[n] = sink
            self._marks[n] = spec.marker
        try:
            reply = self.request({"op": "start", "n": n, "command": spec.command, "spec": spawn_file,
                                  "timeout_s": spec.timeout_s, "cap": spec.output_cap, "marker": spec.marker,
                                  "env": dict(spec.env)})
        except BaseException:
            self._forget_task(n)
            raise
        if "error" in reply:
            self._forget_task(n)
            raise SessionBroken(str(reply["error"]))
        return int(reply["pid"])

    def kill(self, n: int, why: str) -> bool:
        try:
            return bool(self.request({"op": "kill", "n": n, "why": why}).get("running"))
        except SessionBroken:
            return False

    def _forget_task(self, n: int) -> TaskSink | None:
        with self._lock:
            self._marks.pop(n, None)
            return self._tasks.pop(n, None)

    def marks(self) -> list[str]:
        """The markers of the tasks running now (their processes carry ``CANAL_TASK=<marker>``)."""
        with self._lock:
            return [] if self.closed else sorted(self._marks.values())

    def running(self) -> int:
        with self._lock:
            return len(self._tasks)

    # connections -------------------------------------------------------------------------------
    def open_stream(self, port: int, sink: StreamSink) -> Relay:
        with self._lock:
            s = next(self._stream_ids)
            self._streams[s] = sink
        self.send({"op": "open", "s": s, "port": port})
        if self.closed:
            sink.closed(self.why_closed or "the background agent has ended")
        return Relay(self, s)

    def forget(self, s: int) -> None:
        with self._lock:
            self._streams.pop(s, None)

    # receiving ---------------------------------------------------------------------------------
    def _frame(self) -> tuple[bytes, bytes]:
        kind, length = _FRAME.unpack(self.demux.read(_FRAME.size))
        if length > MAX_FRAME:
            msg = f"the background agent sent an oversized frame ({length} bytes)"
            raise SessionBroken(msg)
        return kind, self.demux.read(length)

    def _read_loop(self) -> None:
        why = "the background agent has ended"
        try:
            while True:
                kind, payload = self._frame()
                self._dispatch(kind, payload)
        except SessionBroken as exc:
            why = exc.why
        except Exception:  # a sink failed: the channel cannot be trusted to be in step any more
            log.exception("background channel of %s failed", self.container_id[:12])
            why = "the background channel failed"
        self._lost(why)

    def _dispatch(self, kind: bytes, payload: bytes) -> None:
        if kind in (b"o", b"e"):
            n = _NUM.unpack(payload[:4])[0]
            with self._lock:
                task = self._tasks.get(n)
            if task is not None:
                task.output("stdout" if kind == b"o" else "stderr", payload[4:])
        elif kind == b"d":
            s = _NUM.unpack(payload[:4])[0]
            with self._lock:
                stream = self._streams.get(s)
            if stream is not None:
                stream.data(payload[4:])
        elif kind == b"v":
            self._event(json.loads(payload))
        elif kind == b"x":
            reply = json.loads(payload)
            with self._lock:
                box = self._replies.get(int(reply.get("id") or 0))
                if box is not None:
                    box.append(reply)
                    self._reply_ready.notify_all()
        elif kind != b"h":
            msg = f"the background agent sent an unknown frame {kind!r}"
            raise SessionBroken(msg)

    def _event(self, event: dict[str, Any]) -> None:
        what = event.get("ev")
        if what == "ended":
            task = self._forget_task(int(event["n"]))
            if task is not None:
                task.ended(_task_end(event))
            return
        s = int(event.get("s") or 0)
        with self._lock:
            stream = self._streams.get(s)
            if what in ("failed", "closed"):
                self._streams.pop(s, None)
        if stream is None:
            return
        if what == "opened":
            stream.opened()
        elif what == "failed":
            stream.failed(str(event.get("error") or "connection failed"), str(event.get("errno") or ""))
        elif what == "ack":
            stream.acked(int(event.get("bytes") or 0))
        elif what == "eof":
            stream.eof()
        elif what == "closed":
            stream.closed(event.get("error"))

    def _lost(self, why: str) -> None:
        with self._lock:
            self.closed = True
            self.why_closed = self.why_closed or why
            tasks, self._tasks = self._tasks, {}
            self._marks.clear()
            streams, self._streams = self._streams, {}
            self._reply_ready.notify_all()
        self._release()
        for task in tasks.values():
            task.ended(TaskEnd(reason="lost", exit_code=None, detail=self.why_closed))
        for stream in streams.values():
            stream.closed(self.why_closed)

    def _release(self) -> None:
        try:
            self.sock.close()
        finally:
            if self._raw is not self.sock:
                self._raw.close()

    def close(self, why: str = "closed") -> None:
        """End the channel: the agent kills every task's tree and exits (their sinks hear ``lost``)."""
        with self._lock:
            if not self.why_closed:
                self.why_closed = why
            self.closed = True
            self._reply_ready.notify_all()
        try:
            self.sock.shutdown(socket.SHUT_RDWR)  # wakes the reader, which tells the sinks
        except OSError:
            self._release()


def _task_end(event: Mapping[str, Any]) -> TaskEnd:
    code = event.get("exit_code")
    return TaskEnd(reason=str(event.get("reason") or "exited"), exit_code=None if code is None else int(code),
                   output_bytes=int(event.get("bytes") or 0), dropped_bytes=int(event.get("dropped") or 0),
                   left=int(event.get("left") or 0),
                   survivors=tuple(int(p) for p in event.get("survivors") or ()),
                   detail=str(event.get("detail") or ""))
