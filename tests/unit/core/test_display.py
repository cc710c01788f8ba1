"""canal.core.display: hidden characters written visibly; paths quoted as git quotes them."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from canal.core.display import git_quoted, hidden_in, visible
from tests.hidden_chars import HIDDEN, escaped


@pytest.mark.parametrize("char", HIDDEN, ids=[escaped(c) for c in HIDDEN])
def test_every_hidden_character_is_written_as_its_escape(char: str) -> None:
    assert visible(f"a{char}b") == f"a{escaped(char)}b"
    assert hidden_in(f"a{char}b{char}") == [escaped(char)]


def test_printable_text_is_shown_exactly_as_typed() -> None:
    text = 'rm -rf "build dir"/ \\n café ☃ 日本 𝄞 | sed s/\\x1b//'
    assert visible(text) == text
    assert hidden_in(text) == []


def test_the_approval_spoof_shows_the_carriage_return() -> None:
    spoof = "rm -rf /workspace/src /tmp/zz # \r" + " " * 40 + "$ ls -la /tmp/zz"
    assert visible(spoof).startswith("rm -rf /workspace/src /tmp/zz # \\r ")


def test_bytes_that_are_not_utf8_are_shown_as_surrogate_escapes() -> None:
    name = b"bad\xff".decode("utf-8", "surrogateescape")
    assert visible(name) == "bad\\udcff"


def test_plain_paths_are_not_quoted() -> None:
    assert git_quoted("a/src/main.py") == "a/src/main.py"
    assert git_quoted("a/with space") == "a/with space"


def test_paths_are_quoted_with_c_escapes_and_octal_bytes() -> None:
    assert git_quoted('a/ok\n  x"\\\t') == '"a/ok\\n  x\\"\\\\\\t"'
    assert git_quoted("a/\x1b[2K\u202e") == '"a/\\033[2K\\342\\200\\256"'
    assert git_quoted("a/" + b"\xff".decode("utf-8", "surrogateescape")) == '"a/\\377"'


@pytest.mark.parametrize("name", ["ok\n  deleted nothing (all good)\n", "tab\there", 'q"uo\\te',
                                  "esc\x1b[31mred", "caf\u00e9", "bidi\u202eevil", "cr\r"])
def test_git_quotes_names_the_same_way(tmp_path: Path, name: str) -> None:
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    (tmp_path / name).write_text("x\n")
    subprocess.run(["git", "-C", str(tmp_path), "add", "-A"], check=True)
    shown = subprocess.run(["git", "-C", str(tmp_path), "-c", "core.quotePath=true", "diff", "--cached",
                            "--name-only"], check=True, capture_output=True).stdout.decode()
    assert shown == git_quoted(name) + "\n"
