"""CEL operations on plain Python values for the fast path (policy.cel.fastcel): each returns the value
cel-python's interpreter would return, or raises ``Fallback`` wherever the interpreter could disagree
(an unexpected type, an error, an overflow), so that the interpreter decides those cases.
"""

from __future__ import annotations

import operator
import posixpath
from collections.abc import Callable
from typing import Any

import re2

INT64 = (-(2**63), 2**63 - 1)
_REGEX: dict[str, Any] = {}


class Fallback(Exception):
    """The fast path cannot vouch for this evaluation: ask the interpreter."""


def _fail() -> Any:
    raise Fallback


def as_bool(v: Any) -> bool:
    return v if type(v) is bool else _fail()


def as_int(v: Any) -> int:
    return v if type(v) is int else _fail()


def _str(v: Any) -> str:
    return v if type(v) is str else _fail()


def _strs(v: Any) -> list[str]:
    return v if type(v) is list and all(type(i) is str for i in v) else _fail()


def ranged(v: int) -> int:
    return v if INT64[0] <= v <= INT64[1] else _fail()


def _matches(text: Any, pattern: Any) -> bool:
    text, pattern = _str(text), _str(pattern)
    regex = _REGEX.get(pattern)
    if regex is None:
        regex = re2.compile(pattern)  # re2.error is caught by run(): the interpreter reports it
        if len(_REGEX) < 1024:
            _REGEX[pattern] = regex
    return bool(regex.search(text) is not None)


def _eq(a: Any, b: Any) -> bool:
    return bool(a == b) if type(a) is type(b) and type(a) in (str, int, bool) else _fail()


def _in(a: Any, c: Any) -> bool:
    if type(a) not in (str, int, bool):
        raise Fallback
    if type(c) is list and all(type(i) is type(a) for i in c):
        return a in c
    if type(c) is dict and type(a) is str and all(type(k) is str for k in c):
        return a in c
    raise Fallback


def _order(a: Any, b: Any) -> tuple[Any, Any]:
    return (a, b) if type(a) is type(b) and type(a) in (str, int) else _fail()


def _add(a: Any, b: Any) -> Any:
    if type(a) is int and type(b) is int:
        return ranged(a + b)
    if type(a) is type(b) and type(a) in (str, list):
        return a + b
    raise Fallback


def _size(v: Any) -> int:
    return len(v) if type(v) in (str, list, dict) else _fail()


def _join(items: Any, sep: Any = "") -> str:
    return _str(sep).join(_strs(items))


def _split(text: Any, sep: Any) -> list[str]:
    return _str(text).split(_str(sep))


BINARY: dict[str, Callable[[Any, Any], Any]] = {
    "relation_eq": _eq,
    "relation_ne": lambda a, b: not _eq(a, b),
    "relation_in": _in,
    "relation_lt": lambda a, b: operator.lt(*_order(a, b)),
    "relation_le": lambda a, b: operator.le(*_order(a, b)),
    "relation_gt": lambda a, b: operator.gt(*_order(a, b)),
    "relation_ge": lambda a, b: operator.ge(*_order(a, b)),
    "addition_add": _add,
    "addition_sub": lambda a, b: ranged(as_int(a) - as_int(b)),
    "multiplication_mul": lambda a, b: ranged(as_int(a) * as_int(b)),
}

# Functions callable as f(x, ...) or x.f(...): the builtins we translate plus policy/cel/celenv.FUNCTIONS.
FUNCTIONS: dict[str, Callable[..., Any]] = {
    "size": _size,
    "startsWith": lambda s, p: _str(s).startswith(_str(p)),
    "endsWith": lambda s, p: _str(s).endswith(_str(p)),
    "contains": lambda s, p: _str(p) in _str(s),
    "matches": _matches,
    "join": _join,
    "split": _split,
    "lower": lambda t: _str(t).lower(),
    "lowerAscii": lambda t: _str(t).lower(),
    "upperAscii": lambda t: _str(t).upper(),
    "trim": lambda t: _str(t).strip(),
    "replace": lambda t, old, new: _str(t).replace(_str(old), _str(new)),
    "basename": lambda t: posixpath.basename(_str(t)),
}
METHOD_ONLY = frozenset({"startsWith", "endsWith", "contains", "matches"})


def plain(value: Any) -> bool:
    """Values the fast path may read: what cel-python's json_to_cel converts without error or change
    of meaning (no floats, tuples or other types, ints within int64, string map keys)."""
    kind = type(value)
    if kind is str or kind is bool or value is None:
        return True
    if kind is int:
        return bool(INT64[0] <= value <= INT64[1])
    if kind is list:
        return all(plain(v) for v in value)
    if kind is dict:
        return all(type(k) is str and plain(v) for k, v in value.items())
    return False


def key(obj: Any, name: str) -> Any:
    return obj[name] if type(obj) is dict and name in obj else _fail()


def index(obj: Any, i: Any) -> Any:
    ok = (type(obj) is list and type(i) is int and 0 <= i < len(obj)) or (
        type(obj) is dict and type(i) is str and i in obj)
    return obj[i] if ok else _fail()


