"""The session's long-lived shell: what a str command can do to it, and what it must not change."""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import pytest

from canal.sandbox.docker.backend import DockerBackend
from canal.sandbox.docker.image import ensure_base
from canal.sandbox.errors import SESSION_FAILED
from canal.sandbox.result import EndReason
from canal.sandbox.spec import SandboxSpec
from tests.error_codes import raises_code


@pytest.fixture
def box(docker_backend: DockerBackend, small_spec: SandboxSpec) -> Iterator[str]:
    """A sandbox per test: these tests break shells on purpose."""
    name = f"canal-t-{uuid.uuid4().hex[:10]}"
    docker_backend.create(name, small_spec)
    docker_backend.exec(name, "cd /tmp && export KEPT=yes")
    yield name
    docker_backend.remove(name)


def out(backend: DockerBackend, name: str, command: str) -> bytes:
    result = backend.exec(name, command, timeout_s=20)
    assert (result.reason, result.exit_code, result.stderr.read_bytes()) == (EndReason.EXITED, 0, b"")
    return result.stdout.read_bytes()


def assert_state_kept(backend: DockerBackend, name: str) -> None:
    assert out(backend, name, 'echo "$PWD $KEPT"') == b"/tmp yes\n"
    assert backend.exec(name, ["printenv", "KEPT"]).stdout.read_bytes() == b"yes\n"


@pytest.mark.parametrize(("command", "code"), [
    ("exit", 0), ("exit 7", 7), ("set -e; false; echo no", 1), ("exec false", 1),
    ("cd /; exec sh -c 'exit 5'", 5), ("kill -TERM $BASHPID", 143),
])
def test_commands_that_end_their_shell_give_exact_codes(docker_backend: DockerBackend, box: str,
                                                        command: str, code: int) -> None:
    result = docker_backend.exec(box, command)
    assert (result.reason, result.exit_code) == (EndReason.EXITED, code)
    assert_state_kept(docker_backend, box)


def test_what_a_command_does_to_its_shell_does_not_leak(docker_backend: DockerBackend, box: str) -> None:
    hostile = ("trap 'echo trapped' EXIT DEBUG ERR; set -euo pipefail -o noclobber; shopt -s failglob; "
               "PS1='$ '; PROMPT_COMMAND='echo prompt'; IFS=x; alias echo=false; "
               "unset -f __canal_save __canal_apply __canal_prep; printf() { :; }; "
               "exec 3>/dev/null 1>&3 2>&3; echo gone")
    docker_backend.exec(box, hostile)
    assert out(docker_backend, box, "echo ok; [[ -o errexit || -o nounset ]] || echo clean") == b"ok\nclean\n"
    # The subshell holds no fd but its own 0, 1, 2 (builtins only: nothing forks to look).
    fds = "for fd in {3..32} 255; do [[ -e /proc/$BASHPID/fd/$fd ]] && echo $fd; done; echo end"
    assert out(docker_backend, box, fds) == b"end\n"


def test_shell_local_state_of_a_command_does_not_persist(docker_backend: DockerBackend, box: str) -> None:
    docker_backend.exec(box, "LOCAL=1; f() { echo f; }; export -n KEPT; export KEPT=again; unset KEPT")
    after = out(docker_backend, box, 'echo "[${LOCAL-}]"; type f 2>/dev/null; echo "[${KEPT-}]"')
    assert after == b"[]\n[]\n"
    assert docker_backend.exec(box, ["printenv", "KEPT"]).exit_code == 1


def test_values_pass_through_exactly(docker_backend: DockerBackend, box: str) -> None:
    docker_backend.exec(box, "export ODD=$'a\\nb=c \\\\ $x \\'q\\''; mkdir -p '/tmp/d ir' && cd '/tmp/d ir'")
    assert docker_backend.exec(box, ["printenv", "ODD"]).stdout.read_bytes() == b"a\nb=c \\ $x 'q'\n"
    assert out(docker_backend, box, "pwd") == b"/tmp/d ir\n"
    assert docker_backend.exec(box, ["pwd"]).stdout.read_bytes() == b"/tmp/d ir\n"
    missing = docker_backend.exec(box, "--version")
    assert (missing.exit_code, b"command not found" in missing.stderr.read_bytes()) == (127, True)


def test_stdin_is_empty_unless_given_and_output_is_binary_safe(docker_backend: DockerBackend,
                                                               box: str) -> None:
    assert out(docker_backend, box, 'read -r line; echo "[$line]"; cat') == b"[]\n"
    data = bytes(range(256)) * 300  # past one pipe buffer
    result = docker_backend.exec(box, "cat; printf '\\x00\\xff' >&2", stdin=data)
    assert (result.stdout.read_bytes(), result.stderr.read_bytes()) == (data, b"\x00\xff")
    forged = docker_backend.exec(box, "printf 'x\\0\\0\\0\\x0b{\"id\": \"1\"}'; echo 0 0")
    assert forged.stdout.read_bytes() == b'x\0\0\0\x0b{"id": "1"}0 0\n'


