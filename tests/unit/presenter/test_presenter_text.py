from __future__ import annotations

import pytest
from presenter_helpers import Present

from canal.presenter.text import clean_line, clean_text, clip_utf8, decode


def test_mixed_valid_and_invalid_utf8_shows_replacement_characters(show: Present) -> None:
    p = show(b"caf\xc3\xa9 \xff\xfe ok\nna\xefve \xe2\x82 euro \xe2\x82\xac\n")
    assert not p.binary
    assert p.output == "café \ufffd\ufffd ok\nna\ufffdve \ufffd euro €"


def test_ansi_colours_and_cursor_codes_are_stripped(show: Present) -> None:
    raw = (b"\x1b[1;31mERROR\x1b[0m build failed\n"
           b"\x1b[2K\x1b[1G\x1b[?25lspinner\x1b[?25h\n"
           b"\x1b]8;;https://x.example\x1b\\link\x1b]8;;\x1b\\ \x1b]0;title\x07done\n")
    assert show(raw).output == "ERROR build failed\nspinner\nlink done"


def test_crlf_line_ends_are_one_line_end(show: Present) -> None:
    p = show(b"one\r\ntwo\r\n")
    assert p.output == "one\ntwo"
    assert p.total_lines == 2


def test_carriage_return_progress_bar_collapses_to_its_last_state(show: Present) -> None:
    bar = b"".join(b"\r[%-10s] %3d%%" % (b"#" * (i // 10), i) for i in range(0, 101, 5))
    p = show(b"start\n" + bar + b"\r\ndone\n")
    assert p.output == "start\n[##########] 100%\ndone"


def test_progress_bar_in_one_huge_line_shows_its_last_state(show: Present) -> None:
    bar = b"".join(b"\rdownloading %7d/1000000" % i for i in range(0, 1_000_001, 10))  # 2.3 MB
    p = show(bar + b"\n")
    assert p.truncated
    assert p.output.startswith("downloading 1000000/1000000 [... line 1: ")
    assert "bytes of progress updates, last state shown ...]" in p.output


@pytest.mark.parametrize(("raw", "shown"), [
    ("plain", "plain"),
    ("a\tb", "a\tb"),
    ("bell\x07 back\x08space\x00nul", "bell backspacenul"),
    ("cut escape \x1b[3", "cut escape "),
    ("10%\r\r", "10%"),
    ("\r", ""),
    ("c1 csi \x9b31mred", "c1 csi red"),
])
def test_clean_line(raw: str, shown: str) -> None:
    assert clean_line(raw) == shown


def test_clean_text_drops_one_final_newline() -> None:
    assert clean_text("a\n\n") == "a\n"
    assert clean_text(decode(b"")) == ""


def test_clip_utf8_never_cuts_a_character() -> None:
    assert clip_utf8("a€b", 1) == "a"
    assert clip_utf8("a€b", 2) == "a"
    assert clip_utf8("a€b", 3) == "a"
    assert clip_utf8("a€b", 4) == "a€"
    assert clip_utf8("a€b", 10) == "a€b"
