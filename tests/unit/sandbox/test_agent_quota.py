"""The agent's workspace quota (``agent.quota``), run on the host's filesystem."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from canal.sandbox.agent import quota as _agent_quota
from canal.sandbox.agent.quota import CHECK_EVERY_S, Quota


def test_a_command_is_looked_at_from_a_tenth_of_a_second_in_and_when_it_ends(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    quota = Quota(str(tmp_path), 1 << 20)
    looks: list[float] = []
    real = _agent_quota._written
    monkeypatch.setattr(_agent_quota, "_written", lambda: looks.append(time.monotonic()) or real())
    quota.begin()
    assert not quota.exceeded()  # at the start: nothing looked at yet
    assert looks == []
    (tmp_path / "big").write_bytes(b"x" * (2 << 20))
    assert quota.exceeded(final=True)  # the end always looks, and walks when the signals say so
    assert len(looks) == 2  # the signals, then the walk's own
    quota.begin()
    time.sleep(CHECK_EVERY_S * 1.5)
    quota.exceeded()
    assert len(looks) > 2  # a long command is looked at while it runs
