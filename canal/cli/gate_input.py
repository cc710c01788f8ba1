"""``--gate-data``: a step's field values as JSON, given inline, from a file (``@FILE``) or from stdin
(``-``). Inline values are on the command line, where ``ps`` and shell history see them: a sensitive
field given that way is accepted with a warning that names the safer forms."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import click

from canal.core.display import visible
from canal.workflows.errors import GATE_REJECTED
from canal.workflows.views import StepView

HINT = "canal workflow current   (lists the fields to collect)"
MAX_BYTES = 1024 * 1024


def read_gate_data(raw: str | None) -> tuple[dict[str, Any], bool]:
    """The values, and whether they came from the command line itself."""
    if raw is None:
        return {}, False
    inline = not (raw == "-" or raw.startswith("@"))
    text = raw if inline else _read(raw)
    try:
        data = json.loads(text)
    except ValueError as exc:
        msg = f"--gate-data is not JSON: {exc}"
        raise GATE_REJECTED(msg, hint=HINT) from None
    if not isinstance(data, dict):
        msg = "--gate-data must be a JSON object of field values"
        raise GATE_REJECTED(msg, hint=HINT)
    return data, inline


def _read(raw: str) -> str:
    where = "stdin" if raw == "-" else raw[1:]
    try:
        if raw == "-":
            data = sys.stdin.buffer.read(MAX_BYTES + 1)
        else:
            with Path(raw[1:]).expanduser().open("rb") as fh:
                data = fh.read(MAX_BYTES + 1)
    except OSError as exc:
        msg = f"--gate-data {visible(raw)}: {exc.strerror or exc.__class__.__name__}"
        raise GATE_REJECTED(msg, hint="give a readable file (@FILE), - for stdin, or the JSON itself") \
            from None
    if len(data) > MAX_BYTES:
        msg = f"--gate-data from {visible(where)} is over {MAX_BYTES} bytes"
        raise GATE_REJECTED(msg, hint=HINT)
    return data.decode("utf-8", "replace")


def warn_sensitive_on_argv(step: StepView | None, data: dict[str, Any]) -> None:
    """A warning on stderr for each sensitive field of ``step`` given on the command line."""
    if step is None:
        return
    named = sorted(f.name for f in step.fields if f.sensitive and f.name in data)
    if named:
        fields = ", ".join(visible(n) for n in named)
        click.echo(f"canal: warning: --gate-data on the command line holds sensitive field(s) {fields}: "
                   "ps and shell history can see them. Pass them in a file (--gate-data @FILE, mode "
                   "0600) or on stdin (--gate-data -) instead.", err=True)
