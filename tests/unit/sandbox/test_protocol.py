"""The agent protocol on the host's side: requests built from models, every final reply checked.

The session tests put a scripted agent at the other end of a socket pair, behind a fake of the two
Docker API calls a session makes (exec_create, exec_start): the framing, the nonce and the checks are the
real ones.
"""

from __future__ import annotations

import json
import random
import re
import socket
import struct
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from canal.sandbox.docker.agent_program import agent_program
from canal.sandbox.docker.session import Request, Session
from canal.sandbox.errors import SESSION_FAILED, SpecInvalid
from canal.sandbox.protocol import (
    Hello,
    HelloReply,
    RunReply,
    SessionBroken,
    SpawnSpec,
    WorkspaceQuota,
    parse_reply,
    run_command,
)
from canal.sandbox.result import EndReason
from canal.sandbox.spool import Spool
from tests.error_codes import raises_code

STATE = {"cwd": "/workspace", "changed": [], "path": "", "digest": "d"}
DONE = {"reason": "exited", "exit_code": 0, "survivors": [], "oom_kills": 0, "pid_limit_hits": 0,
        "swept": 0}
AGENT = Path(__file__).resolve().parents[3] / "canal" / "sandbox" / "agent" / "main.py"


def _reply(nonce: str = "n1", **fields: Any) -> bytes:
    return json.dumps({"id": nonce, "state": STATE, **DONE, **fields}).encode()


def test_requests_carry_what_the_agent_reads() -> None:
    line = run_command("make -j2", timeout_s=5, env={"A": "1"}, workdir="/workspace/src",
                       expect_state="abc", quota=WorkspaceQuota(path="/workspace", bytes=1 << 20))
    assert line.wire() == {"op": "run", "shell": True, "command": "make -j2", "timeout_s": 5.0,
                           "env": {"A": "1"}, "workdir": "/workspace/src", "expect_state": "abc",
                           "quota": {"path": "/workspace", "bytes": 1 << 20}}
    argv = run_command(["ls", "-la"])
    assert argv.wire() == {"op": "run", "shell": False, "argv": ["ls", "-la"], "env": {}}
    assert Hello().wire() == {"op": "hello"}
    # every field the host sends is one the agent reads (an unread field would be a silent no-op)
    read = set(re.findall(r"""req(?:\.get\(|\[)["'](\w+)["']""", AGENT.read_text()))
    spawn = SpawnSpec(expect_state="abc", quota=WorkspaceQuota(path="/w", bytes=1), spare=(7, 99),
                      marks=("m",))
    tasks_running = line.model_copy(update={"spare": (7, 99), "marks": ("m",)})
    for request in (line, argv, Hello(quota=WorkspaceQuota(path="/w", bytes=1)), spawn, tasks_running):
        assert set(request.wire()) <= read, set(request.wire()) - read


@pytest.mark.parametrize("argv", [[], ["ls", 3], [b"ls"]])
def test_an_argv_that_is_not_all_strings_is_refused(argv: list[Any]) -> None:
    with pytest.raises(SpecInvalid):
        run_command(argv)


def test_a_well_formed_reply_is_typed() -> None:
    reply = parse_reply(_reply(reason="hard_timeout", exit_code=137, survivors=[42], pid_limit_hits=1,
                               quota={"limit": 10, "used": 12}), RunReply, "n1")
    assert reply.reason is EndReason.HARD_TIMEOUT
    assert (reply.exit_code, reply.survivors, reply.pid_limit_hits) == (137, [42], 1)
    assert reply.quota is not None
    assert reply.quota.used == 12
    assert reply.state is not None
    assert reply.state.session().cwd == "/workspace"


def test_a_folder_name_that_is_not_utf8_still_travels() -> None:
    # the agent's os.getcwd() of a folder named b"\xff" is "\udcff"; json.dumps writes it as an escape
    state = dict(STATE, cwd="/workspace/\udcff")
    payload = json.dumps({"id": "n1", "state": state, **DONE}).encode()
    reply = parse_reply(payload, RunReply, "n1")
    assert reply.state is not None
    assert reply.state.cwd == "/workspace/\udcff"


