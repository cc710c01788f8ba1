from __future__ import annotations

import stat
from pathlib import Path

from canal.host.files import Workspace, edit_file
from canal.host.files.errors import (
    AMBIGUOUS_MATCH,
    BINARY_FILE,
    EMPTY_OLD_STRING,
    FILE_CHANGED,
    FILE_TOO_LARGE,
    NO_CHANGE,
    STRING_NOT_FOUND,
)
from canal.host.files.fileio import read_file, replace_file
from canal.host.ports import Redactor
from tests.error_codes import raises_code


def test_edit_replaces_once_and_returns_exact_diff(ws: Workspace, ws_dir: Path) -> None:
    f = ws_dir / "app.py"
    f.write_text("import os\n\ndef main():\n    return 1\n")
    result = edit_file(ws, "app.py", "return 1", "return 2")
    assert f.read_text() == "import os\n\ndef main():\n    return 2\n"
    assert result.replacements == 1
    assert result.diff == ("--- a/app.py\n+++ b/app.py\n@@ -1,4 +1,4 @@\n import os\n \n def main():\n"
                           "-    return 1\n+    return 2\n")
    assert (result.added, result.removed) == (1, 1)


def test_edit_file_without_trailing_newline(ws: Workspace, ws_dir: Path) -> None:
    (ws_dir / "n.txt").write_text("alpha\nbeta")
    result = edit_file(ws, "n.txt", "beta", "gamma")
    assert (ws_dir / "n.txt").read_text() == "alpha\ngamma"
    assert result.diff == ("--- a/n.txt\n+++ b/n.txt\n@@ -1,2 +1,2 @@\n alpha\n-beta\n"
                           "\\ No newline at end of file\n+gamma\n\\ No newline at end of file\n")


def test_edit_that_removes_the_trailing_newline(ws: Workspace, ws_dir: Path) -> None:
    (ws_dir / "n.txt").write_text("alpha\nbeta\n")
    result = edit_file(ws, "n.txt", "beta\n", "beta")
    assert result.diff == ("--- a/n.txt\n+++ b/n.txt\n@@ -1,2 +1,2 @@\n alpha\n-beta\n+beta\n"
                           "\\ No newline at end of file\n")


def test_secret_in_edited_line_is_redacted_in_diff(ws: Workspace, ws_dir: Path, redactor: Redactor) -> None:
    secret = "sk_live_4eC39HqLyjWDarjtT1zdp7dc"
    (ws_dir / "cfg.py").write_text(f"KEY = '{secret}'\nDEBUG = False\n")
    result = edit_file(ws, "cfg.py", "DEBUG = False", "DEBUG = True", redactor=redactor)
    assert secret not in result.diff
    assert " KEY = '[REDACTED_SECRET:stripe:1]'\n" in result.diff
    result = edit_file(ws, "cfg.py", secret, secret + "X", redactor=redactor)
    assert secret not in result.diff
    assert "-KEY = '[REDACTED_SECRET:stripe:1]'\n" in result.diff
    assert (ws_dir / "cfg.py").read_text().startswith(f"KEY = '{secret}X'")


def test_not_found_lists_closest_lines(ws: Workspace, ws_dir: Path) -> None:
    (ws_dir / "a.py").write_text("def foo():\n    value = compute(1)\n    return value\n")
    with raises_code(STRING_NOT_FOUND) as err:
        edit_file(ws, "a.py", "value = compute(2)", "x")
    assert err.value.details["closest"][0] == {"line": 2, "text": "    value = compute(1)"}
    assert "     2\t    value = compute(1)" in err.value.message
    assert [(a.kind, a.args["path"]) for a in err.value.next] == [("view", "a.py")]


def test_not_found_redacts_the_closest_lines(ws: Workspace, ws_dir: Path, redactor: Redactor) -> None:
    (ws_dir / "a.py").write_text("token = 'sk_live_4eC39HqLyjWDarjtT1zdp7dc'\n")
    with raises_code(STRING_NOT_FOUND) as err:
        edit_file(ws, "a.py", "token = 'sk_live_4eC39HqLyjWDarjtT1zdp7dX'", "x", redactor=redactor)
    assert "sk_live_" not in err.value.message
    assert "[REDACTED_SECRET:stripe:1]" in err.value.message


