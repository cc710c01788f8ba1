"""Ages such as ``30d`` for ``canal trash purge --older-than``."""

from __future__ import annotations

import re
from datetime import timedelta

from canal.core.next import act
from canal.runtime.trash.errors import InvalidDuration

_UNITS = {"s": "seconds", "m": "minutes", "h": "hours", "d": "days", "w": "weeks"}
_PATTERN = re.compile(r"^(\d{1,6})([smhdw])$")


def parse_age(text: str) -> timedelta:
    """``90s``, ``15m``, ``12h``, ``30d`` or ``2w``."""
    match = _PATTERN.match(text.strip())
    if match is None:
        msg = f"{text!r} is not an age; use a number and one unit: s, m, h, d or w (e.g. 30d)."
        raise InvalidDuration(msg, next=act("trash.purge", older_than="30d"), details={"value": text})
    return timedelta(**{_UNITS[match.group(2)]: int(match.group(1))})
