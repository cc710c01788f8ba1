"""git configuration keys that make git run code, and the files that hold such configuration.

git runs commands named in its configuration (pagers, editors, hooks, filters, ``!`` aliases...). A
``git -c`` override, a ``git config`` write, or any write into ``.git/config``, ``.git/hooks/`` or
``.gitattributes`` turns later "read-only" git into code execution, so the policy treats them as the
code execution they are.
"""

from __future__ import annotations

import re

# kind: shell (the value is a shell command), alias (a shell command after "!"), helper (a command after
# "!", else a program name), other (a program, a hook folder, an included file: code the parser cannot read)
_KEYS: tuple[tuple[str, re.Pattern[str]], ...] = tuple((kind, re.compile(pattern)) for kind, pattern in (
    ("alias", r"^alias\..+$"),
    ("helper", r"^credential(\..+)?\.helper$"),
    ("shell", r"^core\.(pager|editor|sshcommand|fsmonitor|askpass|alternaterefscommand)$"),
    ("shell", r"^(sequence\.editor|diff\.external|interactive\.difffilter|imap\.tunnel|web\.browser)$"),
    ("shell", r"^pager\..+$"),
    ("shell", r"^(diff|merge|filter|difftool|mergetool|browser|man)\..+\."
              r"(textconv|command|driver|clean|smudge|process|cmd)$"),
    ("shell", r"^submodule\..+\.update$"),
    ("other", r"^core\.(hookspath|gitproxy|worktree)$"),
    ("other", r"^(gpg(\..+)?\.program|uploadpack\.packobjectshook|sendemail\.smtpserver)$"),
    ("other", r"^(include\.path|includeif\..+\.path)$"),
    ("other", r"^(difftool|mergetool|browser|man)\..+\.path$"),
    ("other", r"^remote\..+\.(uploadpack|receivepack|vcs|proxy)$"),
    ("other", r"^(protocol(\..+)?\.allow|url\..+\.(insteadof|pushinsteadof)|trace2\..+)$"),
))

# Paths whose content git executes or reads configuration from (matched on the normalised path).
CODE_CONFIG_PATH = re.compile(
    r"(^|/)\.git(/(config(\.worktree)?|hooks(/.*)?|info/attributes|commondir|modules(/.*)?|worktrees(/.*)?))?$"
    r"|(^|/)\.git(attributes|modules|config)$|(^|/)\.config/git(/.*)?$")


def config_key_kind(key: str) -> str:
    """"" for a key that runs nothing, else alias | helper | shell | other."""
    section, _, rest = key.partition(".")
    if not rest:
        return ""
    head, _, var = rest.rpartition(".")
    # section and variable names are case-insensitive; subsections are not, but lowering them is harmless
    name = f"{section.lower()}.{head + '.' if head else ''}{var.lower()}".lower()
    for kind, pattern in _KEYS:
        if pattern.match(name):
            return kind
    return ""
