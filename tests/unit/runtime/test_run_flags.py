"""``canal run --max-lines/--show-stderr`` override canal.yaml's presenter settings for one call."""

from __future__ import annotations

from canal.cli.work.run_cmd import presenter_overrides
from canal.presenter import PresenterConfig


def test_no_flags_change_nothing() -> None:
    assert presenter_overrides(PresenterConfig(), None, False) is None


def test_max_lines_keeps_head_and_tail_inside_it() -> None:
    small = presenter_overrides(PresenterConfig(), 40, False)
    assert small is not None
    assert small.max_lines == 40
    assert small.head_lines + small.tail_lines < 40
    assert not small.show_stderr_on_success
    large = presenter_overrides(PresenterConfig(head_lines=30), 1000, True)
    assert large is not None
    assert (large.max_lines, large.head_lines, large.tail_lines) == (1000, 30, 20)
    assert large.show_stderr_on_success
