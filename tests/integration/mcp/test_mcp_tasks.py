"""Background tasks over MCP: an agent (the mcp SDK's stdio client) starts a task, polls it, reads its
output, and cancels another, against a real sandbox."""

from __future__ import annotations

import re
import time
from pathlib import Path
from typing import Any

import pytest

from tests.integration.mcp.conftest import McpClient, data_of, text_of


@pytest.fixture(scope="module")
def agent(serve: Any) -> tuple[McpClient, Path]:
    client, project = serve()
    return client, project


def test_an_agent_starts_polls_reads_and_cancels_tasks(agent: tuple[McpClient, Path]) -> None:
    client, _ = agent
    started = client.call("task_start", {"command": "for i in $(seq 5); do echo line $i; sleep 1; done",
                                         "name": "count"})
    assert not started.is_error, text_of(started)
    task_id = data_of(started)["task"]["id"]
    assert text_of(started).startswith(f"started task {task_id} (count) in sandbox default: ")
    forever = client.call("task_start", {"command": "sleep 1000", "name": "forever"})
    forever_id = data_of(forever)["task"]["id"]

    seen, offset, polls = "", 0, 0
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        polled = client.call("task_show", {"task_id": task_id, "since_offset": offset})
        assert not polled.is_error, text_of(polled)
        data = data_of(polled)
        seen += data["text"]
        offset = data["next_offset"]
        polls += 1
        if data["task"]["state"] != "running" and offset >= data["task"]["output_bytes"]:
            break
        time.sleep(0.5)
    assert seen == "".join(f"line {i}\n" for i in range(1, 6))
    assert polls > 2  # it was read while it ran, not only at the end

    shown = text_of(client.call("task_show", {"task_id": "count"}))
    assert shown.startswith("line 1\nline 2\nline 3\nline 4\nline 5\n[exit:0 | ")
    listed = text_of(client.call("task_list", {}))
    assert re.search(rf"^{task_id} \(count\) exited exit:0 ", listed, re.MULTILINE)
    assert re.search(rf"^{forever_id} \(forever\) running ", listed, re.MULTILINE)

    cancelled = client.call("task_cancel", {"task_id": "forever"})
    assert not cancelled.is_error, text_of(cancelled)
    assert data_of(cancelled)["task"]["state"] == "killed"
    again = client.call("task_cancel", {"task_id": forever_id})
    assert again.is_error
    assert text_of(again).startswith("TASK_ALREADY_ENDED\n")


def test_wait_returns_while_a_task_runs_and_reports_its_end(agent: tuple[McpClient, Path]) -> None:
    client, _ = agent
    started = client.call("task_start", {"command": "sleep 3; echo done; exit 4"})
    task_id = data_of(started)["task"]["id"]
    early = client.call("task_wait", {"task_id": task_id, "timeout": 0.5})
    assert not early.is_error
    assert "still running after 0.5s of waiting" in text_of(early)
    final = client.call("task_wait", {"task_id": task_id, "timeout": 60})
    assert text_of(final).startswith("done\n[exit:4 | ")
    missing = client.call("task_show", {"task_id": "t-000000"})
    assert missing.is_error
    assert text_of(missing).startswith("TASK_NOT_FOUND\n")


def test_an_agent_cannot_forward_to_an_address_other_than_loopback(agent: tuple[McpClient, Path]) -> None:
    client, _ = agent
    for spec in ("0.0.0.0:18080:8000", "[::]:18080:8000", "10.0.0.5:18080:8000"):
        refused = client.call("task_start", {"command": "sleep 4242", "forward": [spec]})
        assert refused.is_error, spec
        assert text_of(refused).startswith("FORWARD_ADDRESS_REFUSED\n"), text_of(refused)
    listed = text_of(client.call("task_list", {}))
    assert "sleep 4242" not in listed  # nothing started
