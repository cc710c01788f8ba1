"""canal run's words: one is a command line, several reach the program as an exact argv."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from canal.cli.shared import command_text

TRICKY = ["a b", "$HOME", "*", "'", '"', "\\t", "10%%\\r", "$(id)", "`id`", "a\nb", ";", "|", "&&", "~", "-n",
          "{a,b}", "!", "#x", "", "é"]


@pytest.mark.parametrize("word", TRICKY)
def test_each_word_reaches_the_program_whole(word: str) -> None:
    probe = [sys.executable, "-c", "import sys, json; print(json.dumps(sys.argv[1:]))", word, "x"]
    done = subprocess.run(["bash", "--noprofile", "--norc", "-c", command_text(probe)], capture_output=True,
                          text=True, check=True)
    assert json.loads(done.stdout) == [word, "x"]


@pytest.mark.parametrize("first", ["FOO=1", "if", "{", "while", "!"])
def test_a_first_word_is_always_a_program_name(first: str) -> None:
    done = subprocess.run(["bash", "--noprofile", "--norc", "-c", command_text([first, "x"])],
                          capture_output=True, text=True, check=False)
    assert done.returncode == 127, done.stderr
    assert "command not found" in done.stderr


def test_one_word_is_a_command_line_as_typed() -> None:
    assert command_text(["ls -la | wc -l"]) == "ls -la | wc -l"
    assert command_text(["rm", "-rf", "build"]) == "rm -rf build"
