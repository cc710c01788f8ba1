"""Code-execution markers: inline code given to interpreters, code fed to a shell or interpreter on
stdin, and commands embedded in nominally read-only tools (awk ``system``, jq ``system``)."""

from __future__ import annotations

import re

from canal.policy.shell.model import Segment
from canal.policy.shell.unwrap import SHELLS, basename

_PYTHON = re.compile(r"^(python|pypy)[0-9.]*$")
_INLINE_SHORT = {"perl": "eE", "ruby": "e", "php": "r", "lua": "e", "Rscript": "e", "osascript": "e",
                 "node": "ep", "nodejs": "ep", "bun": "e", "tclsh": "", "pwsh": "c", "powershell": "c"}
_INLINE_LONG = {"--eval", "--print", "-Command", "-EncodedCommand", "-command"}
_AWK = frozenset({"awk", "gawk", "mawk", "nawk", "busybox-awk"})
_JQ = frozenset({"jq", "gojq", "yq", "jaq"})
_AWK_EXEC = re.compile(r"system\s*\(|\|\s*&?\s*(\"|[A-Za-z_])|\"\s*\|\s*getline")
_STDIN_INTERPRETERS = frozenset({"perl", "ruby", "php", "node", "nodejs", "lua", "bun", "deno"})


def _inline(program: str, argv: tuple[str, ...]) -> bool:
    if _PYTHON.match(program):
        return _python_inline(argv)
    if program == "deno" and len(argv) > 1 and argv[1] == "eval":
        return True
    letters = _INLINE_SHORT.get(program)
    if letters is None:
        return False
    return any(a in _INLINE_LONG or (a.startswith("-") and not a.startswith("--") and letters
                                     and any(ch in letters for ch in a[1:])) for a in argv[1:])


def _python_inline(argv: tuple[str, ...]) -> bool:
    for arg in argv[1:]:
        if not arg.startswith("-") or arg == "-":
            return False
        if arg.startswith("--"):
            continue
        for ch in arg[1:]:
            if ch == "c":
                return True
            if ch == "m":
                return False
            if ch in "WX":
                break
    return False


def _positionals(argv: tuple[str, ...]) -> list[str]:
    return [a for a in argv[1:] if not a.startswith("-")]


def _stdin_fed(seg: Segment) -> bool:
    """Code arrives on stdin from somewhere the command does not show: a pipe, or a here-document or
    here-string with expansions (what they expand to is known only at run time)."""
    fed = any(r.mode in ("heredoc", "herestring") and not r.literal for r in seg.redirects)
    return seg.stdin_piped or fed


def _literal_fed(seg: Segment) -> bool:
    """The code is the literal body of a here-document or here-string: written out in the command, as
    visible as ``python3 -c '...'`` (``python3 <<'EOF' ... EOF``)."""
    return any(r.mode in ("heredoc", "herestring") and r.literal for r in seg.redirects)


def code_kind(seg: Segment) -> str:
    """"" | inline | stdin | embedded for one segment (shell stdin scripts are handled by the parser)."""
    if not seg.words or not seg.words[0].literal:
        return ""
    program = basename(seg.words[0])
    argv = seg.argv
    if program in SHELLS and any(w.substitution for w in seg.words[1:]):
        return "stdin"  # bash <(curl ...)
    if _inline(program, argv):
        return "inline"
    if program in _AWK and any(_AWK_EXEC.search(a) for a in _positionals(argv)[:1]):
        return "embedded"
    if program in _JQ and any("system" in a for a in argv[1:]):
        return "embedded"
    no_script = not _positionals(argv) or "-" in argv[1:]
    if (_PYTHON.match(program) or program in _STDIN_INTERPRETERS) and no_script:
        if _stdin_fed(seg):
            return "stdin"
        if _literal_fed(seg):
            return "inline"
    return ""
