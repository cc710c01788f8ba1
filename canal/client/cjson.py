"""JSON for the wire's control frames through CPython's C accelerator (``_json``) alone.

``import json`` imports ``re`` (its decoder's whitespace pattern, its encoder's escapes) and with it
``enum`` and ``functools``: 6-8 ms of CPU in every ``canal`` call, more than the rest of the thin client.
The ``json`` package is a thin wrapper over ``_json``'s encoder and scanner, which this module drives
directly, with ``json.dumps``'s defaults (ASCII output, ``", "`` and ``": "``, ``NaN`` and
``Infinity`` written as json writes them) and ``json.loads``'s result (the server's side writes with
``json``); where ``_json`` is missing (another interpreter), it is ``json`` itself.
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing's import costs the thin client's start-up; mypy reads this name the same
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

try:
    from _json import encode_basestring_ascii, make_encoder, make_scanner
except ImportError:  # pragma: no cover - an interpreter without CPython's accelerator
    import json

    def dumps(obj: Any) -> str:
        return json.dumps(obj)

    def loads(text: str | bytes) -> Any:
        return json.loads(text)
else:

    class _Context:
        """What ``_json.make_scanner`` reads off a decoder: ``json.loads``'s defaults."""

        strict = True
        object_hook = None
        object_pairs_hook = None
        parse_float = float
        parse_int = int
        parse_constant = {"-Infinity": -float("inf"), "Infinity": float("inf"), "NaN": float("nan")}.get

    # typeshed types the context as a scanner: any object with these attributes is what it reads
    _scan: Callable[[str, int], tuple[Any, int]] = make_scanner(_Context())  # type: ignore[arg-type]

    def _unencodable(obj: object) -> Any:
        msg = f"Object of type {type(obj).__name__} is not JSON serializable"
        raise TypeError(msg)

    # (markers, default, encoder, indent, key_separator, item_separator, sort_keys, skipkeys, allow_nan):
    # no markers, so the encoder keeps no state and threads share it (a cycle ends in RecursionError)
    _encode: Callable[[Any, int], Any] = make_encoder(None, _unencodable, encode_basestring_ascii, None,
                                                      ": ", ", ", False, False, True)

    def dumps(obj: Any) -> str:
        """``json.dumps(obj)``."""
        try:
            return "".join(_encode(obj, 0))
        except RecursionError as exc:
            msg = "Circular reference detected (or nested too deeply)"
            raise ValueError(msg) from exc

    def loads(text: str | bytes) -> Any:
        """``json.loads(text)``; ``ValueError`` when it is not one JSON document."""
        if isinstance(text, (bytes, bytearray)):
            text = text.decode("utf-8")  # UnicodeDecodeError is a ValueError
        text = text.strip(_SPACE)
        try:
            value, end = _scan(text, 0)
        except StopIteration as exc:
            msg = f"Expecting value at {exc.value}"
            raise ValueError(msg) from None
        except RecursionError as exc:
            msg = "nested too deeply"
            raise ValueError(msg) from exc
        if end != len(text):
            msg = f"Extra data at {end}"
            raise ValueError(msg)
        return value


_SPACE = " \t\n\r"  # JSON's whitespace, which json.loads allows around a document
