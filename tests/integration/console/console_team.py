"""The agent's and the approver's OS users for the console's end-to-end test (tests/integration/approvals/
os_users.py makes them), importable whether or not the approvals tests were collected."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "approvals"))

from os_users import Team as ConsoleTeam
from os_users import made_team

__all__ = ["ConsoleTeam", "made_team"]
