"""Memory stays bounded whatever the output size (the 1 GiB figure is in bench/bench_presenter.py)."""

from __future__ import annotations

import tracemalloc
from pathlib import Path

import pytest
from presenter_helpers import make_result

from canal.presenter import PresenterConfig, present
from canal.sandbox.result import CapturedOutput

MIB = 1024 * 1024


@pytest.mark.parametrize("link", [True, False])
def test_a_32_mib_spool_is_presented_in_a_few_mib(link: bool, tmp_path: Path) -> None:
    spool = tmp_path / "spool"
    block = b"".join(b"request %6d took %3d ms\n" % (i, i % 997) for i in range(40_000))
    with spool.open("wb") as fh:
        while fh.tell() < 32 * MIB:
            fh.write(block)
    result = make_result(CapturedOutput(size=spool.stat().st_size, path=spool))
    tracemalloc.start()
    try:
        p = present(result, config=PresenterConfig(link_spooled=link), output_dir=tmp_path / "out")
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert p.truncated
    assert p.total_bytes == spool.stat().st_size
    assert peak < 4 * MIB
