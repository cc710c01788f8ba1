"""The session's long-lived bash (stdlib only; runs inside the sandbox, driven by the agent).

One bash per session saves a bash start per ``str`` command. It never runs a command itself: for
each request it forks a subshell, so nothing a command does to its shell (``exit``, ``exec``,
traps, ``set -e``, ``exec`` redirections, options, functions, reading stdin) reaches the loop.
The subshell saves its working directory and exported variables on exit when they changed (unless the
agent found that the command cannot change them: ``agent.stateless``); the loop applies them, so they
persist like a terminal. Only a command run to save (``save``) has its state file applied, by the loop
and by the agent alike: one a stateless command planted is ignored by both, so they never disagree.
Shell-local variables, aliases, functions (exported
ones too) and options do not persist: a later command never runs an alias or function an earlier one
defined. The loop itself starts without BASH_ENV, ENV, SHELLOPTS and BASHOPTS, so nothing sources code
into it; an exported execution-relevant variable reaches later commands, and the agent reports it with
every reply so that the policy decides with it (``Agent.state``).

A command that provably runs only programs and printing or testing builtins, with nothing for this
command only (``agent.stateless.inline``), runs in the loop itself instead: one fork fewer for a
program (the subshell's), none at all for ``true``; about a millisecond a command.

Request: the agent writes a NUL-separated file (stdin path, stdout path, stderr path, workdir,
command, ``save``, ``inline`` or nothing, then ``NAME=VALUE`` for this command only), then a line with a fresh
random token on the shell's stdin (the command's subshell never sees it). The paths are
``/proc/<agent>/fd/<n>`` of pipes the agent holds, so each command gets its own pipes and a background
child of an old command cannot write into a newer one's output. Reply: ``<token> <status>`` on the
shell's stdout; any other line means the shell is out of step. The state file ends with a ``=``
record, so a state cut short by a kill is ignored. Only builtins run in the loop, and no value is
ever spliced into code.

The agent gives up on the shell (and starts a fresh one with the state from before the command)
when it dies, answers out of step, is stopped, or sits idle without answering at two heartbeats
in a row, which is what happens when something else read its input.
"""

from __future__ import annotations

import array
import contextlib
import fcntl
import os
import subprocess
import tempfile
import termios

from canal.sandbox.agent.procs import live_pids, proc_stat, raise_oom_score
from canal.sandbox.agent.stateless import BASH_NAMES, mode

# Variables a starting bash acts on by itself (BASH_ENV is sourced, SHELLOPTS sets options): the long-lived
# loop never starts with them, so nothing a command exported can define functions or options in it.
LOOP_UNSAFE = frozenset({"BASH_ENV", "ENV", "SHELLOPTS", "BASHOPTS"})
# Names bash sets itself in the loop (or the loop never exports): an override of one is always passed on.
LOOP_OWN = LOOP_UNSAFE | {"PWD", "OLDPWD", "SHLVL", "_"}


def needed_overrides(env: dict[str, str], session: dict[str, str]) -> dict[str, str]:
    """The per-command variables the loop must export: one the session already exports with the same
    value changes nothing (the command starts with it either way, and keeps what it does to it), so it
    is not sent. The git guard's forty-odd variables are in every sandbox's environment, and exporting
    them one by one in bash cost most of a millisecond per command."""
    return {k: v for k, v in env.items()
            if session.get(k) != v or k in LOOP_OWN or k.startswith("BASH_FUNC_")}


