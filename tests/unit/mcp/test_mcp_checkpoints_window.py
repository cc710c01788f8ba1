"""The ``checkpoints`` tool lists the newest checkpoints, and says how many older ones it left out: an
agent's day keeps thousands, and the whole list in one reply cost the agent its context."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from canal.mcp.errors import ARGUMENT_INVALID
from canal.mcp.reversible import Reversible
from canal.mcp.tools import BY_NAME, parse_args
from canal.runtime.api import Canal
from canal.runtime.services import Services
from tests.error_codes import raises_code


@pytest.fixture
def project(canal_home: Path) -> Path:
    project = canal_home / "project"
    project.mkdir()
    (project / "a.txt").write_text("a\n")
    return project


def _listed(project: Path, raw: dict[str, Any]) -> tuple[list[str], str, dict[str, Any]]:
    reply = Reversible(Canal(project)).checkpoints(parse_args(BY_NAME["checkpoints"], raw))
    ids = [line.split()[0] for line in reply.text.splitlines() if line.startswith("cp-")]
    return ids, reply.text, reply.data


def test_the_newest_twenty_by_default_and_the_rest_counted(project: Path) -> None:
    store = Services(project).checkpoints
    ids = [store.take(kind="run", command=f"step {i}").id for i in range(25)]
    listed, text, data = _listed(project, {})
    assert listed == ids[-20:]
    assert "5 older checkpoints not listed: call checkpoints with a higher limit (at most 500)" in text
    assert [r["checkpoint"]["id"] for r in data["checkpoints"]] == ids[-20:]
    assert data["older"] == 5
    listed, text, data = _listed(project, {"limit": "3"})
    assert listed == ids[-3:]
    assert data["older"] == 22
    listed, text, data = _listed(project, {"limit": 500})
    assert listed == ids
    assert "older" not in text


@pytest.mark.parametrize("limit", [0, 501, "many"])
def test_a_limit_out_of_range_is_refused_with_its_bounds(limit: Any) -> None:
    with raises_code(ARGUMENT_INVALID, match="1 to 500"):
        parse_args(BY_NAME["checkpoints"], {"limit": limit})
