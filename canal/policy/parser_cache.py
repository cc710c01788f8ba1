"""cel-python's Lark parser, loaded from a cache instead of built at every process start.

Building the LALR tables of CEL's grammar costs about 0.3 s at each start of a process that compiles
rules (``canal policy check`` in-process, the server's first call). Lark can save what it built and load
it again in about 20 ms (``cache=`` a path; the file holds a digest of the grammar and the options, and
is rebuilt when either changes). The file is a pickle, so it lives only in a folder of the user's that
is closed to others (``CANAL_CACHE_DIR``, else the user's cache folder); anywhere else Canal builds the
parser in memory as before, never reading a file another user could have written.
"""

from __future__ import annotations

import os
import re
import stat
from pathlib import Path

import celpy
import lark
import platformdirs
from celpy.celparser import CELParser


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
