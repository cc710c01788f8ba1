"""The agent's seccomp filter, run on a classic-BPF interpreter: what it refuses and what it lets through.

The real kernel's answer is checked by the escape suite (tests/integration/sandbox/test_escape.py); this
pins the program for both architectures, with every system call and argument position it must read."""

from __future__ import annotations

import errno
import struct

import pytest

from canal.sandbox.agent.seccomp import (
    ARCHES,
    JEQ,
    JGE,
    JSET,
    LD_ABS,
    RET,
    RET_ALLOW,
    RET_ERRNO,
    FilterRefused,
    program,
)

EPERM = RET_ERRNO | errno.EPERM
ENOSYS = RET_ERRNO | errno.ENOSYS
O_CREAT, O_TMPFILE, O_WRONLY = 0o100, 0o20200000, 0o1


def run(machine: str, nr: int, args: tuple[int, ...] = (), arch: int | None = None) -> int:
    """What the filter returns for one system call (a tiny interpreter of the opcodes it uses)."""
    arch = ARCHES[machine][0] if arch is None else arch
    words = [*args, *([0] * (6 - len(args)))]
    data = struct.pack("<IIQ6Q", nr, arch, 0, *words)
    code, pc, acc = program(machine), 0, 0
    while True:
        op, jt, jf, k = code[pc]
        if op == RET:
            return k
        if op == LD_ABS:
            acc = struct.unpack_from("<I", data, k)[0]
            pc += 1
            continue
        taken = {JEQ: acc == k, JGE: acc >= k, JSET: bool(acc & k)}[op]
        pc += 1 + (jt if taken else jf)


def nr_of(machine: str, name: str) -> int:
    return ARCHES[machine][1][name][0]


@pytest.mark.parametrize("machine", sorted(ARCHES))
@pytest.mark.parametrize("mode", [0o4755, 0o2755, 0o6755, 0o4000, 0o2000, 0o104755])
def test_every_chmod_call_refuses_setuid_and_setgid(machine: str, mode: int) -> None:
    for name, (nr, mode_arg, flags_arg) in ARCHES[machine][1].items():
        args = [0] * 6
        args[mode_arg] = mode
        if flags_arg is not None:
            args[flags_arg] = O_CREAT | O_WRONLY
        assert run(machine, nr, tuple(args)) == EPERM, name


@pytest.mark.parametrize("machine", sorted(ARCHES))
@pytest.mark.parametrize("mode", [0o755, 0o644, 0o1777, 0o777, 0])
def test_ordinary_modes_are_allowed(machine: str, mode: int) -> None:
    for name, (nr, mode_arg, flags_arg) in ARCHES[machine][1].items():
        args = [0] * 6
        args[mode_arg] = mode
        if flags_arg is not None:
            args[flags_arg] = O_CREAT
        assert run(machine, nr, tuple(args)) == RET_ALLOW, name


@pytest.mark.parametrize("machine", sorted(ARCHES))
def test_open_without_creating_ignores_its_mode(machine: str) -> None:
    nr, mode_arg, flags_arg = ARCHES[machine][1]["openat"]
    assert flags_arg is not None
    args = [0] * 6
    args[mode_arg] = 0o4755  # garbage in the mode register: the kernel ignores it without O_CREAT
    assert run(machine, nr, tuple(args)) == RET_ALLOW
    args[flags_arg] = O_TMPFILE
    assert run(machine, nr, tuple(args)) == EPERM


@pytest.mark.parametrize("machine", sorted(ARCHES))
@pytest.mark.parametrize("name", ["openat2", "io_uring_setup", "io_uring_enter", "io_uring_register"])
def test_calls_the_filter_cannot_read_are_refused_as_missing(machine: str, name: str) -> None:
    assert run(machine, ARCHES[machine][2][name]) == ENOSYS


@pytest.mark.parametrize("machine", sorted(ARCHES))
def test_other_calls_pass(machine: str) -> None:
    for nr in (0, 1, 3, 59, 60, 221, 231):
        if nr not in {v[0] for v in ARCHES[machine][1].values()}:
            assert run(machine, nr, (0o4755, 0o4755, 0o4755, 0o4755)) == RET_ALLOW


def test_another_architecture_is_refused_whole() -> None:
    i386 = 0x40000003
    assert run("x86_64", 15, (0, 0o644), arch=i386) == ENOSYS  # chmod of i386, harmless mode: still no
    assert run("x86_64", 1, arch=i386) == ENOSYS


def test_x32_calls_are_refused() -> None:
    assert run("x86_64", 0x40000000 | nr_of("x86_64", "chmod"), (0, 0o644)) == ENOSYS


def test_the_x86_64_numbers_are_linux_s() -> None:
    # from the kernel's arch/x86/entry/syscalls/syscall_64.tbl
    table = ARCHES["x86_64"][1]
    assert {k: v[0] for k, v in table.items()} == {
        "chmod": 90, "fchmod": 91, "fchmodat": 268, "fchmodat2": 452, "open": 2, "openat": 257,
        "creat": 85, "mknod": 133, "mknodat": 259}


def test_an_unknown_architecture_is_refused() -> None:
    with pytest.raises(FilterRefused, match="riscv64"):
        program("riscv64")
