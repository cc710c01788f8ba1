"""The wire's JSON without the json package (canal/client/cjson.py): what json.dumps writes and what
json.loads reads, refused where json refuses."""

from __future__ import annotations

import json
import math
import random
import sys

import pytest

from canal.client import cjson, wire

# what a frame carries: an environment's values (lone surrogates from undecodable bytes included),
# argv, exit codes, counts, flags, the status's floats and nested objects
ALPHABET = "az09 \"\\/\n\t\x00\x1f\x7f\u00e9\u2028\udc80\udcff\U0001f600"


def _text(rng: random.Random) -> str:
    return "".join(rng.choice(ALPHABET) for _ in range(rng.randrange(8)))


def _value(rng: random.Random, depth: int = 0) -> object:
    kind = rng.randrange(8 if depth < 4 else 6)
    if kind == 0:
        return rng.choice([None, True, False])
    if kind == 1:
        return rng.randrange(-(2**70), 2**70)
    if kind == 2:
        return rng.choice([0.0, -0.0, 1e-300, 1e300, sys.float_info.max, rng.uniform(-1e6, 1e6), math.inf,
                           -math.inf, math.nan])
    if kind in (3, 4, 5):
        return _text(rng)
    if kind == 6:
        return [_value(rng, depth + 1) for _ in range(rng.randrange(5))]
    return {_text(rng): _value(rng, depth + 1) for _ in range(rng.randrange(5))}


@pytest.mark.parametrize("seed", range(20))
def test_it_writes_what_json_writes_and_reads_it_back(seed: int) -> None:
    rng = random.Random(seed)
    for _ in range(50):
        value = _value(rng)
        text = cjson.dumps(value)
        assert text == json.dumps(value)
        # compared as json writes them: NaN is not equal to itself
        assert json.dumps(cjson.loads(text)) == json.dumps(json.loads(text))
        assert json.dumps(cjson.loads(text.encode())) == text
        assert json.dumps(cjson.loads(f" \n{text}\t\r ")) == text  # whitespace around, as json allows


def test_a_request_frame_round_trips_through_the_wire() -> None:
    env = {"PATH": "/usr/bin", "ODD": "caf\udce9", "NL": "a\nb\t\"c\"\\", "EMOJI": "\U0001f600"}
    request = {"op": "cli", "argv": ["run", "--", "echo", "héllo"], "env": env, "umask": 18,
               "tty": {"stdin": False, "stdout": True}, "ratio": 0.25, "none": None}
    frame = wire.encode(wire.REQUEST, cjson.dumps(request).encode())
    assert wire.loads(frame[wire.HEADER.size:]) == request


@pytest.mark.parametrize("payload", [b"", b"  ", b"{}{}", b"{} x", b"{", b"[1,]", b"{'a': 1}", b"\xff\xfe",
                                     b"nan", b"[Infinity", b'"\\ud800', b"01", b"\x0c{}"])
def test_what_is_not_one_json_document_is_a_value_error(payload: bytes) -> None:
    with pytest.raises(ValueError):  # noqa: PT011 - json's own error types are ValueErrors too
        json.loads(payload)  # json refuses it too
    with pytest.raises(ValueError):  # noqa: PT011
        cjson.loads(payload)


def test_a_non_object_control_frame_is_a_wire_error() -> None:
    with pytest.raises(wire.WireError, match="JSON object"):
        wire.loads(b"[1, 2]")
    with pytest.raises(wire.WireError, match="not JSON"):
        wire.loads(b"{} trailing")


def test_what_json_cannot_write_is_refused() -> None:
    loop: list[object] = []
    loop.append(loop)
    with pytest.raises(ValueError, match="Circular"):
        cjson.dumps(loop)
    with pytest.raises(TypeError, match="not JSON serializable"):
        cjson.dumps({"x": object()})


def test_deep_nesting_is_a_value_error_not_a_crash() -> None:
    with pytest.raises(ValueError):  # noqa: PT011
        cjson.loads(b"[" * 100_000 + b"]" * 100_000)
