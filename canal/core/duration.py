"""The one duration syntax of Canal's options (``canal audit show --since``, ``canal trash purge
--older-than``...): a whole number and one unit, ``s``, ``m``, ``h``, ``d`` or ``w``."""

from __future__ import annotations

import re
from datetime import timedelta

from canal.core.errors import CanalError, ExitCode

UNITS = {"s": "seconds", "m": "minutes", "h": "hours", "d": "days", "w": "weeks"}
EXAMPLES = "90s, 15m, 12h, 30d, 2w"
_PATTERN = re.compile(r"^(\d{1,6})([smhdw])$")


class InvalidDuration(CanalError):
    """A duration option that is not a number and one unit (s, m, h, d, w)."""

    code = "INVALID_DURATION"
    exit_code = ExitCode.USAGE


def parse_duration(text: str, option: str = "the duration") -> timedelta:
    """``90s``, ``15m``, ``12h``, ``30d`` or ``2w`` as a ``timedelta``; ``INVALID_DURATION`` otherwise."""
    match = _PATTERN.match(text.strip())
    if match is None:
        msg = f"{option} {text!r} is not a duration: use a whole number and one unit, s, m, h, d or w " \
              f"({EXAMPLES})."
        raise InvalidDuration(msg, hint="give a whole number and one unit, such as 30d or 2w",
                              details={"option": option, "value": text})
    return timedelta(**{UNITS[match.group(2)]: int(match.group(1))})
