"""Redaction over every byte Canal writes or shows: saved binary output, hints and error lines."""

from __future__ import annotations

from pathlib import Path

from canal.cli.words import say as cli_words
from canal.runtime.api import Canal

# built inside the sandbox from two halves, so the command text itself holds no token
TOKEN = "ghp_" + "x9Kq2LmP4vR7tY1nB8cD3fG6hJ0kWzQeUaSo"
HALVES = (TOKEN[:20], TOKEN[20:])


def saved_files(canal: Canal) -> list[Path]:
    return sorted(canal._services.outputs_dir("default").glob("*.bin"))


def test_binary_output_is_saved_with_secrets_in_its_printable_runs_replaced(canal: Canal) -> None:
    before = set(saved_files(canal))
    result = canal.run(f"printf 'head\\000\\001\\002 token=%s%s tail\\000\\n' {HALVES[0]} {HALVES[1]}")
    assert result.status == "ok", result.text
    assert "binary output not shown" in result.text
    [saved] = set(saved_files(canal)) - before
    data = saved.read_bytes()
    assert TOKEN.encode() not in data
    assert b"[REDACTED_SECRET:github-pat:" in data
    assert data.startswith(b"head\x00\x01\x02"), "the bytes around the secret stay where they were"


def test_confirmation_hint_never_repeats_a_secret_in_the_command(canal: Canal) -> None:
    asked = canal.run(f"rm -rf build --token={TOKEN}", say=cli_words)
    assert asked.status == "confirmation_required"
    assert asked.confirmation is not None
    assert TOKEN not in asked.text
    assert [a.args.get("secret") for a in asked.next] == [True]
    assert TOKEN not in asked.model_dump_json()
    assert f"--confirm {asked.confirmation.token} -- <the same command" in asked.text


def test_denied_hint_never_repeats_a_secret_in_the_command(canal: Canal) -> None:
    refused = canal.run(f"rm -rf build --token={TOKEN}", unattended=True, say=cli_words)
    assert refused.status == "denied"
    assert TOKEN not in refused.text
    assert "canal policy check --cwd /workspace --unattended -- " in refused.text


def test_text_output_over_the_memory_cap_is_saved_redacted_with_its_line_numbers(canal: Canal) -> None:
    """Past 1 MiB a stream is spooled to disk by the sandbox layer: the saved file is redacted all the
    same, line N still line N (the hints name line numbers), and the spool is gone once presented."""
    folder = canal._services.outputs_dir("default")
    before = set(folder.rglob("*"))
    # 40,000 lines (about 1.3 MiB), a token on line 20,000 and on the last line
    script = (f"for ((i = 1; i <= 40000; i++)); do echo \"log line $i of a long build output\"; "
              f"if [ $i = 19999 ] || [ $i = 39999 ]; then echo token={HALVES[0]}{HALVES[1]}; fi; done")
    result = canal.run(["bash", "-c", script])
    assert result.status == "ok", result.text
    assert result.output_file is not None
    assert result.exec_result is not None
    assert result.exec_result.stdout.size > 1 << 20  # it was spooled
    new = set(folder.rglob("*")) - before
    [saved] = [p for p in new if p.is_file()]
    assert saved.name == Path(result.output_file).name
    data = saved.read_bytes()
    assert TOKEN.encode() not in data
    lines = data.split(b"\n")
    assert len(lines) == 40003  # 40,002 lines and the empty piece after the last line break
    assert lines[19999].startswith(b"token=[REDACTED_SECRET:github-pat:")
    assert lines[20000] == b"log line 20000 of a long build output"
    assert lines[40000].startswith(b"token=[REDACTED_SECRET:github-pat:")
    assert lines[40001] == b"log line 40000 of a long build output"
    assert TOKEN not in result.text
