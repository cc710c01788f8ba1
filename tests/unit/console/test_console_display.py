"""The web console shows every hidden character of a command escaped (issue 39, finding 2): the page a
person approves from cannot be spoofed by a carriage return, a bidi override or a separator."""

from __future__ import annotations

import html
import re

from console_helpers import Setup, login

from tests.hidden_chars import HIDDEN, assert_shown_escaped

SPOOF = "rm -rf build /tmp/zz # \r" + " " * 40 + "$ ls -la /tmp/zz "


def test_the_approvals_page_shows_hidden_characters_escaped(setup: Setup) -> None:
    client = setup.client()
    login(setup, client)
    token = setup.pending(SPOOF + "".join(HIDDEN))
    page = client.get("/approvals").text
    row = re.search(rf'<tr class="pending" data-token="{token}">(.*?)</tr>', page, re.S)
    assert row is not None, page
    command = re.search(r'<code class="command">(.*?)</code>', row.group(1), re.S)
    assert command is not None, row.group(1)
    shown = html.unescape(command.group(1))
    assert shown.startswith("rm -rf build /tmp/zz # \\r ")
    assert_shown_escaped(shown)
