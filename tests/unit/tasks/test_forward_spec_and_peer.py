"""Forward specs (loopback only) and the peer check of a forwarded connection (a real loopback socket)."""

from __future__ import annotations

import os
import socket

import pytest

from canal.runtime.sandboxes.forward.errors import FORWARD_ADDRESS_REFUSED, FORWARD_SPEC_INVALID
from canal.runtime.sandboxes.forward.peer import peer_uid
from canal.runtime.sandboxes.forward.spec import ForwardSpec, parse_forward
from tests.error_codes import raises_code


@pytest.mark.parametrize(("text", "spec"), [
    ("8000", ForwardSpec("127.0.0.1", 8000, 8000)),
    ("8080:8000", ForwardSpec("127.0.0.1", 8080, 8000)),
    ("0:8000", ForwardSpec("127.0.0.1", 0, 8000)),
    ("127.0.0.1:8080:8000", ForwardSpec("127.0.0.1", 8080, 8000)),
    ("127.0.0.2:8080:8000", ForwardSpec("127.0.0.2", 8080, 8000)),
    ("localhost:8080:8000", ForwardSpec("127.0.0.1", 8080, 8000)),
    ("[::1]:8080:8000", ForwardSpec("::1", 8080, 8000)),
])
def test_forward_specs(text: str, spec: ForwardSpec) -> None:
    assert parse_forward(text) == spec


@pytest.mark.parametrize("text", ["0.0.0.0:8080:8000", "[::]:8080:8000", "192.168.1.5:8080:8000",
                                  "example.com:80:80", "[2001:db8::1]:1:2"])
def test_only_loopback_listens(text: str) -> None:
    with raises_code(FORWARD_ADDRESS_REFUSED) as refused:
        parse_forward(text)
    assert "loopback only" in refused.value.message


@pytest.mark.parametrize("text", ["", "abc", "8080:", "1:2:3:4", "8080:0", "70000:80", "80:70000"])
def test_malformed_specs(text: str) -> None:
    with raises_code(FORWARD_SPEC_INVALID):
        parse_forward(text)


def test_the_peer_of_a_loopback_connection_is_found_in_the_kernels_table() -> None:
    for family, address in ((socket.AF_INET, "127.0.0.1"), (socket.AF_INET6, "::1")):
        try:
            listener = socket.socket(family, socket.SOCK_STREAM)
            listener.bind((address, 0))
        except OSError:
            continue  # no IPv6 on this machine
        listener.listen(1)
        client = socket.create_connection(listener.getsockname()[:2])
        accepted, _ = listener.accept()
        try:
            assert peer_uid(accepted) == os.geteuid()
        finally:
            for s in (accepted, client, listener):
                s.close()
