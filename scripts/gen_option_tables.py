"""Regenerate canal/policy/shell/data/options.json from the sandbox image's own --help texts.

getopt_long accepts any unambiguous prefix of a long option (`rm --rec`), and git's parse-options does
the same (`git reset --har`), so the policy needs each program's full list of long options, and which
options take a value, to resolve what a command really asks for. The lists come from the programs that
actually run in the sandbox:

    python scripts/gen_option_tables.py [IMAGE] > canal/policy/shell/data/options.json

Programs the image lacks keep their hand-written entry in programs.yaml. Nothing here runs at policy time.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys

IMAGE = sys.argv[1] if len(sys.argv) > 1 else "canal/sandbox:0.1.0"
PROGRAMS = [
    "rm", "rmdir", "cp", "mv", "ln", "install", "chmod", "chown", "chgrp", "shred", "truncate", "touch",
    "mkdir", "dd", "sort", "sed", "tee", "ls", "cat", "head", "tail", "wc", "diff", "stat", "du", "df",
    "cut", "tr", "nl", "comm", "cmp", "md5sum", "sha1sum", "sha256sum", "sha512sum", "grep", "uniq",
    "date", "basename", "dirname", "realpath", "readlink", "id", "uname", "column", "find", "xargs",
    "env", "timeout", "nice", "nohup", "stdbuf", "chroot", "setsid", "flock", "taskset", "nsenter",
    "chrt", "unshare", "runuser", "setpriv", "script", "watch", "ionice", "su", "tar", "gzip", "split",
    "csplit", "mktemp", "tree", "file", "rg", "jq", "wipefs", "blkdiscard", "sfdisk", "fdisk", "mkfs",
    "mke2fs", "curl", "wget", "patch", "rsync", "zip", "unzip", "prlimit", "setarch", "numactl",
]
GIT_SUBCOMMANDS = [
    "push", "reset", "clean", "branch", "checkout", "switch", "restore", "rebase", "commit", "stash",
    "config", "log", "show", "diff", "status", "fetch", "pull", "clone", "merge", "tag", "rm", "mv",
    "add", "cherry-pick", "revert", "submodule", "worktree", "gc", "prune", "reflog", "update-ref",
    "filter-branch", "bisect", "grep", "difftool", "mergetool", "archive", "ls-remote", "send-email",
    "apply", "am", "blame", "describe", "remote",
]
_TOKEN = re.compile(r"(?<![\w-])(--\[no-\]|--|-)([A-Za-z0-9][\w-]*)(\[=|\[|=|\s<|\s[A-Za-z][\w-]*(?=,|$))?")


_LOOP = ('for p in "$@"; do printf "\\n@@@ %s\\n" "$p"; '
         'case $p in git:*) git "${p#git:}" -h;; *) "$p" --help;; esac 2>&1; done')


def _helps(names: list[str]) -> dict[str, str]:
    """Every program's help text, from one container (names are passed as arguments, never spliced)."""
    argv = ["docker", "run", "--rm", "--network", "none", IMAGE, "sh", "-c", _LOOP, "sh", *names]
    proc = subprocess.run(argv,
                          capture_output=True, text=True, timeout=300, check=False)
    chunks = proc.stdout.split("\n@@@ ")[1:]
    return {chunk.split("\n", 1)[0]: chunk.partition("\n")[2] for chunk in chunks}


def _long_kind(arg: str) -> str:
    if arg in ("[=", "["):
        return "?"
    return "=" if arg else ""


def parse_help(text: str) -> dict[str, object] | None:
    """Long options (name, name= for a required value, name? for an optional one) and value-taking shorts.

    ``-c, --check, --check=quiet``: a long spelled both bare and with a value takes an optional value,
    and its short form is a flag. ``-i[SUFFIX]``: a short with an optional glued value.
    """
    longs: dict[str, str] = {}
    short_values: set[str] = set()
    short_optional: set[str] = set()
    for line in text.splitlines():
        head = line.strip()
        if not head.startswith("-"):
            continue
        part = re.split(r"\s{2,}", head, maxsplit=1)[0]  # the option column, before the description
        shorts: list[str] = []
        kinds: list[str] = []
        for dashes, name, arg in _TOKEN.findall(part):
            if dashes == "-":
                if len(name) == 1:
                    shorts.append(name)
                    if arg == "[":
                        short_optional.add(name)
                    elif arg.strip():
                        short_values.add(name)
                continue
            kind = _long_kind(arg)
            kinds.append(kind)
            if (name in longs and longs[name] != kind) or (kind == "=" and f"--{name}," in part):
                kind = "?"
            longs[name] = kind
            if dashes == "--[no-]":
                longs["no-" + name] = ""
        if kinds and kinds[0] == "=" and "" not in kinds:
            short_values.update(s for s in shorts if s not in short_optional)
    if not longs:
        return None
    return {"short_values": "".join(sorted(short_values)), "short_optional": "".join(sorted(short_optional)),
            "long": sorted(name + kind for name, kind in longs.items())}


def main() -> None:
    helps = _helps(PROGRAMS + [f"git:{sub}" for sub in GIT_SUBCOMMANDS])
    table: dict[str, object] = {}
    for program in PROGRAMS:
        found = parse_help(helps.get(program, ""))
        if found is not None:
            table[program] = found
    git: dict[str, object] = {}
    for sub in GIT_SUBCOMMANDS:
        found = parse_help(helps.get(f"git:{sub}", ""))
        if found is not None:
            git[sub] = found
    table["git"] = {"subcommands": git}
    json.dump({"image": IMAGE, "programs": table}, sys.stdout, indent=1, sort_keys=True)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
