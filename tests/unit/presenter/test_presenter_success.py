"""Issue 32, finding 1: stderr on success, when it carries what the reader needs (a test runner's
summary, a build tool's lines), is shown as a bounded, labelled tail; JSON keeps it whole."""

from __future__ import annotations

from pathlib import Path

from presenter_helpers import host_path, lines, make_result

from canal.presenter import PresenterConfig, present
from canal.presenter.runners import is_runner

UNITTEST = (b"..........\n----------------------------------------------------------------------\n"
            b"Ran 774 tests in 1.502s\n\nOK\n")



def test_unittest_summary_on_stderr_is_shown_when_stdout_is_empty(output_dir: Path) -> None:
    p = present(make_result(b"", UNITTEST, 0), config=PresenterConfig(), output_dir=output_dir,
                command="python3 -m unittest")
    assert "Ran 774 tests in 1.502s" in p.text
    assert p.text.startswith("--- stderr ---\n")
    assert p.text.endswith("OK\n--- end stderr ---\n[exit:0 | 1.23s]")


def test_any_command_with_empty_stdout_shows_its_stderr(output_dir: Path) -> None:
    p = present(make_result(b"", b"Switched to branch 'main'\n", 0), config=PresenterConfig(),
                output_dir=output_dir, command="git checkout main")
    assert "Switched to branch 'main'" in p.text


def test_a_runner_shows_its_stderr_tail_next_to_stdout(output_dir: Path) -> None:
    err = lines(500, "   Compiling crate{} v0.1.0") + b"    Finished `dev` profile in 3.2s\n"
    p = present(make_result(b"test result: ok. 3 passed\n", err, 0), config=PresenterConfig(),
                output_dir=output_dir, command="cargo test")
    assert p.text.startswith("test result: ok. 3 passed\n--- stderr ---\n")
    assert "Finished `dev` profile in 3.2s" in p.text
    assert "Compiling crate1 " not in p.text  # only the tail
    shown = p.text.split("--- stderr ---\n", 1)[1].split("\n--- end stderr ---", 1)[0]
    config = PresenterConfig()
    assert len(shown.splitlines()) <= config.stderr_success_lines + 2  # the tail and its note
    assert len(shown.encode()) <= config.stderr_success_bytes + 512
    assert "481 earlier lines of stderr not shown" in shown
    assert p.stderr_file is not None
    assert p.stderr_file in shown
    assert host_path(output_dir, p.stderr_file).read_bytes() == err


def test_a_non_runner_with_stdout_keeps_stderr_out_of_the_text_but_in_json(output_dir: Path) -> None:
    p = present(make_result(b"out\n", b"warning: deprecated\n", 0), config=PresenterConfig(),
                output_dir=output_dir, command="ls")
    assert p.text == "out\n[exit:0 | 1.23s]"
    assert p.stderr == "warning: deprecated"  # JSON's stderr is whole (redacted) whatever is shown


def test_never_turns_it_off(output_dir: Path) -> None:
    p = present(make_result(b"", UNITTEST, 0), config=PresenterConfig(stderr_on_success="never"),
                output_dir=output_dir, command="python3 -m unittest")
    assert p.text == "[exit:0 | 1.23s]"
    assert "Ran 774 tests" in p.stderr


def test_known_runners() -> None:
    runners = PresenterConfig().stderr_runners
    for command in ("python3 -m unittest", "python -m pytest -q", "pytest", "cd app && make test",
                    "go test -v ./...", "cargo build --release", "CI=1 npm test", ".venv/bin/pytest",
                    "env FOO=1 make", "uv run pytest", "time make -j4"):
        assert is_runner(command, runners), command
    for command in ("ls", "python3 app.py", "grep -rn make .", "echo pytest", ""):
        assert not is_runner(command, runners), command