# The command runs in a function defined on line 1 of a file sourced as ``bash``: bash names the file and
# counts lines from the function's, so errors read as ``bash -c`` prints them ("bash: line 1: make:
# command not found"), never with Canal's name or a line of the loop below.
RUNNER = '__canal_run() { eval -- "${__canal_req[4]-}"; }\n'
SCRIPT = r"""
__canal_dir=$1
__canal_start=$PWD
CDPATH= cd -- "$__canal_dir" && shopt -u sourcepath && . bash && shopt -s sourcepath
CDPATH= cd -- "$__canal_start" 2>/dev/null || cd /
unset -v __canal_start OLDPWD
__canal_prep() {
  __canal_base=$PWD __canal_ovn=() __canal_ovv=() __canal_ovo=() __canal_ovx=()
  local __canal_kv __canal_n
  for __canal_kv in "${__canal_req[@]:6}"; do
    __canal_n=${__canal_kv%%=*}
    __canal_ovn+=("$__canal_n") __canal_ovv+=("${__canal_kv#*=}") __canal_ovo+=("${!__canal_n-}")
    if [[ ${!__canal_n@a} == *x* ]]; then __canal_ovx+=(1); else __canal_ovx+=(""); fi
    export "$__canal_kv"
  done
  if [[ -n ${__canal_req[3]} ]]; then
    CDPATH= cd -- "${__canal_req[3]}" 2>/dev/null || cd /
  elif [[ ! -d $PWD ]]; then
    cd /
  fi
  [[ ${__canal_req[5]-} != save ]] || trap __canal_save EXIT
}
__canal_records() {
  local __canal_n
  compgen -e >| "$__canal_dir/names"
  mapfile -t __canal_names < "$__canal_dir/names"
  __canal_rec=("$1")
  for __canal_n in "${__canal_names[@]}"; do __canal_rec+=("$__canal_n=${!__canal_n}"); done
}
__canal_same() {
  local __canal_i
  (( ${#__canal_rec[@]} == ${#__canal_last[@]} )) || return 1
  for __canal_i in "${!__canal_rec[@]}"; do
    [[ ${__canal_rec[__canal_i]} == "${__canal_last[__canal_i]}" ]] || return 1
  done
}
__canal_save() {
  { set +eux; } 2>/dev/null
  local __canal_i __canal_n __canal_cwd=$PWD
  if [[ -n ${__canal_req[3]} && $__canal_cwd == "${__canal_req[3]}" ]]; then __canal_cwd=$__canal_base; fi
  for __canal_i in "${!__canal_ovn[@]}"; do
    __canal_n=${__canal_ovn[__canal_i]}
    if [[ ${!__canal_n@a} == *x* && ${!__canal_n} == "${__canal_ovv[__canal_i]}" ]]; then
      if [[ -n ${__canal_ovx[__canal_i]} ]]; then
        export "$__canal_n=${__canal_ovo[__canal_i]}"
      else
        unset -v "$__canal_n"
      fi
    fi
  done
  __canal_records "$__canal_cwd"
  __canal_same || printf '%s\0' "${__canal_rec[@]}" = >| "$__canal_dir/state"
}
__canal_apply() {
  local -a __canal_st __canal_cur
  local -A __canal_keep=()
  local __canal_kv __canal_n
  : >| "$__canal_dir/applied"
  [[ -f $__canal_dir/state ]] || return 0
  mapfile -d '' -t __canal_st < "$__canal_dir/state"
  (( ${#__canal_st[@]} >= 2 )) && [[ ${__canal_st[-1]} == = ]] || return 0
  unset '__canal_st[-1]'
  for __canal_kv in "${__canal_st[@]:1}"; do
    __canal_n=${__canal_kv%%=*}
    __canal_keep[$__canal_n]=1
    case $__canal_n in PWD|SHLVL) ;; *) export "$__canal_kv" 2>/dev/null ;; esac
  done
  compgen -e >| "$__canal_dir/names"
  mapfile -t __canal_cur < "$__canal_dir/names"
  for __canal_n in "${__canal_cur[@]}"; do
    [[ -n ${__canal_keep[$__canal_n]-} ]] || unset -v "$__canal_n" 2>/dev/null
  done
  CDPATH= cd -- "${__canal_st[0]}" 2>/dev/null || CDPATH= cd /
  __canal_records "$PWD"
  __canal_last=("${__canal_rec[@]}")
  printf '%s\0' "${__canal_rec[@]}" = >| "$__canal_dir/applied"
}
__canal_records "$PWD"
__canal_last=("${__canal_rec[@]}")
{ compgen -b; compgen -k; compgen -A function; } >| "$__canal_dir/builtins"
while IFS= read -r __canal_seq; do
  __canal_req=()
  mapfile -d '' -t __canal_req < "$__canal_dir/req"
  : >| "$__canal_dir/req"
  if [[ ${__canal_req[5]-} == inline ]]; then
    __canal_run \
      < "${__canal_req[0]-/dev/null}" > "${__canal_req[1]-/dev/null}" 2> "${__canal_req[2]-/dev/null}"
    __canal_status=$?
    printf '%s %s\n' "$__canal_seq" "$__canal_status"
    continue
  fi
  ( unset __canal_seq; set --; __canal_prep; __canal_run ) \
    < "${__canal_req[0]-/dev/null}" > "${__canal_req[1]-/dev/null}" 2> "${__canal_req[2]-/dev/null}"
  __canal_status=$?
  [[ ${__canal_req[5]-} != save ]] || __canal_apply
  printf '%s %s\n' "$__canal_seq" "$__canal_status"
done
"""


