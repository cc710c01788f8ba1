"""What typing the session agent's protocol costs per command, next to bare JSON, in one run.

    python bench/bench_protocol.py

Per command the host builds a request (``protocol.run_command``, the quota added), encodes its header, and
checks the agent's final reply (``protocol.parse_reply`` into ``RunReply``, then its state). The
baseline does the least any protocol must: ``json.dumps`` of the same header as a dict and
``json.loads`` of the same reply. Rounds alternate the two; the figure is the median per call.
"""

from __future__ import annotations

import json
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from canal.sandbox.protocol import RunReply, WorkspaceQuota, parse_reply, run_command  # noqa: E402

QUOTA = WorkspaceQuota(path="/workspace", bytes=1 << 30)
ENV = {f"GIT_CONFIG_KEY_{i}": f"core.hooksPath{i}" for i in range(12)}  # what git's guard passes
STATE = {"cwd": "/workspace/src", "changed": ["PATH", "VIRTUAL_ENV"], "path": "/x/bin:/usr/bin",
         "digest": "0" * 32}
REPLY = json.dumps({"id": "0123456789abcdef", "state": STATE, "reason": "exited", "exit_code": 0,
                    "survivors": [], "oom_kills": 0, "pid_limit_hits": 0, "swept": 0}).encode()


def typed() -> None:
    request = run_command("pytest -q", timeout_s=600, idle_timeout_s=120, env=ENV, expect_state="d" * 32)
    request = request.model_copy(update={"quota": QUOTA})
    json.dumps(dict(request.wire(), id="0123456789abcdef", stdin_len=0))
    reply = parse_reply(REPLY, RunReply, "0123456789abcdef")
    assert reply.state is not None
    reply.state.session()


def bare() -> None:
    header = {"op": "run", "shell": True, "command": "pytest -q", "timeout_s": 600, "idle_timeout_s": 120,
              "env": ENV, "expect_state": "d" * 32, "quota": {"path": "/workspace", "bytes": 1 << 30}}
    json.dumps(dict(header, id="0123456789abcdef", stdin_len=0))
    json.loads(REPLY)


def per_call_us(fn: Callable[[], None], n: int = 2000) -> float:
    start = time.perf_counter()
    for _ in range(n):
        fn()
    return (time.perf_counter() - start) / n * 1e6


def main() -> None:
    samples: dict[str, list[float]] = {"typed": [], "bare json": []}
    for i in range(30):
        order = [("typed", typed), ("bare json", bare)]
        for name, fn in order if i % 2 else reversed(order):
            samples[name].append(per_call_us(fn))
    for name, values in samples.items():
        print(f"{name:10} median {statistics.median(values):6.1f} us per command "
              f"(min {min(values):.1f}, max {max(values):.1f})")
    extra = statistics.median(samples["typed"]) - statistics.median(samples["bare json"])
    print(f"typed protocol costs {extra:.1f} us more per command")


if __name__ == "__main__":
    main()