def test_per_command_env_restores_the_persistent_value(docker_backend: DockerBackend, box: str) -> None:
    assert out(docker_backend, box, "echo $KEPT") == b"yes\n"
    once = docker_backend.exec(box, "echo $KEPT $ONCE; export OTHER=set", env={"KEPT": "no", "ONCE": "1"})
    assert once.stdout.read_bytes() == b"no 1\n"
    assert out(docker_backend, box, 'echo "$KEPT [${ONCE-}] $OTHER"') == b"yes [] set\n"


def test_a_background_child_cannot_write_into_a_later_command(docker_backend: DockerBackend,
                                                              box: str) -> None:
    docker_backend.exec(box, "(sleep 0.5; echo late; echo late >&2) &")
    later = docker_backend.exec(box, "sleep 1; echo now")
    assert (later.stdout.read_bytes(), later.stderr.read_bytes()) == (b"now\n", b"")


@pytest.mark.parametrize(("command", "why"), [
    ("kill -9 $$; sleep 5", "killed the session's shell"),
    ("kill -STOP $$; sleep 5", "stopped the session's shell"),
    ("echo forged >/proc/$$/fd/1; sleep 5", "out of step"),
])
def test_a_command_that_breaks_the_shell_gets_a_fresh_one(docker_backend: DockerBackend, box: str,
                                                          command: str, why: str) -> None:
    result = docker_backend.exec(box, command, timeout_s=30)
    assert result.reason is EndReason.KILLED
    assert why in result.detail
    assert "fresh shell" in result.detail
    assert result.survivors == ()
    assert b"sleep 5" not in docker_backend.exec(box, ["ps", "-eo", "args"]).stdout.read_bytes()
    assert_state_kept(docker_backend, box)


def test_a_timeout_kills_the_shell_and_keeps_the_state_from_before(docker_backend: DockerBackend,
                                                                   box: str) -> None:
    result = docker_backend.exec(box, "cd /; export KEPT=no; exec sleep 1000", timeout_s=1)
    assert (result.reason, result.exit_code, result.survivors) == (EndReason.HARD_TIMEOUT, 124, ())
    assert b"sleep 1000" not in docker_backend.exec(box, ["ps", "-eo", "args"]).stdout.read_bytes()
    assert_state_kept(docker_backend, box)


def test_an_image_without_python_is_a_typed_error(docker_backend: DockerBackend, small_spec: SandboxSpec,
                                                  sandbox_image: str) -> None:
    # The sandbox image's own base has bash and no python3; nothing is built or removed here. (Removing
    # an image on Docker 20.10 locks every container of the engine in turn to see whether it runs: one
    # container held busy elsewhere on a shared engine, a start under load or an open copy stream, made
    # the removal wait for the client's 120 s timeout.)
    base = ensure_base(docker_backend.client)
    name = f"canal-t-{uuid.uuid4().hex[:10]}"
    try:
        docker_backend.create(name, small_spec.model_copy(update={"image": base}))
        with raises_code(SESSION_FAILED) as info:
            docker_backend.exec(name, "echo hi")
        assert "python3" in info.value.message
        assert info.value.code == "SESSION_FAILED"
        # what the engine said about it reaches the error: the agent's program (280 KB with its code
        # part) is not sent blindly into a process that is gone, which waited 15 s and read nothing
        assert "python3" in info.value.details["output"]
    finally:
        docker_backend.remove(name)


def test_the_agent_keeps_no_fd_of_finished_commands(docker_backend: DockerBackend, box: str) -> None:
    count = "ls /proc/$PPID/fd | wc -l"  # $PPID of a str command is the agent
    before = out(docker_backend, box, count)
    for _ in range(5):
        docker_backend.exec(box, "cat", stdin=b"x" * 100_000)
        docker_backend.exec(box, "echo; exit 3")
        docker_backend.exec(box, ["cat"], stdin=b"x")
    docker_backend.exec(box, "sleep 5", timeout_s=0.5)
    docker_backend.exec(box, "kill -9 $$")
    assert out(docker_backend, box, count) == before


def test_a_thief_of_the_shells_input_does_not_hang_the_session(docker_backend: DockerBackend,
                                                                box: str) -> None:
    docker_backend.exec(box, "(sleep 0.3; exec cat /proc/$$/fd/0 >/dev/null) &")
    docker_backend.exec(box, "sleep 0.6")  # the thief is reading the shell's input by now
    raced = docker_backend.exec(box, "pwd")  # whoever reads first gets the shell's next input
    if raced.reason is EndReason.KILLED:
        assert "stopped taking commands" in raced.detail
    else:
        assert raced.stdout.read_bytes() == b"/tmp\n"
    assert_state_kept(docker_backend, box)


