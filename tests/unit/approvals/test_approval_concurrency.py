from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

from canal.host.approvals import ApprovalService, DecisionSummary

KEY = b"a" * 32

REDEEMER = textwrap.dedent("""
    import sys
    from pathlib import Path
    from canal.host.approvals import APPROVAL_REUSED, ApprovalError, ApprovalService
    svc = ApprovalService(Path(sys.argv[1]), b"a" * 32)
    try:
        svc.redeem(sys.argv[2], "rm -rf build", "default", "/workspace", "p1")
    except ApprovalError as exc:
        print("reused" if APPROVAL_REUSED.matches(exc) else exc.code)
    else:
        print("won")
""")


def test_only_one_of_many_concurrent_redeems_wins(tmp_path: Path) -> None:
    svc = ApprovalService(tmp_path, KEY)
    token = svc.request("rm -rf build", "default", "/workspace", "p1", DecisionSummary(("rm",), "")).token
    root = Path(__file__).resolve().parents[3]
    procs = [subprocess.Popen([sys.executable, "-c", REDEEMER, str(tmp_path), token], cwd=root,
                              stdout=subprocess.PIPE, text=True) for _ in range(6)]
    outputs = sorted(p.communicate(timeout=120)[0].strip() for p in procs)
    assert [p.returncode for p in procs] == [0] * 6
    assert outputs == ["reused"] * 5 + ["won"]