@pytest.mark.parametrize(("payload", "why"), [
    (b"exit 0", "not JSON"),
    (b"\xff\xfe", "not JSON"),
    (b"[1, 2]", "reply: Input should be a valid dictionary"),
    (_reply(exit_code="0"), "exit_code: Input should be a valid integer"),
    (_reply(exit_code=True), "exit_code: Input should be a valid integer"),
    (_reply(exit_code=0.5), "exit_code: Input should be a valid integer"),
    (_reply(reason="done"), "reason: Input should be 'exited'"),
    (_reply(oom_kills=-1), "oom_kills: Input should be greater than or equal to 0"),
    (_reply(survivors="42"), "survivors: Input should be a valid list"),
    (_reply(quota={"limit": 1}), "quota.used: Field required"),
    (_reply(exit_code=None, admin=True), "admin: Extra inputs are not permitted"),
    (_reply(state={"cwd": "/", "changed": [3]}), "state.changed.0: Input should be a valid string"),
    (json.dumps({"id": "n1", **DONE}).encode(), "state: missing"),
    (json.dumps({"id": "n1", "state": STATE}).encode(), "reason: Field required"),
    (_reply(nonce="n0"), "nonce mismatch"),
])
def test_a_malformed_reply_is_a_broken_session_that_says_why(payload: bytes, why: str) -> None:
    with pytest.raises(SessionBroken) as caught:
        parse_reply(payload, RunReply, "n1")
    assert why in caught.value.why
    assert "admin" not in caught.value.why or "Extra" in caught.value.why  # names fields, not values


def test_a_hello_reply_needs_the_agents_pid() -> None:
    hello = {"id": "n1", "state": STATE, "pid": 7, "protected": [1, 7]}
    assert parse_reply(json.dumps(hello).encode(), HelloReply, "n1").pid == 7
    for bad in ({"pid": "7"}, {"pid": 0}, {"pid": None}):
        with pytest.raises(SessionBroken, match="pid"):
            parse_reply(json.dumps({**hello, **bad}).encode(), HelloReply, "n1")


# a scripted agent over a socket pair ----------------------------------------------------------------

Answer = Callable[[dict[str, Any]], "bytes | Raw"]  # request header -> payload of its final frame


class Raw(bytes):
    """What the agent's side sends as it is (its own framing), in pieces of random sizes."""


class Whole(Raw):
    """The same, in one piece."""


def _frame(kind: bytes, payload: bytes) -> bytes:
    body = kind + struct.pack(">I", len(payload)) + payload
    return struct.pack(">BxxxI", 1, len(body)) + body  # Docker's stream header: stdout


def _recv_exact(sock: socket.socket, n: int) -> bytes:
    data = b""
    while len(data) < n:
        chunk = sock.recv(n - len(data))
        if not chunk:
            raise EOFError
        data += chunk
    return data


def _agent(sock: socket.socket, answers: list[Answer], seen: list[dict[str, Any]]) -> None:
    try:
        program = agent_program().data
        assert _recv_exact(sock, len(program)) == program  # the loader reads the program first
        for answer in answers:
            (length,) = struct.unpack(">I", _recv_exact(sock, 4))
            header = json.loads(_recv_exact(sock, length))
            _recv_exact(sock, int(header.get("stdin_len") or 0))
            seen.append(header)
            said = answer(header)
            if isinstance(said, Whole):
                sock.sendall(said)
                continue
            if isinstance(said, Raw):
                rng, at = random.Random(len(said)), 0
                while at < len(said):
                    size = rng.choice([1, 7, 8, 9, 4096, 65536 + 13, 300_000])
                    sock.sendall(said[at:at + size])
                    at += size
                continue
            sock.sendall(_frame(b"o", b"hello\n") + _frame(b"x", said))
    except (EOFError, OSError):
        pass


@pytest.fixture
def agent() -> Iterator[Callable[..., tuple[Session, list[dict[str, Any]]]]]:
    made: list[tuple[socket.socket, socket.socket, threading.Thread]] = []

    def start(*answers: Answer) -> tuple[Session, list[dict[str, Any]]]:
        host, far = socket.socketpair()
        seen: list[dict[str, Any]] = []
        thread = threading.Thread(target=_agent, args=(far, list(answers), seen), daemon=True)
        thread.start()
        made.append((host, far, thread))
        api = SimpleNamespace(exec_create=lambda *a, **k: {"Id": "e1"}, exec_start=lambda *a, **k: host)
        client: Any = SimpleNamespace(api=api)
        return Session(client, "c" * 64, user="1000", workdir="/workspace", init=True), seen

    yield start
    for host, far, thread in made:
        host.close()
        far.close()
        thread.join(5)


def _hello(header: dict[str, Any]) -> bytes:
    return json.dumps({"id": header["id"], "state": STATE, "pid": 7, "protected": [1, 7]}).encode()


