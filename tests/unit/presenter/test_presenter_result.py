"""stderr, the footer, redaction, config: the parts of a presentation around stdout."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from presenter_helpers import Present, host_path, lines, make_result
from pydantic import ValidationError

from canal.presenter import PresenterConfig, present, render_footer
from canal.sandbox.result import EndReason


def test_stderr_is_hidden_on_success(show: Present) -> None:
    p = show(b"out\n", b"warning: deprecated\n")
    assert p.text == "out\n[exit:0 | 1.23s]"
    assert p.stderr == "warning: deprecated"  # not in the text, but whole for --json (issue 32)
    assert p.stderr_bytes == 20


def test_stderr_is_shown_on_success_when_configured(show: Present) -> None:
    p = show(b"out\n", b"warning\n", config=PresenterConfig(show_stderr_on_success=True))
    assert p.text == "out\n--- stderr ---\nwarning\n--- end stderr ---\n[exit:0 | 1.23s]"


def test_stderr_is_attached_on_failure(show: Present) -> None:
    p = show(b"", b"\x1b[31mfatal:\x1b[0m not a git repository\n", exit_code=128)
    assert p.text == "--- stderr ---\nfatal: not a git repository\n--- end stderr ---\n[exit:128 | 1.23s]"
    assert p.stderr == "fatal: not a git repository"


def test_long_stderr_is_capped_and_saved(show: Present, output_dir: Path) -> None:
    p = show(b"", lines(1000, "trace {}"), exit_code=1)
    assert p.stderr.startswith("trace 1\n")
    assert "[... 950 lines truncated. Full output: /canal/output/" in p.stderr
    assert "trace 1000" in p.stderr
    assert len(p.stderr.encode()) < 8 * 1024 + 1024
    assert p.stderr_file is not None
    assert p.stderr_file.endswith(".stderr.txt")
    assert host_path(output_dir, p.stderr_file).read_bytes() == lines(1000, "trace {}")
    assert p.output_file is None


@pytest.mark.parametrize(("kw", "footer"), [
    ({}, "[exit:0 | 1.23s]"),
    ({"exit_code": 2, "duration_s": 0.004}, "[exit:2 | 0.00s]"),
    ({"exit_code": 124, "reason": EndReason.HARD_TIMEOUT, "timeout_s": 30.0},
     "[exit:124 | 1.23s | killed: hard timeout after 30s]"),
    ({"exit_code": 124, "reason": EndReason.HARD_TIMEOUT, "timeout_s": 2.5},
     "[exit:124 | 1.23s | killed: hard timeout after 2.5s]"),
    ({"exit_code": 124, "reason": EndReason.IDLE_TIMEOUT, "idle_timeout_s": 60},
     "[exit:124 | 1.23s | killed: no output for 60s]"),
    ({"exit_code": 137, "reason": EndReason.OOM_KILLED, "memory_limit_bytes": 512 * 2**20},
     "[exit:137 | 1.23s | killed: out of memory (limit 512 MiB)]"),
    ({"exit_code": 137, "reason": EndReason.OOM_KILLED, "memory_limit_bytes": 3 * 2**29},
     "[exit:137 | 1.23s | killed: out of memory (limit 1.5 GiB)]"),
    ({"exit_code": 137, "reason": EndReason.OOM_KILLED}, "[exit:137 | 1.23s | killed: out of memory]"),
    ({"exit_code": 137, "reason": EndReason.KILLED}, "[exit:137 | 1.23s | killed]"),
    ({"exit_code": 137, "reason": EndReason.KILLED, "detail": "sandbox stopped"},
     "[exit:137 | 1.23s | killed (sandbox stopped)]"),
    ({"exit_code": None, "reason": EndReason.SANDBOX_VANISHED, "detail": "container removed"},
     "[exit:- | 1.23s | sandbox vanished (container removed)]"),
])
def test_footer_names_each_ending_reason(kw: dict[str, object], footer: str, show: Present) -> None:
    assert render_footer(make_result(**kw)) == footer  # type: ignore[arg-type]
    p = show(b"partial\n", **kw)
    assert p.footer == footer
    assert p.text.endswith("\n" + footer)


def test_every_reason_has_a_footer() -> None:
    for reason in EndReason:
        footer = render_footer(make_result(reason=reason, exit_code=1))
        assert footer.startswith("[exit:1 | 1.23s")
        assert (reason is EndReason.EXITED) == (footer == "[exit:1 | 1.23s]")


def test_stderr_is_attached_when_killed(show: Present) -> None:
    p = show(b"", b"MemoryError\n", exit_code=137, reason=EndReason.OOM_KILLED)
    assert "--- stderr ---\nMemoryError\n--- end stderr ---" in p.text


def test_redaction_applies_to_everything_shown(show: Present, output_dir: Path) -> None:
    def redact(text: str) -> str:
        return text.replace("hunter2", "[REDACTED_SECRET:test:1]")

    result = make_result(lines(300, "pw{} hunter2"), b"err hunter2\n", exit_code=1)
    p = present(result, config=PresenterConfig(), output_dir=output_dir, redact=redact)
    assert "hunter2" not in p.text
    assert p.text.count("[REDACTED_SECRET:test:1]") == 71


def test_redaction_sees_past_the_cut_of_a_long_line(show: Present, output_dir: Path) -> None:
    def redact(text: str) -> str:
        return text.replace("SECRETSECRET", "[R]")

    data = b"x" * 4090 + b"SECRETSECRET" + b"y" * 10000
    p = present(make_result(data), config=PresenterConfig(), output_dir=output_dir, redact=redact)
    assert "SECRE" not in p.text
    assert "x" * 4090 + "[R]" in p.text


def test_saved_file_goes_to_the_sandbox_user(output_dir: Path) -> None:
    result = make_result(lines(300))
    p = present(result, config=PresenterConfig(), output_dir=output_dir, file_owner=(1000, 1000),
                sandbox_output_dir="/mnt/out", name_hint="pytest -q tests/")
    assert p.output_file is not None
    assert p.output_file.startswith("/mnt/out/pytest-q-tests-")
    st = (output_dir / p.output_file.rsplit("/", 1)[1]).stat()
    expected = (1000, 1000) if os.geteuid() == 0 else (os.getuid(), os.getgid())
    assert (st.st_uid, st.st_gid) == expected
    assert st.st_mode & 0o777 == 0o600


def test_config_rejects_unknown_keys_and_inconsistent_limits() -> None:
    with pytest.raises(ValidationError, match="extra"):
        PresenterConfig.model_validate({"max_line": 10})
    with pytest.raises(ValidationError, match="head_lines \\+ tail_lines"):
        PresenterConfig(max_lines=60)


def test_config_overrides_per_call(show: Present) -> None:
    config = PresenterConfig().model_copy(update={"max_lines": 500, "max_bytes": 64 * 1024})
    assert not show(lines(400), config=config).truncated
    assert show(lines(400)).truncated


def test_to_json_is_plain_data(show: Present) -> None:
    data = show(lines(300)).to_json()
    assert data["truncated"] is True
    assert data["total_lines"] == 300
    assert set(data) >= {"text", "output", "stderr", "output_file", "binary", "sniffed_type", "footer"}


def test_binary_stderr_is_described_on_failure(show: Present, output_dir: Path) -> None:
    p = show(b"", b"\x1f\x8b\x08\x00" + bytes(200), exit_code=1)
    assert p.stderr.startswith("[binary stderr not shown: gzip data, 204 bytes. Saved to /canal/output/")
    assert p.stderr_file is not None
    assert p.stderr_file.endswith(".stderr.bin")
    assert not p.binary  # stdout was not binary


def test_saved_text_held_in_memory_is_redacted_with_line_numbers_kept(tmp_path: Path) -> None:
    from canal.host.redact import Redactor
    from canal.presenter import PresenterConfig, present
    from canal.sandbox.result import CapturedOutput, ExecResult

    key = "-----BEGIN RSA PRIVATE KEY-----\n" + "MIIEowIBAAKCAQEA7bq9" * 3 + "\nAbCdEf0123456789+/ZZ\n" \
          "-----END RSA PRIVATE KEY-----"
    body = "\n".join([*(f"line {i}" for i in range(1, 301)), key, "token ghp_" + "a1B2" * 9, "last"])
    result = ExecResult(stdout=CapturedOutput.of(body.encode()), stderr=CapturedOutput.of(b""), exit_code=0,
                        duration_s=0.1)
    shown = present(result, config=PresenterConfig(), output_dir=tmp_path, sandbox_output_dir="/o",
                    redact=Redactor(b"k" * 32), redact_saved=Redactor(b"k" * 32).redact_keep_lines)
    assert shown.output_file is not None
    saved = (tmp_path / shown.output_file.removeprefix("/o/")).read_text()
    assert "MIIEowIBAAKCAQEA" not in saved
    assert "ghp_" + "a1B2" * 9 not in saved
    assert saved.count("\n") == body.count("\n")
    assert saved.splitlines()[-1] == "last"
    assert saved.splitlines()[299] == "line 300"