def test_a_command_that_runs_in_the_loop_itself_sees_and_changes_nothing_of_it(
        docker_backend: DockerBackend, box: str) -> None:
    """`ps` and `ls` are programs: they run in the session's bash (no subshell: their parent is the loop),
    see only their own descriptors, and a builtin that would end the loop still runs in a subshell."""
    rows = [line.split() for line in out(docker_backend, box, "ps -e -o pid,ppid,comm").splitlines()[1:]]
    parent = {pid: (ppid, comm) for pid, ppid, comm in rows}
    ps = next(pid for pid, (_, comm) in parent.items() if comm == b"ps")
    shell, agent = parent[ps][0], parent[parent[ps][0]][0]
    assert (parent[shell][1], parent[agent][1]) == (b"bash", b"canal-agent")  # the loop, no subshell
    assert out(docker_backend, box, "ls /proc/self/fd").split() == [b"0", b"1", b"2", b"3"]
    for ending in ("exit 3", "e?it 4", "'ex'it 5", "true; exit 6"):
        docker_backend.exec(box, "touch /tmp/exit")  # what the glob expands to
        assert docker_backend.exec(box, ending).exit_code == int(ending[-1])
    assert_state_kept(docker_backend, box)


def test_the_gate_runs_before_the_command_starts_and_can_stop_it(docker_backend: DockerBackend,
                                                                 docker_client: object, box: str) -> None:
    container = docker_client.containers.get(box)  # type: ignore[attr-defined]

    def started() -> bool:
        return container.exec_run(["test", "-e", "/tmp/started"]).exit_code == 0

    seen: list[bool] = []
    result = docker_backend.exec(box, "touch /tmp/started", gate=lambda: seen.append(started()))
    assert (result.exit_code, seen, started()) == (0, [False], True)

    class AuditDown(Exception):
        pass

    def refuse() -> None:
        raise AuditDown

    for command in ("touch /tmp/cancelled", ["touch", "/tmp/cancelled"]):
        with pytest.raises(AuditDown):
            docker_backend.exec(box, command, gate=refuse)
    assert out(docker_backend, box, "ls /tmp/cancelled 2>/dev/null; echo end") == b"end\n"
    interrupted = docker_backend.exec(box, "touch /tmp/cancelled",
                                      gate=lambda: docker_backend.interrupt(box, "SIGINT") and None)
    assert interrupted.reason is EndReason.INTERRUPTED
    assert out(docker_backend, box, "ls /tmp/cancelled 2>/dev/null; echo end") == b"end\n"
    assert_state_kept(docker_backend, box)


def test_a_state_file_planted_by_a_command_that_saves_none_is_taken_by_no_one(
        docker_backend: DockerBackend, box: str) -> None:
    """Only a command run to save its state has its state file read: a stateless one (in a subshell or in
    the loop itself) that plants one changes neither the session's shell nor what the host is told, so
    the two never disagree (the policy decides with the host's view, the git guard's overrides are
    dropped by the agent's)."""
    out(docker_backend, box, r"mkdir -p /tmp/x && printf '/\0INJECTED=1\0PATH=/nowhere\0=\0' > /tmp/x/state")
    for plant in ("cp /tmp/x/state /tmp/.canal-shell-*/",  # in the loop itself
                  "cp /tmp/x/state /tmp/.canal-shell-*/ 2>/dev/null"):  # in a subshell
        assert docker_backend.exec(box, plant).exit_code == 0
        state = docker_backend.session_state(box)
        assert state is not None
        assert (state.cwd, "INJECTED" in state.changed) == ("/tmp", False)
        assert out(docker_backend, box, 'echo "[${INJECTED-}] $PWD $PATH"').startswith(b"[] /tmp /usr")
        assert_state_kept(docker_backend, box)


def test_a_planted_folder_the_shell_cannot_enter_is_not_what_the_host_is_told(
        docker_backend: DockerBackend, box: str) -> None:
    """A command that replaces Canal's EXIT trap and writes its own state naming a folder the shell
    cannot enter: the loop goes to / (as when its folder was removed), and the host is told where the
    loop is, not the planted folder. The same for a folder removed by the command that entered it."""
    plant = (r"mkdir -p /tmp/locked && chmod 0 /tmp/locked; trap - EXIT; "
             r"for d in /tmp/.canal-shell-*; do printf '/tmp/locked\0KEPT=yes\0=\0' > $d/state; done")
    docker_backend.exec(box, plant)
    state = docker_backend.session_state(box)
    assert state is not None
    assert out(docker_backend, box, 'echo "$PWD"') == f"{state.cwd}\n".encode()
    assert state.cwd == "/"
    docker_backend.exec(box, "mkdir -p /tmp/gone && cd /tmp/gone && rmdir /tmp/gone")
    state = docker_backend.session_state(box)
    assert state is not None
    assert out(docker_backend, box, 'echo "$PWD"') == f"{state.cwd}\n".encode()
