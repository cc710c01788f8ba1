from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from canal.host.files.diff import cap, file_diff, split_lines, unified_diff


def _gnu(tmp_path: Path, old: str, new: str) -> str:
    a, b = tmp_path / "a", tmp_path / "b"
    a.write_bytes(old.encode())
    b.write_bytes(new.encode())
    out = subprocess.run(["diff", "-u", "--label", "a/f", "--label", "b/f", str(a), str(b)],
                         capture_output=True, check=False).stdout.decode()
    return out


def test_new_text_lacks_trailing_newline() -> None:
    assert unified_diff("a\nb\n", "a\nc", old_label="a/f", new_label="b/f") == (
        "--- a/f\n+++ b/f\n@@ -1,2 +1,2 @@\n a\n-b\n+c\n\\ No newline at end of file\n")


def test_old_text_lacks_trailing_newline() -> None:
    assert unified_diff("a\nb", "a\nb\n", old_label="a/f", new_label="b/f") == (
        "--- a/f\n+++ b/f\n@@ -1,2 +1,2 @@\n a\n-b\n\\ No newline at end of file\n+b\n")


def test_both_lack_trailing_newline() -> None:
    assert unified_diff("x\ny", "x\nz", old_label="a/f", new_label="b/f") == (
        "--- a/f\n+++ b/f\n@@ -1,2 +1,2 @@\n x\n-y\n\\ No newline at end of file\n"
        "+z\n\\ No newline at end of file\n")


def test_unchanged_last_line_without_newline_is_context_with_marker() -> None:
    old = "1\n2\n3\n4\nend"
    new = "1\n2\nthree\n4\nend"
    assert unified_diff(old, new, old_label="a/f", new_label="b/f") == (
        "--- a/f\n+++ b/f\n@@ -1,5 +1,5 @@\n 1\n 2\n-3\n+three\n 4\n end\n\\ No newline at end of file\n")


def test_with_trailing_newline_three_lines_of_context() -> None:
    old = "".join(f"{i}\n" for i in range(1, 11))
    new = old.replace("5\n", "five\n")
    assert unified_diff(old, new, old_label="a/f", new_label="b/f") == (
        "--- a/f\n+++ b/f\n@@ -2,7 +2,7 @@\n 2\n 3\n 4\n-5\n+five\n 6\n 7\n 8\n")


CASES = [
    ("a\nb\n", "a\nc"),
    ("a\nb", "a\nb\n"),
    ("x\ny", "x\nz"),
    ("1\n2\n3\n4\nend", "1\n2\nthree\n4\nend"),
    ("", "new\n"),
    ("", "new"),
    ("only", ""),
    ("a\r\nb\r\n", "a\r\nB\r\n"),
    ("p\fq\n", "p\fr\n"),
    ("".join(f"{i}\n" for i in range(40)), "".join(f"{i}\n" for i in range(40) if i not in (3, 30)) + "x"),
]


@pytest.mark.parametrize(("old", "new"), CASES)
def test_matches_gnu_diff(tmp_path: Path, old: str, new: str) -> None:
    assert unified_diff(old, new, old_label="a/f", new_label="b/f") == _gnu(tmp_path, old, new)


@pytest.mark.parametrize(("old", "new"), CASES)
def test_patch_applies_back(tmp_path: Path, old: str, new: str) -> None:
    target = tmp_path / "f"
    target.write_bytes(old.encode())
    patch = unified_diff(old, new, old_label="a/f", new_label="b/f")
    subprocess.run(["patch", "-s", "-p1", "-d", str(tmp_path)], input=patch.encode(), check=True)
    assert target.read_bytes() == new.encode()


def test_split_lines_only_on_newline() -> None:
    assert split_lines("a\rb\u2028c\n\nd") == ["a\rb\u2028c\n", "\n", "d"]
    assert split_lines("") == []


def test_file_diff_counts_and_labels_a_new_file() -> None:
    diff = file_diff("", "one\ntwo\n", path="src/x.py", created=True)
    assert diff.text.startswith("--- /dev/null\n+++ b/src/x.py\n@@ -0,0 +1,2 @@\n")
    assert (diff.added, diff.removed, diff.truncated) == (2, 0, False)


def test_cap_truncates_by_lines_and_bytes() -> None:
    text = "".join(f"+line {i}\n" for i in range(100))
    by_lines = cap(text, added=100, removed=0, max_lines=10, max_bytes=10_000)
    assert by_lines.truncated
    assert by_lines.text.endswith("[diff truncated: 90 more lines not shown]\n")
    assert by_lines.text.count("+line") == 10
    by_bytes = cap(text, added=100, removed=0, max_lines=1000, max_bytes=30)
    assert by_bytes.text.count("+line") == 3
