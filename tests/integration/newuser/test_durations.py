"""Finding 12: one duration syntax for every option that takes one."""

from __future__ import annotations

import json

from first_hour import User


def test_audit_since_and_trash_older_than_read_the_same_durations(user: User) -> None:
    root = user.project("app")
    for spec in ("90s", "15m", "12h", "7d", "1w"):
        since = user.canal(root, "audit", "show", "--since", spec, "--json")
        assert since.returncode == 0, (spec, since.stdout, since.stderr)
        purge = user.canal(root, "trash", "purge", "--older-than", spec, "--json")
        assert purge.returncode == 0, (spec, purge.stdout, purge.stderr)
    bad_since = user.canal(root, "audit", "show", "--since", "1y")
    bad_purge = user.canal(root, "trash", "purge", "--older-than", "1y")
    assert bad_since.returncode == bad_purge.returncode == 2
    first = bad_since.stderr.splitlines()[:2]
    assert first[0] == "INVALID_DURATION"
    same = first[1].replace("--since", "--older-than")
    assert bad_purge.stderr.splitlines()[:2] == ["INVALID_DURATION", same]
    as_json = json.loads(user.canal(root, "audit", "show", "--since", "2026-01-01", "--json").stdout)
    assert as_json["status"] == "ok"
