"""Small rendering helpers shared by CLI modules: JSON out, check marks, progress."""

from __future__ import annotations

import json
import sys
from typing import Any

import click


def echo_json(data: Any) -> None:
    click.echo(json.dumps(data, indent=2, default=str, ensure_ascii=False))


def stderr_is_tty() -> bool:
    return sys.stderr.isatty()
