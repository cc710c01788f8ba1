"""cel-python's Lark parser, loaded from a cache instead of built at every process start.

Building the LALR tables of CEL's grammar costs about 0.3 s at each start of a process that compiles
rules (``canal policy check`` in-process, the server's first call). Lark can save what it built and load
it again in about 20 ms (``cache=`` a path; the file holds a digest of the grammar and the options, and
is rebuilt when either changes). The file is a pickle, so it lives only in a folder of the user's that
is closed to others (``CANAL_CACHE_DIR``, else the user's cache folder); anywhere else Canal builds the
parser in memory as before, never reading a file another user could have written.

The same folder keeps the marks of the policies whose inline examples passed (``VerifiedMarks``).
Running every rule's examples is most of a policy's load (about 0.3 s for the standard profile: each
example is parsed and decided), and a new project's first command paid it although the same rules had
passed in the project next door. A policy that passed leaves a mark named by the digest of everything
the examples exercise (``loader.examples_digest``: each file's rules and examples as parsed, the
profile chain, fork or not, the engine's own code, data and libraries); a later load of the same policy
finds the mark and skips only the examples: its rules are still compiled from the text at hand. A mark
is trusted only when it holds the HMAC of its name under a key of the user's key store
(``canal.host.keys``, given by the caller): a file planted or copied there without that key, truncated,
or made under another key counts as never written, and the examples run again. Nothing else is read
from it.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import re
import stat
from pathlib import Path

import celpy
import lark
import platformdirs
from celpy.celparser import CELParser

from canal.core.fsutil import atomic_write


def cache_dir() -> Path | None:
    """The private cache folder (created 0700), or None when it cannot be trusted or made."""
    override = os.environ.get("CANAL_CACHE_DIR")
    folder = Path(override) if override else Path(platformdirs.user_cache_dir("canal", appauthor=False))
    try:
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        info = os.lstat(folder)
    except OSError:
        return None
    mine = info.st_uid == os.geteuid() and stat.S_ISDIR(info.st_mode)
    return folder if mine and not stat.S_IMODE(info.st_mode) & 0o077 else None


def install_cached_parser() -> None:
    """Give cel-python its parser from the cache (building and saving it the first time)."""
    if CELParser.CEL_PARSER is not None:
        return
    folder = cache_dir()
    if folder is None:
        return  # cel-python builds it in memory
    grammar = (Path(celpy.__file__).parent / "cel.lark").read_text()
    CELParser.CEL_PARSER = lark.Lark(
        grammar, parser="lalr", start="expr", debug=True, g_regex_flags=re.M,
        lexer_callbacks={"IDENT": CELParser.ambiguous_literals}, propagate_positions=True,
        maybe_placeholders=False, priority="invert", tree_class=lark.Tree,
        cache=str(folder / f"cel-parser-lark{lark.__version__}.cache"))


_NAME = re.compile(r"^[0-9a-f]{64}$")
MAX_MARK = 128  # a mark is 64 hex digits: anything longer is not one


class VerifiedMarks:
    """Marks of policies whose examples passed, one file per policy digest, each an HMAC of its name."""

    def __init__(self, folder: Path, key: bytes) -> None:
        if len(key) < 16:
            msg = "the key of the verified policies must be at least 16 bytes"
            raise ValueError(msg)
        self.folder = folder
        self._key = key

    def _mac(self, name: str) -> bytes:
        message = b"policy-examples-passed\0" + name.encode()
        return hmac.new(self._key, message, hashlib.sha256).hexdigest().encode()

    def passed(self, name: str) -> bool:
        """True only when the mark of ``name`` is there and carries this key's HMAC of it."""
        if not _NAME.match(name):
            return False
        try:
            fd = os.open(self.folder / name, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
        except OSError:
            return False
        try:
            held = os.read(fd, MAX_MARK + 1)
        except OSError:
            return False
        finally:
            os.close(fd)
        return hmac.compare_digest(held, self._mac(name))

    def remember(self, name: str) -> None:
        """Leave the mark (0600, in a 0700 folder, written whole); a failure only costs the next load."""
        if not _NAME.match(name):
            msg = f"not a policy digest: {name!r}"
            raise ValueError(msg)
        try:
            atomic_write(self.folder / name, self._mac(name), durable=False)
        except OSError:
            return
