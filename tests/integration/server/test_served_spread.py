"""A long output dense with findings is saved by the server, with its redaction workers enabled, as
redacting it in one process saves it, byte for byte (``host.redact.pool``). Whether the workers take
it depends on a core being free at that moment (CI runs other tests beside this one): the unit tests
(tests/unit/redact/test_spread.py) check the workers themselves, byte for byte."""

from __future__ import annotations

import base64
import hashlib
import io
import json
import os
import random
import time
from pathlib import Path
from typing import Any

import pytest
from served_cli import ServedProject

from canal.host.redact import Redactor
from canal.presenter.config import PresenterConfig
from canal.presenter.textclean import clean_text_stream
from canal.runtime.services import Services


def _status(served: ServedProject) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(served.run("server", "status", "--json").stdout)
    return data


def test_a_base64_output_is_saved_by_the_workers_as_one_process_saves_it(
        served: ServedProject, monkeypatch: pytest.MonkeyPatch) -> None:
    data = base64.encodebytes(random.Random(7).randbytes(9 * 1024 * 1024))
    data += b"deploy token=ghp_" + b"a1B2" * 9 + b"\n"
    (served.root / "dump.b64").write_bytes(data)
    assert served.run("run", "--", "true").returncode == 0
    cores = len(os.sched_getaffinity(0))  # the server's too: it is a child of this process's
    deadline = time.monotonic() + 90  # the server enables its workers once quiet, after its preload
    while cores >= 2 and "redaction_workers" not in _status(served) and time.monotonic() < deadline:
        time.sleep(0.5)
    assert ("redaction_workers" in _status(served)) == (cores >= 2)  # none on a single core
    done = served.run("run", "--", "cat dump.b64")
    assert done.returncode == 0, done.stderr
    name = done.stdout.split("Full output: /canal/output/")[1].split()[0]
    for key, value in served.env.items():
        if key.startswith("CANAL_"):
            monkeypatch.setenv(key, value)
    services = Services(served.root)
    saved = (services.outputs_dir("default") / Path(name).name).read_bytes()
    redact = Redactor.from_keys(services.keys).redact_keep_lines
    chunk = PresenterConfig().chunk_bytes
    expected = b"".join(clean_text_stream(io.BytesIO(data), redact, chunk))
    assert hashlib.sha256(saved).digest() == hashlib.sha256(expected).digest()  # no diff of megabytes
    assert b"ghp_" + b"a1B2" * 9 not in saved
