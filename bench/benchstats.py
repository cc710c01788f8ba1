"""Percentiles for the benchmarks (nearest rank), shared by the scripts in this folder: run as
``python bench/NAME.py``, they find it beside them."""

from __future__ import annotations


def quantile(values: list[float], q: float) -> float:
    """The ``q`` quantile (0..1) of ``values`` by nearest rank, in the values' own unit."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def pct(samples: list[float], q: float) -> float:
    """The ``q`` quantile of durations in seconds, in milliseconds."""
    return quantile(samples, q) * 1000
