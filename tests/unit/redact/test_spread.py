"""A saved output dense with findings is redacted by worker processes (``host.redact.pool``), and the
saved bytes are those of redacting it here, byte for byte: base64, secrets across every cut, lines too
long for one text, and a worker killed halfway. Real processes, spawned as the server spawns them."""

from __future__ import annotations

import base64
import hashlib
import io
import os
import random
import signal
from collections.abc import Iterable, Iterator
from pathlib import Path

import pytest

from canal.host.ports import Spread, SpreadFailed
from canal.host.redact import Detector, Redactor, builtin_rules, pool
from canal.presenter import textclean
from canal.presenter.textclean import clean_text_stream

KEY = b"s" * 32
TOKEN = "ghp_" + "a1B2" * 9
PEM = ("-----BEGIN RSA PRIVATE KEY-----\n" + "MIIEowIBAAKCAQEA7bq9" * 3 + "\nAbCdEf0123456789+/ZZ\n"
       "-----END RSA PRIVATE KEY-----\n")


def _base64(size: int, seed: int) -> bytes:
    return base64.encodebytes(random.Random(seed).randbytes(size * 3 // 4))[:size]


def _mixed(size: int) -> bytes:
    """Base64 with log lines, secrets and private keys between its parts, so cuts fall inside them."""
    parts: list[bytes] = []
    rng = random.Random(3)
    while sum(map(len, parts)) < size:
        parts.append(_base64(rng.randrange(20_000, 200_000), rng.randrange(1 << 30)))
        parts.append(f"step {len(parts)} token={TOKEN} password=hunter2-{len(parts)}x9\n".encode())
        parts.append(PEM.encode())
    return b"".join(parts) + b"tail without a line break " + TOKEN.encode()


def same(one: bytes, other: bytes) -> bool:
    """Equal bytes; else False, without pytest's diff of megabytes (minutes of CPU)."""
    return hashlib.sha256(one).digest() == hashlib.sha256(other).digest()


def _save(data: bytes, chunk: int, spread: Spread | None) -> bytes:
    redact = Redactor(KEY).redact_keep_lines
    return b"".join(clean_text_stream(io.BytesIO(data), redact, chunk, spread=spread))


@pytest.fixture
def workers() -> Iterator[pool.Workers]:
    made = pool.Workers(2, free=lambda: True)  # whatever else the machine runs meanwhile
    yield made
    made.close()


@pytest.mark.parametrize("chunk", [256 * 1024, 1 << 20])
def test_spread_output_is_the_inline_output_byte_for_byte(workers: pool.Workers, chunk: int) -> None:
    data = _mixed(6 * 1024 * 1024)
    inline = _save(data, chunk, None)
    spread = _save(data, chunk, workers.spread(KEY))
    assert same(spread, inline)
    assert workers.sent > 0  # dense: the texts after the first slow one went to the workers
    assert TOKEN.encode() not in spread
    assert b"hunter2" not in spread
    assert spread.count(b"\n") == data.count(b"\n")


def test_a_line_longer_than_the_cap_is_cut_the_same_way(workers: pool.Workers,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(textclean, "MAX_LINE", 300_000)  # a few pieces of one long line
    monkeypatch.setattr(textclean, "DENSE_MIN", 1000)
    line = b" ".join(base64.b64encode(random.Random(i).randbytes(900)) for i in range(1000))
    data = line + b" " + TOKEN.encode() + b"\n" + _base64(1 << 20, 9)
    assert same(_save(data, 1 << 18, workers.spread(KEY)), _save(data, 1 << 18, None))
    assert workers.sent > 0


def test_log_output_is_not_sent(workers: pool.Workers) -> None:
    data = b"".join(f"2026-12-06 INFO request {i} served in {i % 97} ms\n".encode() for i in range(120_000))
    assert same(_save(data, 1 << 20, workers.spread(KEY)), _save(data, 1 << 20, None))
    assert workers.sent == 0  # fast to redact here: not worth the round trip


def test_a_worker_killed_halfway_leaves_the_rest_redacted_here(workers: pool.Workers) -> None:
    data = _mixed(8 * 1024 * 1024)
    spread = workers.spread(KEY)
    killed: list[int] = []

    def killing(texts: Iterable[str]) -> Iterator[str]:
        for n, clean in enumerate(spread(texts)):
            if n == 1 and not killed:
                executor = workers._started()
                pid = next(iter(executor._processes))  # a worker process of the pool
                os.kill(pid, signal.SIGKILL)
                killed.append(pid)
            yield clean

    assert same(_save(data, 1 << 19, killing), _save(data, 1 << 19, None))
    assert killed


def test_no_worker_is_used_while_no_core_is_free() -> None:
    busy = pool.Workers(2, free=lambda: False)
    try:
        data = _mixed(3 * 1024 * 1024)
        assert same(_save(data, 1 << 19, busy.spread(KEY)), _save(data, 1 << 19, None))
        assert busy.sent == 0
    finally:
        busy.close()


def test_a_failing_spread_is_redacted_here() -> None:
    def broken(texts: Iterable[str]) -> Iterator[str]:
        next(iter(texts))
        raise SpreadFailed("gone")
        yield ""  # pragma: no cover

    data = _mixed(3 * 1024 * 1024)
    assert same(_save(data, 1 << 18, broken), _save(data, 1 << 18, None))


def test_only_the_built_in_rules_of_an_enabled_process_are_spread(monkeypatch: pytest.MonkeyPatch,
                                                                   tmp_path: Path) -> None:
    pool.close()
    assert pool.spread_for(Redactor(KEY).redact_keep_lines) is None  # not enabled
    try:
        assert pool.enable(2) is not None
        assert pool.spread_for(Redactor(KEY).redact_keep_lines) is not None
        assert pool.spread_for(Redactor(KEY).redact) is None  # not the line-keeping one
        assert pool.spread_for(lambda text: text) is None
        own = Redactor(KEY, Detector(builtin_rules()))  # rules given: a worker could not make them
        assert pool.spread_for(own.redact_keep_lines) is None
        rules = tmp_path / "rules.toml"  # an operator's rules: a worker would read the file again
        rules.write_text("[[rules]]\nid = 'zeta-token'\nregex = '''zeta_[0-9]{12}'''\nkeywords = ['zeta_']\n")
        monkeypatch.setenv("CANAL_REDACT_RULES", str(rules))
        assert pool.spread_for(Redactor(KEY).redact_keep_lines) is None
    finally:
        pool.close()
