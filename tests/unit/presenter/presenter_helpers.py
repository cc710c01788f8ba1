"""Fakes for presenter tests: ``ExecResult`` values built by hand (Layer 1 is not needed)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from canal.presenter import Presentation
from canal.sandbox.result import CapturedOutput, ExecResult

Present = Callable[..., Presentation]


def make_result(stdout: bytes | CapturedOutput = b"", stderr: bytes = b"", exit_code: int | None = 0,
                duration_s: float = 1.234, **kw: Any) -> ExecResult:
    out = stdout if isinstance(stdout, CapturedOutput) else CapturedOutput.of(stdout)
    return ExecResult(out, CapturedOutput.of(stderr), exit_code, duration_s, **kw)


def lines(n: int, fmt: str = "line {}") -> bytes:
    return "".join(fmt.format(i) + "\n" for i in range(1, n + 1)).encode()


def host_path(output_dir: Path, sandbox_path: str | None) -> Path:
    assert sandbox_path is not None
    assert sandbox_path.startswith("/canal/output/")
    return output_dir / sandbox_path.rsplit("/", 1)[1]