def write_private(path: str, data: bytes) -> None:
    """Replace ``path`` with ``data`` (0600), never writing through a link a command put there."""
    with contextlib.suppress(FileNotFoundError):
        os.unlink(path)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]
    finally:
        os.close(fd)


def run_mode(command: str, env: dict[str, str], workdir: str, names: frozenset[str] | None,
             cwd_ok: bool) -> str:
    """How the loop runs ``command``: ``save`` (in a subshell that saves the state it leaves), ``""`` (in
    a subshell, nothing to save: ``stateless``) or ``inline`` (in the loop: ``inline``, with no variable
    or folder of its own, in a folder that still exists, once the loop's ``names`` are known)."""
    return mode(command, names if not env and not workdir and cwd_ok else None)


class Shell:
    """The long-lived bash of one session and its private request folder."""

    def __init__(self) -> None:
        self.dir = tempfile.mkdtemp(prefix=".canal-shell-")
        self.proc: subprocess.Popen[bytes] | None = None
        self._names: frozenset[str] | None = None

    def names(self) -> frozenset[str] | None:
        """The running loop's builtins, keywords and functions (it lists them once it has started),
        with bash 5.2's; None until the list is there."""
        if self._names is None and self.alive():
            try:
                with open(os.path.join(self.dir, "builtins"), "rb") as fh:
                    listed = fh.read().decode(errors="replace").split()
            except OSError:
                return None
            if listed:  # still being written: ask again at the next command
                self._names = BASH_NAMES | frozenset(listed)
        return self._names

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def ensure(self, env: dict[str, str], cwd: str) -> subprocess.Popen[bytes]:
        """The running shell, started with ``env`` and ``cwd`` if there is none."""
        if self.proc is not None and self.proc.poll() is None:
            return self.proc
        self.reap()
        self._names = None
        self.dir = self.dir if os.path.isdir(self.dir) else tempfile.mkdtemp(prefix=".canal-shell-")
        for name, text in (("loop", SCRIPT), ("bash", RUNNER)):  # written afresh: a command may have
            write_private(os.path.join(self.dir, name), text.encode())  # replaced them
        # ps shows "canal-shell ... bash /tmp/.canal-shell-x": short, and never taken for the agent's bash
        argv = ["canal-shell", "--noprofile", "--norc", "-c", '. "$1/loop"', "bash", self.dir]
        clean = {k: v for k, v in env.items() if k not in LOOP_UNSAFE and not k.startswith("BASH_FUNC_")}
        self.proc = subprocess.Popen(argv, executable="/bin/bash", cwd=cwd if os.path.isdir(cwd) else "/",
                                     env=clean, start_new_session=True, close_fds=True,
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        raise_oom_score(self.proc.pid)
        return self.proc

    def submit(self, fields: list[str]) -> str:
        """Write one request and wake the shell; returns the token its status line must carry."""
        self.prepare(fields)
        return self.wake()

    def prepare(self, fields: list[str]) -> None:
        """Write one request; the shell reads it only when woken."""
        write_private(os.path.join(self.dir, "req"),
                      b"\0".join(f.encode(errors="surrogateescape") for f in fields) + b"\0")

    def wake(self) -> str:
        """Let the shell run the request written last; returns the token its status line must carry."""
        token = os.urandom(8).hex()  # secrets.token_hex's own bytes (its import costs every start)
        assert self.proc is not None
        assert self.proc.stdin is not None
        os.write(self.proc.stdin.fileno(), f"{token}\n".encode())
        return token

    def take_state(self, *, adopt: bool = True) -> tuple[str, dict[str, str]] | None:
        """The working directory and exports the loop has after the last command, or None when it changed
        nothing. They are what the loop wrote after applying the command's state (``applied``): its own
        folder and variables, whatever the command's file said (a folder it could not enter, names bash
        would not export). Without ``adopt`` (a command run not to save its state: the loop applied
        nothing) files the command may have planted are only removed."""
        with contextlib.suppress(OSError):
            os.unlink(os.path.join(self.dir, "state"))
        path = os.path.join(self.dir, "applied")
        try:
            if not adopt:
                os.unlink(path)
                return None
            with open(path, "rb") as fh:
                raw = fh.read()
            os.unlink(path)
        except OSError:
            return None
        parts = raw.split(b"\0")
        if len(parts) < 3 or parts[-2:] != [b"=", b""]:
            return None
        items = [p.decode(errors="surrogateescape") for p in parts[1:-2]]
        env = dict(item.split("=", 1) for item in items if "=" in item)
        return parts[0].decode(errors="surrogateescape"), env

    def stopped(self) -> bool:
        stat = None if self.proc is None else proc_stat(self.proc.pid)
        return stat is not None and stat[0] in ("T", "t")

    def busy(self) -> bool:
        """True while the shell has input it has not read yet, or a child (the command's subshell)."""
        if self.proc is None or self.proc.stdin is None:
            return False
        unread = array.array("i", [0])
        with contextlib.suppress(OSError):
            fcntl.ioctl(self.proc.stdin.fileno(), termios.FIONREAD, unread)
        if unread[0]:
            return True
        pid = self.proc.pid
        try:
            with open(f"/proc/{pid}/task/{pid}/children", "rb") as fh:
                return bool(fh.read().strip())
        except OSError:
            return any((s := proc_stat(p)) is not None and s[1] == pid for p in live_pids())

    def reap(self) -> None:
        """Forget a dead (or swept) shell; the next command starts a fresh one."""
        if self.proc is None:
            return
        with contextlib.suppress(OSError):
            self.proc.kill()
        self.proc.wait()
        for stream in (self.proc.stdin, self.proc.stdout):
            if stream is not None:
                stream.close()
        self.proc = None


class ShellRun:
    """One command in the shell, as the pump's ``Child``: done when the shell reports its status."""

    def __init__(self, shell: Shell, token: str, held: list[int], *, saves: bool = True) -> None:
        self.shell = shell
        self.token = token
        self.saves = saves  # run to save its state (``save``): only then is a state file taken
        self.held = held  # our copies of the command's pipe ends: closed once it is done
        self.buf = b""
        self.status: int | None = None
        self.lost: str | None = None  # why the shell cannot go on: a key of the agent's SHELL_LOST
        self.idle_beats = 0
        proc = shell.proc
        assert proc is not None
        assert proc.stdout is not None
        self.fd = proc.stdout.fileno()

    def finished(self) -> bool:
        return self.status is not None or self.lost is not None

    def watch_fd(self) -> int | None:
        return self.fd

    def on_ready(self) -> bool:
        chunk = os.read(self.fd, 256)
        if not chunk:
            self.lost = "shell_died"
        self.buf += chunk
        if b"\n" in self.buf:
            line, _, self.buf = self.buf.partition(b"\n")
            token, _, status = line.decode(errors="replace").partition(" ")
            if token == self.token and status.isdigit():
                self.status = int(status)
            else:
                self.lost = "out_of_step"
        if self.finished():
            self.release()
            return False
        return True

    def release(self) -> None:
        for fd in self.held:
            with contextlib.suppress(OSError):
                os.close(fd)
        self.held = []

    def wait(self, timeout_s: float) -> None:
        if self.shell.proc is not None:
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.shell.proc.wait(timeout=timeout_s)

    def wedged(self) -> bool:
        """Stopped, or idle without having answered at two heartbeats in a row (its input was taken)."""
        if self.shell.stopped():
            self.lost = "wedged"
            return True
        self.idle_beats = 0 if self.shell.busy() else self.idle_beats + 1
        if self.idle_beats >= 2:
            self.lost = "stuck"
        return self.lost is not None
