from __future__ import annotations

import io
import random

import pytest

from canal.presenter.scan import Indexer, scan


def naive_spans(data: bytes) -> list[tuple[int, int]]:
    spans, start = [], 0
    for i, b in enumerate(data):
        if b == 10:
            spans.append((start, i))
            start = i + 1
    if start < len(data):
        spans.append((start, len(data)))
    return spans


@pytest.mark.parametrize("seed", range(20))
def test_index_matches_a_naive_split_across_chunk_boundaries(seed: int) -> None:
    rng = random.Random(seed)
    data = bytes(rng.choice(b"ab\n\r") for _ in range(rng.randrange(0, 300)))
    chunk = rng.randrange(1, 17)
    head, tail = rng.randrange(0, 6), rng.randrange(0, 6)
    index = scan(io.BytesIO(data), head=head, tail=tail, chunk_bytes=chunk)
    spans = naive_spans(data)
    assert index.total_bytes == len(data)
    assert index.total_lines == len(spans)
    for line in [*range(1, min(head, len(spans)) + 1), *range(max(1, len(spans) - tail + 1), len(spans) + 1)]:
        assert index.span(line) == spans[line - 1]


def test_a_middle_line_was_not_kept() -> None:
    index = scan(io.BytesIO(b"1\n2\n3\n4\n5\n"), head=1, tail=1, chunk_bytes=4)
    assert index.span(1) == (0, 1)
    assert index.span(5) == (8, 9)
    with pytest.raises(IndexError):
        index.span(3)


@pytest.mark.parametrize("seed", range(20))
def test_an_index_fed_block_by_block_is_the_scan(seed: int) -> None:
    rng = random.Random(seed)
    data = bytes(rng.choice(b"ab\n\r") for _ in range(rng.randrange(0, 400)))
    head, tail = rng.randrange(0, 6), rng.randrange(0, 6)
    indexer, at = Indexer(head=head, tail=tail), 0
    while at < len(data):
        size = rng.randrange(1, 40)
        indexer.add(data[at:at + size])
        at += size
    assert indexer.index() == scan(io.BytesIO(data), head=head, tail=tail, chunk_bytes=7)
