"""No privileged file leaves the sandbox: a seccomp filter the agent installs on itself (stdlib only).

A file's owner may set its setuid and setgid bits without any capability, so uid 0 with every
capability dropped (a root-owned project's sandbox) could leave a root setuid binary in the bind-mounted
workspace, which any local user of the host could then run. The policy cannot see every way of doing it
(``chmod``, ``install -m``, ``tar -xp``, ``cp -p``, an ``open`` with ``O_CREAT`` and mode 04755, a
``mknod`` of a regular file, a program's own system call), so the kernel refuses it: before it serves
anything the agent adds this filter to the engine's own seccomp profile (filters stack; each can only
narrow what the one before allowed), and every process of the sandbox descends from the agent and
inherits it, irrevocably, across ``fork`` and ``execve``. gVisor's kernel enforces a task's seccomp
filters too.

Refused with EPERM: the chmod family and the file-creating calls (``open``, ``openat``, ``creat``,
``mknod``, ``mknodat``) when the mode asks for S_ISUID or S_ISGID (a creating call only with
``O_CREAT`` or ``O_TMPFILE``: otherwise its mode is ignored by the kernel). Refused with ENOSYS, so
that programs fall back to calls the filter can read: ``openat2`` (its mode is behind a pointer) and
io_uring (its requests never pass through seccomp). A system call of another architecture (a 32-bit
binary, x32) is refused whole: its numbers are not the ones checked here. File capabilities need
CAP_SETFCAP, which the sandbox never has.
"""

from __future__ import annotations

import ctypes
import errno
import os
import struct
import sys
from collections.abc import Sequence

PR_SET_NO_NEW_PRIVS = 38
PR_SET_SECCOMP = 22
SECCOMP_MODE_FILTER = 2
RET_ALLOW = 0x7FFF0000
RET_ERRNO = 0x00050000
# classic BPF opcodes
LD_ABS = 0x20  # BPF_LD | BPF_W | BPF_ABS
JEQ = 0x15  # BPF_JMP | BPF_JEQ | BPF_K
JGE = 0x35  # BPF_JMP | BPF_JGE | BPF_K
JSET = 0x45  # BPF_JMP | BPF_JSET | BPF_K
RET = 0x06  # BPF_RET | BPF_K
PRIVILEGE_BITS = 0o6000  # S_ISUID | S_ISGID
CREATING = 0o100 | 0o20000000  # O_CREAT | __O_TMPFILE
X32_SYSCALL_BIT = 0x40000000

# Per architecture: the AUDIT_ARCH value and, per system call, (number, mode argument, flags argument).
Checked = tuple[int, int, int | None]
ARCHES: dict[str, tuple[int, dict[str, Checked], dict[str, int]]] = {
    "x86_64": (0xC000003E, {
        "chmod": (90, 1, None), "fchmod": (91, 1, None), "fchmodat": (268, 2, None),
        "fchmodat2": (452, 2, None), "open": (2, 2, 1), "openat": (257, 3, 2), "creat": (85, 1, None),
        "mknod": (133, 1, None), "mknodat": (259, 2, None),
    }, {"openat2": 437, "io_uring_setup": 425, "io_uring_enter": 426, "io_uring_register": 427}),
    "aarch64": (0xC00000B7, {
        "fchmod": (52, 1, None), "fchmodat": (53, 2, None), "fchmodat2": (452, 2, None),
        "openat": (56, 3, 2), "mknodat": (33, 2, None),
    }, {"openat2": 437, "io_uring_setup": 425, "io_uring_enter": 426, "io_uring_register": 427}),
}


class FilterRefused(RuntimeError):
    """The kernel did not take the filter: the agent must not serve."""


def _arg_low(index: int) -> int:
    """Offset in ``struct seccomp_data`` of argument ``index``'s low 32 bits (modes and flags fit)."""
    return 16 + 8 * index + (4 if sys.byteorder == "big" else 0)


def program(machine: str) -> list[tuple[int, int, int, int]]:
    """The filter for ``machine`` (``os.uname().machine``) as (code, jt, jf, k) instructions."""
    if machine not in ARCHES:
        msg = f"no seccomp table for architecture {machine!r}"
        raise FilterRefused(msg)
    arch, checked, hidden = ARCHES[machine]
    # symbolic jumps: an int is a relative offset, a str names a terminal below
    code: list[tuple[int, int | str, int | str, int]] = [
        (LD_ABS, 0, 0, 4), (JEQ, 0, "nosys", arch), (LD_ABS, 0, 0, 0),
    ]
    if machine == "x86_64":
        code.append((JGE, "nosys", 0, X32_SYSCALL_BIT))
    for nr, mode_arg, flags_arg in checked.values():
        body: list[tuple[int, int | str, int | str, int]] = []
        if flags_arg is not None:
            body += [(LD_ABS, 0, 0, _arg_low(flags_arg)), (JSET, 0, "allow", CREATING)]
        body += [(LD_ABS, 0, 0, _arg_low(mode_arg)), (JSET, "eperm", "allow", PRIVILEGE_BITS)]
        code.append((JEQ, 0, len(body), nr))
        code += body
    code += [(JEQ, "nosys", 0, nr) for nr in hidden.values()]
    terminals = {"allow": RET_ALLOW, "eperm": RET_ERRNO | errno.EPERM, "nosys": RET_ERRNO | errno.ENOSYS}
    at = {name: len(code) + i for i, name in enumerate(terminals)}
    out = [(op, _offset(jt, i, at), _offset(jf, i, at), k) for i, (op, jt, jf, k) in enumerate(code)]
    return out + [(RET, 0, 0, value) for value in terminals.values()]


def _offset(target: int | str, index: int, at: dict[str, int]) -> int:
    jump = target if isinstance(target, int) else at[target] - index - 1
    if not 0 <= jump <= 255:
        msg = f"seccomp jump out of range: {jump}"
        raise FilterRefused(msg)
    return jump


def install(machine: str | None = None) -> None:
    """Add the filter to this process (inherited by everything it starts); FilterRefused if it failed."""
    instructions: Sequence[tuple[int, int, int, int]] = program(machine or os.uname().machine)
    raw = b"".join(struct.pack("HBBI", *ins) for ins in instructions)
    buf = ctypes.create_string_buffer(raw, len(raw))

    class SockFprog(ctypes.Structure):
        _fields_ = (("len", ctypes.c_ushort), ("filter", ctypes.c_void_p))

    prog = SockFprog(len(instructions), ctypes.cast(buf, ctypes.c_void_p))
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl.argtypes = [ctypes.c_int, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong]
    # the engine already sets no_new_privs (no-new-privileges); it is needed for an unprivileged filter
    if libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
        msg = f"prctl(PR_SET_NO_NEW_PRIVS) failed: {os.strerror(ctypes.get_errno())}"
        raise FilterRefused(msg)
    if libc.prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, ctypes.addressof(prog), 0, 0) != 0:
        msg = f"prctl(PR_SET_SECCOMP) failed: {os.strerror(ctypes.get_errno())}"
        raise FilterRefused(msg)
