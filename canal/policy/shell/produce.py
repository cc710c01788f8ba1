"""Text the parser can see a command print, and code bash would evaluate inside strings.

``literal_output``: what ``echo``/``printf``/``cat <<EOF`` write when every word is literal, so that
``echo 'rm -rf /' | sh`` and ``source <(echo ...)`` are decided as the script they feed.

``hidden_code``: bash evaluates array subscripts as arithmetic, and arithmetic expands ``$(...)``, in
places that look like data (``[[ 'a[$(cmd)]' -eq 0 ]]``, ``test -v``, ``printf -v``, ``read``,
``unset``...); startup variables (``BASH_ENV``, ``ENV``, prompts) are expanded by the shell that reads
them. ``expansion_probe`` turns such a string into a script whose parse holds exactly those expansions:
an unquoted here-document body is expanded the same way (parameters, substitutions, arithmetic) and
treats quotes as text.
"""

from __future__ import annotations

import re
import secrets

from canal.policy.shell.model import Segment
from canal.policy.shell.words import decode_ansi_c

_SUBSCRIPT_CODE = re.compile(r"[A-Za-z_]\w*\[[^\]]*?(\$\(|`|\$\{)")
_EXPANSION = re.compile(r"\$\(|`|\$\{|\$\[")
_BACKQUOTE = re.compile(r"`([^`]*)`")
_PRINTF_SAFE = re.compile(r"^[^%]*$|^%s(\\n)?$")


def literal_output(seg: Segment) -> str | None:
    """The exact text a literal echo/printf/cat-of-a-heredoc writes; None when not visible."""
    if not seg.words or not all(w.literal for w in seg.words) or seg.context[-1:] == ("function",):
        return None
    argv = seg.argv
    program = argv[0]
    if program == "echo":
        args = list(argv[1:])
        newline, escapes = True, False
        while args and re.fullmatch(r"-[neE]+", args[0]):
            newline = newline and "n" not in args[0]
            escapes = ("e" in args[0]) or (escapes and "E" not in args[0])
            args.pop(0)
        text = " ".join(args)
        return (decode_ansi_c(text) if escapes else text) + ("\n" if newline else "")
    if program == "printf" and len(argv) >= 2 and _PRINTF_SAFE.match(argv[1]) and argv[1] != "-v":
        fmt = argv[1]
        if "%s" in fmt:
            end = "\n" if fmt.endswith("\\n") else ""
            return "".join(a + end for a in argv[2:])
        return decode_ansi_c(fmt) if len(argv) == 2 else None
    if program == "cat" and len(argv) == 1:
        feeds = [r for r in seg.redirects if r.mode in ("heredoc", "herestring")]
        if len(feeds) == 1 and feeds[0].literal:
            body = feeds[0].target
            return body if feeds[0].mode == "heredoc" else body + "\n"
    return None


def hidden_code(text: str) -> bool:
    """True when ``text`` holds an array subscript with a substitution in it (run by arithmetic)."""
    return "[" in text and _SUBSCRIPT_CODE.search(text) is not None


def expands(text: str) -> bool:
    return _EXPANSION.search(text) is not None


def expansion_probe(text: str) -> str:
    """A script holding every command substitution bash may perform on ``text`` as a string.

    Arithmetic and parameter expansions are opened up so that tree-sitter (which cannot parse them in a
    here-document with subscripts inside) sees the substitutions they hold: ``${`` and ``$[`` lose their
    ``$``, and ``$((`` becomes ``$( (`` (and ``))`` ``) )``), since bash itself runs ``$((cmd) )`` as a
    command substitution.
    """
    # tree-sitter reads $( ) in here-document bodies, not backquotes
    text = _BACKQUOTE.sub(lambda m: "$(" + m.group(1) + ")", text)
    text = text.replace("$((", "$( (").replace("))", ") )").replace("${", "{").replace("$[", "[")
    delim = "CANAL_PROBE"
    while delim in text:
        delim = f"CANAL_PROBE_{secrets.token_hex(4)}"
    return f": <<{delim}\n{text}\n{delim}\n"
