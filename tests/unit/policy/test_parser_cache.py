"""cel-python's parser is loaded from a private cache; a folder others could write is never read."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from canal.policy import parser_cache

PROBE = ("from canal.policy.cel.celenv import environment; env = environment(); "
         "print(env.compile('args.exists(a, a.startsWith(\"-r\")) && size(argv) > 1').pretty())")


def run_probe(cache: Path) -> str:
    env = {**os.environ, "CANAL_CACHE_DIR": str(cache)}
    return subprocess.run([sys.executable, "-c", PROBE], env=env, capture_output=True, text=True,
                          check=True).stdout


def test_the_parser_is_saved_then_loaded_and_parses_the_same(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    built = run_probe(cache)
    saved = list(cache.glob("cel-parser-*.cache"))
    assert len(saved) == 1
    assert cache.stat().st_mode & 0o777 == 0o700
    stamp = saved[0].stat().st_mtime_ns
    loaded = run_probe(cache)
    assert saved[0].stat().st_mtime_ns == stamp  # read, not rebuilt
    assert loaded == built


def test_a_folder_open_to_others_is_not_used(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    loose = tmp_path / "loose"
    loose.mkdir()
    loose.chmod(0o777)
    monkeypatch.setenv("CANAL_CACHE_DIR", str(loose))
    assert parser_cache.cache_dir() is None
    private = tmp_path / "private"
    monkeypatch.setenv("CANAL_CACHE_DIR", str(private))
    assert parser_cache.cache_dir() == private
