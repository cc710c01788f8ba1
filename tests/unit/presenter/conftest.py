"""Fixtures for presenter tests."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from presenter_helpers import Present, make_result

from canal.presenter import Presentation, PresenterConfig, present
from canal.sandbox.result import CapturedOutput


@pytest.fixture
def output_dir(tmp_path: Path) -> Path:
    return tmp_path / "output"


@pytest.fixture
def show(output_dir: Path) -> Present:
    """``show(stdout, stderr=..., exit_code=..., config=..., **ExecResult fields)`` -> Presentation."""

    def _show(stdout: bytes | CapturedOutput = b"", stderr: bytes = b"", *, exit_code: int | None = 0,
              config: PresenterConfig | None = None, **kw: Any) -> Presentation:
        result = make_result(stdout, stderr, exit_code, **kw)
        return present(result, config=config or PresenterConfig(), output_dir=output_dir)

    return _show
