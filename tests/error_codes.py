"""``raises_code(CODE)``: ``pytest.raises`` for a registered error code (``canal.core.errors.register``)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest

from canal.core.errors import ErrorCode


@contextmanager
def raises_code(code: ErrorCode[Any] | type[BaseException],
                match: str | None = None) -> Iterator[pytest.ExceptionInfo[Any]]:
    """The block raises an error of ``code``'s family carrying exactly that code (or, given a class,
    an error of that class, as ``pytest.raises``)."""
    if isinstance(code, type):
        with pytest.raises(code, match=match) as raised:
            yield raised
        return
    with pytest.raises(code.family, match=match) as info:
        yield info
    assert info.value.code == code.code, f"raised {info.value.code}, expected {code.code}: {info.value}"
