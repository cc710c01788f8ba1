"""Live output: whole lines, cleaned and redacted, a key block held until it ends, binary stops it."""

from __future__ import annotations

import io

from canal.cli.live import LiveOutput


def redact(text: str) -> str:
    return text.replace("SECRETKEYBODY", "[REDACTED]")


def make() -> tuple[LiveOutput, io.StringIO, io.StringIO]:
    out, err = io.StringIO(), io.StringIO()
    return LiveOutput(redact, out, err), out, err


def test_lines_show_as_they_complete_and_the_rest_at_the_end() -> None:
    live, out, err = make()
    live("stdout", b"one\ntw")
    assert out.getvalue() == "one\n"
    live("stderr", b"\x1b[31mred\x1b[0m\n")
    assert err.getvalue() == "red\n"
    live("stdout", b"o")
    live.finish()
    assert out.getvalue() == "one\ntwo\n"


def test_a_private_key_block_is_held_until_it_ends_then_redacted_whole() -> None:
    live, out, _ = make()
    live("stdout", b"before\n-----BEGIN PRIVATE KEY-----\nSECRET")
    assert out.getvalue() == "before\n"
    live("stdout", b"KEYBODY\n-----END PRIVATE KEY-----\nafter\n")
    assert "SECRETKEYBODY" not in out.getvalue()
    assert out.getvalue().endswith("[REDACTED]\n-----END PRIVATE KEY-----\nafter\n")


def test_binary_output_stops_the_live_view() -> None:
    live, out, _ = make()
    live("stdout", b"\x89PNG\r\n\x1a\n\x00\x00")
    live.finish()
    assert out.getvalue() == ""
    assert live.binary == {"stdout"}
