from __future__ import annotations

import re
import stat
from pathlib import Path

import pytest
from presenter_helpers import Present, host_path, lines

from canal.presenter import PresenterConfig
from canal.sandbox.result import CapturedOutput

MARKER = re.compile(r"^\[\.\.\. (\d+) lines truncated\. Full output: (/canal/output/\S+) \.\.\.\]$", re.M)


def test_empty_output_is_only_the_footer(show: Present, output_dir: Path) -> None:
    p = show(b"")
    assert p.text == "[exit:0 | 1.23s]"
    assert (p.output, p.output_file, p.truncated, p.total_lines, p.total_bytes) == ("", None, False, 0, 0)
    assert not output_dir.exists()


def test_exactly_200_lines_are_shown_whole(show: Present, output_dir: Path) -> None:
    p = show(lines(200))
    assert p.output == lines(200).decode().rstrip("\n")
    assert not p.truncated
    assert p.output_file is None
    assert p.total_lines == 200
    assert not MARKER.search(p.text)
    assert not output_dir.exists()


def test_201_lines_show_head_50_tail_20_and_save_the_rest(show: Present, output_dir: Path) -> None:
    p = show(lines(201))
    assert p.truncated
    assert p.total_lines == 201
    m = MARKER.search(p.output)
    assert m is not None
    assert m.group(1) == "131"
    assert m.group(2) == p.output_file
    head, tail = p.output.split(m.group(0))
    assert head.strip("\n").split("\n") == [f"line {i}" for i in range(1, 51)]
    tail_lines = tail.strip("\n").split("\n")
    assert tail_lines[:-1] == [f"line {i}" for i in range(182, 202)]
    assert tail_lines[-1].startswith("[Full output: 201 lines, ")
    assert f"sed -n '51,150p' {p.output_file}" in tail_lines[-1]
    assert f"grep -n PATTERN {p.output_file}" in tail_lines[-1]
    saved = host_path(output_dir, p.output_file)
    assert saved.read_bytes() == lines(201)
    assert stat.S_IMODE(saved.stat().st_mode) == 0o600


def test_one_10_mb_line_is_cut_to_the_line_cap(show: Present, output_dir: Path) -> None:
    data = b"ab" * 5_000_000
    p = show(data)
    assert p.truncated
    assert p.total_lines == 1
    assert p.total_bytes == 10_000_000
    assert len(p.text.encode()) < 6000
    first = p.output.split("\n")[0]
    assert first.startswith("ab" * 2048 + " [... line 1 cut at 4096 of 10000000 bytes ...]")
    assert f"sed -n '1p' {p.output_file} | cut -b 4097-12288" in p.output
    assert host_path(output_dir, p.output_file).read_bytes() == data


def test_byte_cap_applies_to_few_long_lines(show: Present) -> None:
    data = lines(100, "{}" + "x" * 1000)
    p = show(data)
    assert p.truncated
    assert len(p.output.encode()) < 16 * 1024 + 1024
    m = MARKER.search(p.output)
    assert m is not None
    shown = int(m.group(1))
    assert 0 < shown < 100


def test_a_multibyte_character_is_never_cut(show: Present) -> None:
    data = ("é" * 3000 + "\n").encode()  # 6000 bytes a line, cut after an odd number of bytes
    config = PresenterConfig(max_bytes=4096, head_bytes=4001, tail_bytes=0)
    p = show(data * 2, config=config)
    first, note = p.output.split(" [... line 1 cut")
    assert first == "é" * 2000
    assert note.startswith(" at 4001 of 6000 bytes ...]")
    assert "\ufffd" not in p.output


@pytest.mark.parametrize("link", [True, False])
def test_spooled_output_is_linked_or_copied_from_its_file(link: bool, show: Present, output_dir: Path,
                                                          tmp_path: Path) -> None:
    spool = tmp_path / "spool.bin"
    spool.write_bytes(lines(100_000))
    spool.chmod(0o644)
    p = show(CapturedOutput(size=spool.stat().st_size, path=spool),
             config=PresenterConfig(link_spooled=link))
    assert p.total_lines == 100_000
    assert p.output.split("\n")[-2] == "line 100000"
    saved = host_path(output_dir, p.output_file)
    assert saved.read_bytes() == spool.read_bytes()
    assert spool.exists()
    assert saved.samefile(spool) is link
    assert stat.S_IMODE(saved.stat().st_mode) == 0o600


def test_a_spool_that_is_a_symlink_is_copied_not_linked(show: Present, output_dir: Path,
                                                       tmp_path: Path) -> None:
    real = tmp_path / "real.bin"
    real.write_bytes(lines(300))
    spool = tmp_path / "spool.bin"
    spool.symlink_to(real)
    p = show(CapturedOutput(size=real.stat().st_size, path=spool))
    saved = host_path(output_dir, p.output_file)
    assert not saved.is_symlink()
    assert not saved.samefile(real)
    assert saved.read_bytes() == lines(300)


def test_unsaveable_output_still_shows_head_and_tail(show: Present, output_dir: Path) -> None:
    output_dir.write_text("not a folder")
    p = show(lines(300))
    assert p.output_file is None
    assert p.save_error
    assert "[... 230 lines truncated. Full output: not saved (" in p.output
    assert "line 300" in p.output


def test_every_saved_name_is_new(show: Present, output_dir: Path) -> None:
    a, b = show(lines(300)), show(lines(300))
    assert a.output_file != b.output_file
    assert len(list(output_dir.iterdir())) == 2
