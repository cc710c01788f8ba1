"""Escape suite: what a command inside the default sandbox must not be able to do.

It runs under each runtime the engine has (runc, and gVisor: tests/integration/gvisor.py), and under each
twice: as the image's agent (uid 1000) and as uid 0, which is what a root-owned project's sandbox runs as
(every capability dropped, no-new-privileges, read-only root). Where gVisor's own kernel answers an
operation differently from Linux, the case says what gVisor does instead and checks from the host that
nothing outside the sandbox was reached."""

from __future__ import annotations

import os
import re
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from canal.sandbox.docker.backend import DockerBackend
from canal.sandbox.errors import MOUNT_REFUSED
from canal.sandbox.result import EndReason
from canal.sandbox.spec import Mount, SandboxSpec
from tests.error_codes import raises_code


@pytest.fixture(scope="module", params=["1000:1000", "0:0"], ids=["uid1000", "uid0"])
def user(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture(scope="module")
def host_workspace(tmp_path_factory: pytest.TempPathFactory, runtime: str, user: str) -> Path:
    """A host folder bound at /workspace, as a project is (one per sandbox): where the host side of an
    attempt is seen."""
    folder = tmp_path_factory.mktemp(f"escape-workspace-{runtime}-{user.split(':')[0]}")
    folder.chmod(0o777)  # writable by either sandbox user, whoever runs the tests
    return folder


@pytest.fixture(scope="module")
def box(docker_backend: DockerBackend, sandbox_image: str, runtime: str, user: str,
        host_workspace: Path) -> Iterator[str]:
    """One sandbox per runtime (runc, and gVisor when the engine has it) and user (1000, and 0 as for a
    root-owned project): every test runs under each."""
    os.environ["CANAL_HOST_SECRET_T"] = "host-only-value"
    name = f"canal-t-{uuid.uuid4().hex[:10]}"
    spec = SandboxSpec(image=sandbox_image, runtime=runtime, user=user,
                       mounts=(Mount(source=host_workspace, target="/workspace", read_only=False),),
                       limits={"memory": "128m", "pids": 64})  # type: ignore[arg-type]
    docker_backend.create(name, spec)
    yield name
    docker_backend.remove(name)
    del os.environ["CANAL_HOST_SECRET_T"]


def test_no_network(docker_backend: DockerBackend, box: str) -> None:
    table = docker_backend.exec(box, ["cat", "/proc/net/dev"]).stdout.read_bytes().decode()
    ifaces = [line.split(":")[0].strip() for line in table.splitlines()[2:]]
    assert ifaces == ["lo"]
    probe = "import socket; socket.create_connection(('1.1.1.1', 53), timeout=3)"
    result = docker_backend.exec(box, ["python3", "-c", probe], timeout_s=20)
    assert result.exit_code == 1
    err = result.stderr.read_bytes()
    assert b"Network is unreachable" in err or b"No route to host" in err  # runc, gVisor


@pytest.mark.parametrize("path", ["/x", "/etc/x", "/usr/bin/x", "/canal/output/x", "/var/x"])
def test_no_write_outside_workspace_and_tmpfs(docker_backend: DockerBackend, box: str, path: str) -> None:
    result = docker_backend.exec(box, ["touch", path])
    assert result.exit_code == 1
    # runc checks the read-only mount first; gVisor checks permissions first (the root is ro either way)
    assert any(e in result.stderr.read_bytes() for e in (b"Read-only file system", b"Permission denied"))


def test_root_is_mounted_read_only(docker_backend: DockerBackend, box: str) -> None:
    mounts = docker_backend.exec(box, ["cat", "/proc/mounts"]).stdout.read_bytes().decode().splitlines()
    root = [line.split() for line in mounts if line.split()[1] == "/"]
    assert root
    assert "ro" in root[-1][3].split(",")


def test_writes_inside_workspace_tmp_and_home_work(docker_backend: DockerBackend, box: str) -> None:
    assert docker_backend.exec(box, "touch /workspace/a /tmp/a $HOME/a").ok


def test_no_capabilities_and_no_privilege_gain(docker_backend: DockerBackend, box: str, user: str) -> None:
    status = docker_backend.exec(box, ["cat", "/proc/self/status"]).stdout.read_bytes().decode()
    caps = {line.split(":")[0]: line.split()[1] for line in status.splitlines() if line.startswith("Cap")}
    assert caps["CapEff"] == caps["CapPrm"] == caps["CapBnd"] == "0000000000000000"
    prctl = "import ctypes; print(ctypes.CDLL(None).prctl(39, 0, 0, 0, 0))"  # PR_GET_NO_NEW_PRIVS
    assert docker_backend.exec(box, ["python3", "-c", prctl]).stdout.read_bytes() == b"1\n"
    assert docker_backend.exec(box, ["id", "-u"]).stdout.read_bytes() == f"{user.split(':')[0]}\n".encode()


@dataclass(frozen=True)
class Outcome:
    """What a command inside the sandbox gets: whether it exits 0, and a pattern its output matches."""

    ok: bool
    says: bytes


REFUSED = Outcome(ok=False, says=rb"not permitted|permission denied|must be superuser")
HostCheck = Callable[[Path, int], None]  # (the workspace's host path of this case's file, sandbox uid)


def _owned_by_the_sandbox_user(path: Path, uid: int) -> None:
    assert path.stat().st_uid == uid


def _absent(path: Path, uid: int) -> None:
    assert not path.exists()


def _the_sandbox_users_if_made(path: Path, uid: int) -> None:
    """Refused (runc): nothing there; made (gVisor, whose exit 0 the case asserts): the sandbox user's."""
    assert not path.exists() or path.stat().st_uid == uid


def _created_through_the_bind_mount(path: Path, uid: int) -> None:
    """Written from inside after the attempt: /workspace is still the host folder (nothing mounted)."""
    assert path.stat().st_uid == uid


@dataclass(frozen=True)
class Op:
    """A privileged operation ($F: a file name of this case's own). runc refuses every one; ``runsc`` is
    what gVisor's own kernel does with it; ``host`` checks the host side (the bind-mounted workspace)."""

    command: str
    runsc: Outcome = REFUSED
    host: HostCheck | None = None


OPS = {
    "chown": Op("touch /workspace/$F && chown 1234 /workspace/$F", host=_owned_by_the_sandbox_user),
    "mknod-workspace": Op("mknod /workspace/$F c 1 1", host=_absent),
    # gVisor makes the node in its own memory-backed /tmp; opening it reaches no device (its kernel has
    # neither /dev/mem nor the host's disks)
    "mknod-chr-tmpfs": Op("mknod /tmp/$F c 1 1 && head -c 1 /tmp/$F",
                          runsc=Outcome(ok=False, says=rb"No such device or address")),
    "mknod-blk-tmpfs": Op("mknod /tmp/$F b 8 0 && head -c 1 /tmp/$F",
                          runsc=Outcome(ok=False, says=rb"No such device or address")),
    # gVisor refuses it too, in its own words as uid 0 (ENOTDIR)
    "mount": Op("mount -t tmpfs none /workspace; rc=$?; touch /workspace/$F; exit $rc",
                runsc=Outcome(ok=False, says=rb"must be superuser|mount point is not a directory"),
                host=_created_through_the_bind_mount),
    "userns-mount": Op("unshare -rm mount -t tmpfs none /workspace; rc=$?; touch /workspace/$F; exit $rc",
                       host=_created_through_the_bind_mount),
    # gVisor gives user namespaces: root there is root of gVisor's kernel only; on the host, what it
    # writes belongs to the sandbox's user
    "userns": Op("unshare -r sh -c 'test $(id -u) = 0 && touch /workspace/$F'",
                 runsc=Outcome(ok=True, says=rb"^$"), host=_the_sandbox_users_if_made),
    "chroot": Op("chroot / true"),
    "setuid": Op("setpriv --reuid 1234 --clear-groups true"),
}


@pytest.mark.parametrize("op", OPS.values(), ids=OPS.keys())
def test_no_privileged_operation_reaches_the_host_even_as_uid_0(docker_backend: DockerBackend, box: str,
                                                                runtime: str, user: str,
                                                                host_workspace: Path, op: Op) -> None:
    name = f"op-{uuid.uuid4().hex[:8]}"
    result = docker_backend.exec(box, op.command, env={"F": name}, timeout_s=20)
    expected = op.runsc if runtime == "runsc" else REFUSED
    said = result.stdout.read_bytes() + result.stderr.read_bytes()
    assert (result.exit_code == 0) is expected.ok, said
    assert re.search(expected.says, said, re.IGNORECASE), said
    if op.host is not None:
        op.host(host_workspace / name, int(user.split(":")[0]))


# Issue 36, finding 1: a file's owner may set setuid and setgid bits without any capability, so uid 0
# with none (a root-owned project) could leave a root setuid binary on the host. The agent's seccomp
# filter (canal/sandbox/agent/seccomp.py) refuses every way of asking for those bits; each case is
# another way ($F: this case's file or folder in the workspace).
PRIVILEGED_FILES = {
    "chmod-4755": "cp /bin/bash /workspace/$F && chmod 4755 /workspace/$F",
    "chmod-symbolic": "touch /workspace/$F && chmod u+s,g+s /workspace/$F",
    "chmod-setgid-folder": "mkdir /workspace/$F && chmod g+s /workspace/$F",
    "install-mode": "install -m 6755 /bin/true /workspace/$F",
    "open-creat": ("python3 -c 'import os,sys; os.open(sys.argv[1], os.O_CREAT|os.O_WRONLY, 0o4755)' "
                   "/workspace/$F"),
    "mknod-regular": ("python3 -c 'import os,stat,sys; os.mknod(sys.argv[1], stat.S_IFREG|0o2755)' "
                      "/workspace/$F"),
    "fchmod": ("python3 -c 'import os,sys; fd=os.open(sys.argv[1], os.O_CREAT|os.O_WRONLY, 0o755); "
               "os.fchmod(fd, 0o4755)' /workspace/$F"),
    "raw-fchmodat2": ("touch /workspace/$F && python3 -c 'import ctypes,os,sys; libc=ctypes.CDLL(None, "
                      "use_errno=True); r=libc.syscall(452, -100, sys.argv[1].encode(), 0o4755, 0); "
                      "sys.exit(os.strerror(ctypes.get_errno()) if r else 0)' /workspace/$F"),
    "tar-preserve": ("python3 -c 'import io,sys,tarfile; t=tarfile.open(\"/tmp/t.tar\",\"w\"); "
                     "i=tarfile.TarInfo(sys.argv[1]); i.mode=0o4755; t.addfile(i, io.BytesIO()); t.close()' "
                     "$F && tar -xpf /tmp/t.tar -C /workspace"),
}


# gVisor's 2022 kernel answers coreutils' statx with EINVAL: the mode is read with Python's stat
STAT_MODE = "import os,sys; print(os.lstat(sys.argv[1]).st_mode if os.path.lexists(sys.argv[1]) else 0)"


def _privilege_bits(root: Path) -> list[str]:
    found = [root, *root.rglob("*")] if root.exists() else []
    return [f"{p}: {oct(p.lstat().st_mode)}" for p in found if p.lstat().st_mode & 0o6000]


@pytest.mark.parametrize("command", PRIVILEGED_FILES.values(), ids=PRIVILEGED_FILES.keys())
def test_no_setuid_or_setgid_file_reaches_the_host(docker_backend: DockerBackend, box: str,
                                                   host_workspace: Path, command: str) -> None:
    name = f"suid-{uuid.uuid4().hex[:8]}"
    result = docker_backend.exec(box, command, env={"F": name}, timeout_s=30)
    said = result.stdout.read_bytes() + result.stderr.read_bytes()
    assert result.exit_code != 0, said
    assert re.search(rb"not permitted", said, re.IGNORECASE), said
    assert _privilege_bits(host_workspace / name) == []
    inside = docker_backend.exec(box, ["python3", "-c", STAT_MODE, f"/workspace/{name}"]).stdout.read_bytes()
    assert int(inside or b"0") & 0o6000 == 0, inside  # as the sandbox sees it too (0: nothing was made)


def test_a_copy_of_an_image_setuid_binary_keeps_no_bit(docker_backend: DockerBackend, box: str,
                                                       host_workspace: Path) -> None:
    """``cp -p`` as uid 0 asks for the bit and is refused; as another user cp drops it itself."""
    name = f"cp-{uuid.uuid4().hex[:8]}"
    result = docker_backend.exec(box, "cp -p /usr/bin/passwd /workspace/$F", env={"F": name}, timeout_s=30)
    assert (host_workspace / name).is_file(), result.stderr.read_bytes()
    assert _privilege_bits(host_workspace / name) == []


def test_ordinary_modes_and_the_sticky_bit_still_work(docker_backend: DockerBackend, box: str,
                                                      host_workspace: Path) -> None:
    name = f"modes-{uuid.uuid4().hex[:8]}"
    script = ("mkdir /workspace/$F && touch /workspace/$F/a && chmod 0750 /workspace/$F/a && "
              "chmod 1777 /workspace/$F && python3 -c 'import os,sys; os.close(os.open(sys.argv[1], "
              "os.O_CREAT|os.O_WRONLY, 0o640))' /workspace/$F/b")
    result = docker_backend.exec(box, script, env={"F": name}, timeout_s=30)
    assert result.exit_code == 0, result.stderr.read_bytes()
    assert (host_workspace / name / "a").stat().st_mode & 0o7777 == 0o750
    assert (host_workspace / name).stat().st_mode & 0o7777 == 0o1777


def test_every_process_inherits_the_filter(docker_backend: DockerBackend, box: str) -> None:
    """A background-style detached child and a fresh bash are still under it (filters are irrevocable)."""
    nested = ("setsid -w bash -c 'touch /tmp/x-$$ && chmod 4755 /tmp/x-$$ 2>&1; "
              f"python3 -c \"{STAT_MODE}\" /tmp/x-$$'")
    out = docker_backend.exec(box, nested, timeout_s=30).stdout.read_bytes()
    assert b"not permitted" in out
    modes = re.findall(rb"^([0-9]+)$", out, re.MULTILINE)
    assert modes, out
    assert int(modes[0]) & 0o6000 == 0, out


def test_no_host_environment_and_no_canal_state(docker_backend: DockerBackend, box: str,
                                                state_dir: Path, sandbox_image: str) -> None:
    env = docker_backend.exec(box, ["env"]).stdout.read_bytes()
    assert b"HOME=/home/agent" in env  # the positive control: env printed the sandbox's environment
    assert b"CANAL_HOST_SECRET_T" not in env
    assert b"host-only-value" not in env
    assert docker_backend.exec(box, ["ls", str(state_dir)]).exit_code == 2
    guarded = DockerBackend(docker_backend.client, owner=docker_backend.owner, protected_paths=[state_dir])
    spec = SandboxSpec(image=sandbox_image, mounts=(Mount(source=state_dir.parent, target="/data"),))
    with raises_code(MOUNT_REFUSED):
        guarded.create(f"canal-t-{uuid.uuid4().hex[:10]}", spec)


# Forks until the process limit refuses one, holds the limit for 2.5 s (past two heartbeats of the
# session agent), then lets its children go and exits: at the command's end few processes are left, so
# only a look while it ran can see the limit was reached.
HOLD_THE_LIMIT = """
import os
n = 0
try:
    while n < 1000:
        if os.fork() == 0:
            os.execv("/bin/sleep", ["sleep", "2.5"])  # small: 64 forked Pythons would be 128m under gVisor
        n += 1
except OSError as exc:
    print(n, exc.errno)
while True:
    try:
        os.wait()
    except ChildProcessError:
        break
"""


def test_the_process_limit_holds_and_is_reported_even_as_uid_0(docker_backend: DockerBackend,
                                                              bomb_box: str) -> None:
    """runc: the pids cgroup; gVisor: RLIMIT_NPROC, which gVisor applies to a uid 0 without
    capabilities too (Linux would exempt it: docs/gvisor.md). In a sandbox of its own: under gVisor, 128m
    shared with the tests before it was once too little on a loaded machine (the sandbox went)."""
    result = docker_backend.exec(bomb_box, ["python3", "-c", HOLD_THE_LIMIT], timeout_s=30)
    made, errno = (int(v) for v in result.stdout.read_bytes().split())
    assert errno == 11  # EAGAIN: the limit (64) refused a fork
    assert 16 < made < 64
    assert "pids" in result.limits_hit
    assert result.reason is EndReason.KILLED
    assert docker_backend.exec(bomb_box, "echo alive").stdout.read_bytes() == b"alive\n"


@pytest.fixture
def bomb_box(docker_backend: DockerBackend, sandbox_image: str, runtime: str, user: str) -> Iterator[str]:
    """A sandbox of its own, with room for two bombs: under gVisor the memory a bomb's processes used
    stays charged to the sandbox after they are gone (measured at pids 64: 13 MiB before, 65 MiB after
    the first bomb, past 128 MiB during the second, which took a 128m sandbox down)."""
    name = f"canal-t-{uuid.uuid4().hex[:10]}"
    spec = SandboxSpec(image=sandbox_image, runtime=runtime, user=user,
                       limits={"memory": "256m", "pids": 64})  # type: ignore[arg-type]
    docker_backend.create(name, spec)
    yield name
    docker_backend.remove(name)


def test_fork_bombs_are_contained_and_reported(docker_backend: DockerBackend, bomb_box: str) -> None:
    def processes() -> set[int]:
        listed = docker_backend.exec(bomb_box, ["ps", "-e", "-o", "pid=,comm="]).stdout.read_bytes()
        return {int(row.split()[0]) for row in listed.splitlines() if row.split()[1:] != [b"ps"]}

    # a bomb whose command ends at once: whatever it reached, nothing of it is left (the session's shell
    # may go too: the agent starts a new one with the next command)
    before = processes()
    quick = docker_backend.exec(bomb_box, ":(){ :|:& };:", timeout_s=20)
    assert quick.survivors == ()
    assert processes() <= before
    # one whose command keeps running (a loop of builtins: no fork) until its timeout, as a bomb that
    # waits for its children would: seen at the limit while it runs, whatever the runtime or user
    bomb = docker_backend.exec(bomb_box, ":(){ :|:& };:; while :; do :; done", timeout_s=4)
    assert "pids" in bomb.limits_hit
    assert bomb.reason is EndReason.HARD_TIMEOUT
    assert bomb.survivors == ()
    assert docker_backend.exec(bomb_box, "echo alive").stdout.read_bytes() == b"alive\n"


def test_memory_bomb_is_contained_and_reported(docker_backend: DockerBackend, sandbox_image: str,
                                               runtime: str) -> None:
    name = f"canal-t-{uuid.uuid4().hex[:10]}"
    spec = SandboxSpec(image=sandbox_image, runtime=runtime, limits={"memory": "128m", "pids": 64})  # type: ignore[arg-type]
    docker_backend.create(name, spec)
    try:
        bomb = "a = []\nwhile True: a.append(bytearray(10**7))"
        result = docker_backend.exec(name, ["python3", "-c", bomb], timeout_s=30)
        if runtime == "runsc":
            # the host's OOM killer hits gVisor's Sentry: the whole sandbox goes, and says so
            assert result.reason is EndReason.SANDBOX_VANISHED
            assert docker_backend.get(name) is None or not docker_backend.get(name).running  # type: ignore[union-attr]
            return
        assert result.reason is EndReason.OOM_KILLED
        assert result.exit_code == 137
        assert "memory" in result.limits_hit
        assert docker_backend.exec(name, "echo alive").stdout.read_bytes() == b"alive\n"
    finally:
        docker_backend.remove(name)


def test_detached_children_are_dead_after_a_timeout(docker_backend: DockerBackend, box: str) -> None:
    command = ("setsid sleep 1001 & nohup sleep 1002 >/dev/null 2>&1 & "
               "( ( sleep 1003 & ) & ) ; sleep 1004")
    result = docker_backend.exec(box, command, timeout_s=1)
    assert result.reason is EndReason.HARD_TIMEOUT
    assert result.exit_code == 124
    assert result.survivors == ()
    left = docker_backend.exec(box, ["ps", "-eo", "args"]).stdout.read_bytes()
    assert b"sleep 100" not in left


def test_runs_under_the_runtime_it_asked_for(docker_backend: DockerBackend, box: str, runtime: str) -> None:
    """runsc is never silently runc: gVisor's kernel says so in its boot log."""
    kernel_log = docker_backend.exec(box, ["dmesg"]).stdout.read_bytes()
    assert (b"Starting gVisor" in kernel_log) is (runtime == "runsc")
