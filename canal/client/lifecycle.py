"""Finding, starting and replacing the server, from the client's side (standard library only).

``connect_or_start`` recovers from everything a previous server may have left: no socket, a stale
socket (connection refused: the server died), a server of another build (asked to stop, then replaced).
Two clients starting at once serialise on the spawn lock, and the second finds the first one's server.
The new server is a daemon (double fork, its own session, stdio to its log); the client waits until its
socket answers.
"""

from __future__ import annotations

import _socket
import fcntl
import os
import sys
import time

from canal.client import wire
from canal.client.paths import ServerPaths, check_private

TYPE_CHECKING = False  # typing and contextlib cost every call's start-up; mypy reads this name the same
if TYPE_CHECKING:
    from canal.client.errors import ServerError  # the error root loads on errors only

START_TIMEOUT_S = 20.0
SERVER_MODULE = "canal.server"  # the server owns its entry point: started by name, never imported
NO_SERVER_HINT = "{log}; or run without the server: CANAL_NO_SERVER=1 canal ..."


def connect(paths: ServerPaths) -> wire.Socket | None:
    """A connection to a living server of this identity, or None (no socket, or nobody answers)."""
    address = paths.file("sock")
    try:
        check_private(address, folder=False)
    except FileNotFoundError:
        return None
    sock = wire.Socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
    try:
        sock.connect(address)
    except (ConnectionRefusedError, FileNotFoundError):
        sock.close()
        return None
    _pid, uid = wire.peer_uid(sock)
    if uid != os.geteuid():
        sock.close()
        msg = (f"The process answering on {address} runs as uid {uid}, not as you (uid {os.geteuid()}). "
               "Refused to talk to it.")
        from canal.client.errors import RUNTIME_DIR_UNSAFE

        raise RUNTIME_DIR_UNSAFE(msg, hint=f"rm {address}   (then run the command again)",
                               details={"socket": address, "peer_uid": uid})
    return sock


def hello(sock: wire.Socket, build: str) -> dict[str, object]:
    wire.send_json(sock, wire.HELLO, {"proto": wire.PROTOCOL, "build": build, "pid": os.getpid()})
    return wire.recv_json(sock, wire.HELLO)


def connect_or_start(paths: ServerPaths, build: str) -> wire.Socket:
    """A connected, greeted socket to a server of exactly this build."""
    for _attempt in range(3):
        sock = _greeted(paths, build)
        if sock is not None:
            return sock
        # held while this client checks for a server and starts one: two clients start one server
        fd = os.open(paths.file("spawn"), os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            sock = _greeted(paths, build)
            if sock is not None:
                return sock
            start(paths)
        finally:
            os.close(fd)
    msg = f"No Canal server of build {build} would answer on {paths.socket}."
    from canal.client.errors import SERVER_START_FAILED
    from canal.core.next import act

    raise SERVER_START_FAILED(msg, hint=NO_SERVER_HINT.format(log="see the server's log"),
                            next=act("server.logs"))


def _greeted(paths: ServerPaths, build: str) -> wire.Socket | None:
    """A socket after hello, or None when there is no server or it was of another build (now stopping)."""
    sock = connect(paths)
    if sock is None:
        return None
    try:
        theirs = hello(sock, build)
    except (wire.WireError, OSError):
        sock.close()
        return None
    if theirs.get("build") == build and theirs.get("proto") == wire.PROTOCOL:
        return sock
    try:
        wire.send_json(sock, wire.REQUEST, {"op": "stop", "why": f"replaced by build {build}"})
        wire.recv(sock)
    except (wire.WireError, OSError):
        pass
    sock.close()
    _wait_gone(paths)
    return None


def _wait_gone(paths: ServerPaths, timeout_s: float = 5.0) -> None:
    """Until the old server has let go of its lock (it does so before finishing its requests)."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if not holds_lock(paths):
            return
        time.sleep(0.01)


def holds_lock(paths: ServerPaths) -> bool:
    """True when a living server holds this identity's lock."""
    try:
        fd = os.open(paths.file("lock"), os.O_RDWR | os.O_NOFOLLOW | os.O_CLOEXEC)
    except FileNotFoundError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    finally:
        os.close(fd)
    return False


def start(paths: ServerPaths, timeout_s: float = START_TIMEOUT_S) -> None:
    """Start a server daemon for ``paths`` and wait until its socket answers."""
    import subprocess

    try:  # a host where this user cannot open /dev/null, a full disk...: a coded error, not a traceback
        flags = os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_NOFOLLOW | os.O_CLOEXEC
        log = os.open(paths.file("log"), flags, 0o600)
    except OSError as exc:
        raise _start_failed(paths, f"its log cannot be opened ({exc})") from exc
    try:
        first = subprocess.run([sys.executable, "-m", SERVER_MODULE, "--daemon"], stdin=subprocess.DEVNULL,
                               stdout=log, stderr=log, cwd="/", close_fds=True, check=False,
                               timeout=timeout_s)
    except subprocess.TimeoutExpired as exc:
        raise _start_failed(paths, f"the server process did not detach within {timeout_s:.0f} s") from exc
    except OSError as exc:
        raise _start_failed(paths, f"the server process could not be started ({exc})") from exc
    finally:
        os.close(log)
    if first.returncode != 0:
        raise _start_failed(paths, f"the server process exited with status {first.returncode}")
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        sock = connect(paths)
        if sock is not None:
            sock.close()
            return
        time.sleep(0.005)
    raise _start_failed(paths, f"its socket did not answer within {timeout_s:.0f} s")


def _start_failed(paths: ServerPaths, why: str) -> ServerError:
    from canal.client.errors import SERVER_START_FAILED

    msg = f"Could not start the Canal server: {why}. Its log: {paths.log}"
    return SERVER_START_FAILED(msg, hint=NO_SERVER_HINT.format(log=f"tail {paths.log}"),
                             details={"log": str(paths.log)})