def test_a_session_types_its_replies_and_keeps_the_state(agent: Any) -> None:
    def ran(header: dict[str, Any]) -> bytes:
        return json.dumps({"id": header["id"], **DONE, "exit_code": 3,
                           "state": dict(STATE, cwd="/workspace/src", changed=["A"])}).encode()

    session, seen = agent(_hello, ran)
    assert session.agent_pid == 7
    reply = session.request(Request(run_command(["make"])), None, None)
    assert isinstance(reply, RunReply)
    assert reply.exit_code == 3
    assert session.state is not None
    assert (session.state.cwd, session.state.changed) == ("/workspace/src", ("A",))
    assert [h["op"] for h in seen] == ["hello", "run"]
    assert seen[1]["argv"] == ["make"]
    assert len(seen[1]["id"]) == 16


def _docker(stream: int, data: bytes, sizes: list[int]) -> bytes:
    """``data`` in Docker's multiplexed frames of the given sizes (in turn), whatever the agent's framing."""
    out, at, i = [], 0, 0
    while at < len(data):
        piece = data[at:at + sizes[i % len(sizes)]]
        out.append(struct.pack(">BxxxI", stream, len(piece)) + piece)
        at += len(piece)
        i += 1
    return b"".join(out)


def test_output_arrives_whole_and_in_order_however_the_stream_is_cut(agent: Any, tmp_path: Path) -> None:
    # Docker's frames cut the agent's frames anywhere, the agent's own stderr comes between them, and
    # each receive takes what the socket holds: the command's bytes reach the spool and on_output in order
    rng = random.Random(3)
    chunks = [rng.randbytes(rng.choice([1, 100, 65536])) for _ in range(60)]
    frames = [b"o" + struct.pack(">I", len(c)) + c for c in chunks] + [b"e" + struct.pack(">I", 4) + b"oops"]

    def ran(header: dict[str, Any]) -> Raw:
        body = b"".join(frames)
        final = _reply(header["id"])
        body += b"x" + struct.pack(">I", len(final)) + final
        cut = len(body) // 2
        return Raw(_docker(1, body[:cut], [5, 70_000, 3, 1 << 20]) + _docker(2, b"agent says hi\n", [4])
                   + _docker(1, body[cut:], [32768, 1]))

    session, _ = agent(_hello, ran)
    out, err = Spool(1 << 16, tmp_path, "stdout"), Spool(1 << 16, tmp_path, "stderr")
    seen: list[tuple[str, bytes]] = []
    reply = session.request(Request(run_command("cat big")), out, err, lambda s, c: seen.append((s, c)))
    assert reply.exit_code == 0
    assert out.finish().read_bytes() == b"".join(chunks)
    assert err.finish().read_bytes() == b"oops"
    assert b"".join(c for s, c in seen if s == "stdout") == b"".join(chunks)
    assert bytes(session.demux.agent_stderr) == b"agent says hi\n"
    assert session.alive()  # nothing read ahead is left over


def test_bytes_received_past_the_reply_mean_the_session_is_not_idle(agent: Any) -> None:
    def ran(header: dict[str, Any]) -> Whole:
        final = _reply(header["id"])
        stray = struct.pack(">BxxxI", 1, 5)[:3]  # the start of a Docker frame after the reply: out of turn
        return Whole(_docker(1, b"x" + struct.pack(">I", len(final)) + final, [1 << 20]) + stray)

    session, _ = agent(_hello, ran)
    assert session.request(Request(run_command("true")), None, None).exit_code == 0
    assert not session.alive()


def test_a_malformed_hello_fails_the_session_start_with_the_reason(agent: Any) -> None:
    def no_pid(header: dict[str, Any]) -> bytes:
        return json.dumps({"id": header["id"], "state": STATE, "pid": "seven"}).encode()

    with raises_code(SESSION_FAILED) as caught:
        agent(no_pid)
    why = "the session's reply is out of protocol (pid: Input should be a valid integer)"
    assert caught.value.details["why"] == why
    assert why in caught.value.message


def test_a_malformed_run_reply_breaks_and_closes_the_session(agent: Any) -> None:
    def not_json(header: dict[str, Any]) -> bytes:
        return b"{'exit_code': 0}"

    session, _ = agent(_hello, not_json)
    with pytest.raises(SessionBroken, match="out of protocol \\(not JSON"):
        session.request(Request(run_command("true")), None, None)
    assert session.closed