def test_multiple_occurrences_need_all(ws: Workspace, ws_dir: Path) -> None:
    f = ws_dir / "m.txt"
    f.write_text("x = 1\ny = 2\nx = 1\n\nx = 1\n")
    with raises_code(AMBIGUOUS_MATCH) as err:
        edit_file(ws, "m.txt", "x = 1", "x = 9")
    assert err.value.details == {"path": "m.txt", "count": 3, "lines": [1, 3, 5]}
    assert "3 times" in err.value.message
    assert [(a.kind, a.args.get("all")) for a in err.value.next] == [("edit", True)]
    assert f.read_text() == "x = 1\ny = 2\nx = 1\n\nx = 1\n"
    result = edit_file(ws, "m.txt", "x = 1", "x = 9", replace_all=True)
    assert result.replacements == 3
    assert f.read_text() == "x = 9\ny = 2\nx = 9\n\nx = 9\n"


def test_same_text_and_empty_text_are_refused(ws: Workspace, ws_dir: Path) -> None:
    (ws_dir / "a").write_text("abc")
    with raises_code(NO_CHANGE):
        edit_file(ws, "a", "b", "b")
    with raises_code(EMPTY_OLD_STRING):
        edit_file(ws, "a", "", "b")


def test_binary_and_huge_files_are_refused(ws: Workspace, ws_dir: Path) -> None:
    (ws_dir / "b.bin").write_bytes(b"abc\x00def")
    with raises_code(BINARY_FILE):
        edit_file(ws, "b.bin", "abc", "xyz")
    (ws_dir / "latin1.txt").write_bytes("caf\xe9".encode("latin-1"))
    with raises_code(BINARY_FILE):
        edit_file(ws, "latin1.txt", "caf", "tea")
    (ws_dir / "big.txt").write_text("a" * 2000)
    with raises_code(FILE_TOO_LARGE) as err:
        edit_file(ws, "big.txt", "a", "b", max_bytes=1000)
    assert err.value.details == {"path": "big.txt", "size": 2000, "limit": 1000}


def test_edit_keeps_mode_and_crlf(ws: Workspace, ws_dir: Path) -> None:
    f = ws_dir / "run.sh"
    f.write_bytes(b"#!/bin/sh\r\necho hi\r\n")
    f.chmod(0o750)
    edit_file(ws, "run.sh", "hi", "there")
    assert f.read_bytes() == b"#!/bin/sh\r\necho there\r\n"
    assert stat.S_IMODE(f.stat().st_mode) == 0o750
    assert [p.name for p in ws_dir.iterdir()] == ["run.sh"]


def test_change_since_read_is_detected(ws: Workspace, ws_dir: Path) -> None:
    f = ws_dir / "a.txt"
    f.write_text("one\n")
    loc = ws.locate("a.txt", follow=True)
    snap = read_file(loc)
    f.write_text("someone else\n")
    with raises_code(FILE_CHANGED):
        replace_file(loc, b"mine\n", mode=snap.mode, expect_sha256=snap.sha256)
    assert f.read_text() == "someone else\n"
    with raises_code(FILE_CHANGED):
        edit_file(ws, "a.txt", "someone", "no one", expect_sha256=snap.sha256)
    assert f.read_text() == "someone else\n"


def test_edit_follows_a_symlink_inside_the_workspace(ws: Workspace, ws_dir: Path) -> None:
    (ws_dir / "real.txt").write_text("v1\n")
    (ws_dir / "alias.txt").symlink_to("real.txt")
    result = edit_file(ws, "alias.txt", "v1", "v2")
    assert result.path == "real.txt"
    assert (ws_dir / "real.txt").read_text() == "v2\n"
    assert (ws_dir / "alias.txt").is_symlink()
