"""Allowlist entries: what is accepted, what is refused at load and why, and how entries compare."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from canal.sandbox.egress import AllowEntry, NetworkSpec
from canal.sandbox.spec import SandboxSpec


@pytest.mark.parametrize(("text", "host", "ports"), [
    ("pypi.org", "pypi.org", (80, 443)),
    ("github.com:443", "github.com", (443,)),
    ("*.pythonhosted.org", "*.pythonhosted.org", (80, 443)),
    ("Registry.NPMJS.org.", "registry.npmjs.org", (80, 443)),
])
def test_accepted_entries(text: str, host: str, ports: tuple[int, ...]) -> None:
    entry = AllowEntry.model_validate(text)
    assert (entry.host, entry.ports) == (host, ports)


@pytest.mark.parametrize(("text", "why"), [
    ("exa mple.org", "not HOST"), ("foo*.org", "not a host name"), ("-bad.org", "not a host name"),
    ("pypi.org:99999", "port out of range"), ("pypi.org:", "not HOST"), ("a..b", "not a host name"),
    ("10.0.0.1", "IP literal"), ("[::1]:443", "IP literal"),
    ("*.com", "wildcard wider"), ("*.*.example.org", "wildcard wider"), ("*", "wildcard wider"),
])
def test_refused_entries(text: str, why: str) -> None:
    with pytest.raises(ValidationError) as info:
        AllowEntry.model_validate(text)
    assert why in str(info.value)


def test_wide_entries_need_an_explicit_mark() -> None:
    assert AllowEntry.model_validate({"host": "10.0.0.1", "port": 443, "wide": True}).ports == (443,)
    assert AllowEntry.model_validate({"host": "*.com", "wide": True}).host == "*.com"
    assert AllowEntry.model_validate({"host": "[::1]", "wide": True}).label == "[::1]"
    with pytest.raises(ValidationError, match="IP literal"):
        AllowEntry.model_validate({"host": "10.0.0.1"})


@pytest.mark.parametrize(("pattern", "host", "expected"), [
    ("*.pythonhosted.org", "files.pythonhosted.org", True),
    ("*.pythonhosted.org", "a.b.pythonhosted.org", False),
    ("*.pythonhosted.org", "pythonhosted.org", False),
    ("*.pythonhosted.org", "evilpythonhosted.org", False),
    ("*.*.example.org", "a.b.example.org", True),
    ("*.*.example.org", "b.example.org", False),
    ("*", "anything.at.all", True),
    ("pypi.org", "PyPI.org.", True),
    ("pypi.org", "x.pypi.org", False),
])
def test_wildcards_stand_for_one_label_each(pattern: str, host: str, expected: bool) -> None:
    entry = AllowEntry.model_validate({"host": pattern, "wide": True})
    assert entry.matches(host) is expected


def test_network_shapes() -> None:
    assert NetworkSpec.model_validate("none").mode == "none"
    spec = NetworkSpec.model_validate({"mode": "allowlist", "allow": ["pypi.org"]})
    assert [e.label for e in spec.allow] == ["pypi.org"]
    with pytest.raises(ValidationError, match="need mode: allowlist"):
        NetworkSpec.model_validate({"mode": "bridge", "allow": ["pypi.org"]})


def test_a_network_without_allowlist_is_saved_as_the_word_it_always_was() -> None:
    """Settings approved before allowlists existed keep their digest."""
    assert SandboxSpec().model_dump(mode="json")["network"] == "none"
    assert SandboxSpec(network="bridge").model_dump(mode="json")["network"] == "bridge"  # type: ignore[arg-type]
    listed = SandboxSpec(network={"mode": "allowlist", "allow": ["github.com:443"]})  # type: ignore[arg-type]
    dumped = listed.model_dump(mode="json")["network"]
    assert dumped == {"mode": "allowlist", "allow": [{"host": "github.com", "port": 443, "wide": False}]}
    assert SandboxSpec.model_validate(listed.model_dump(mode="json")) == listed


def allow(*entries: object) -> NetworkSpec:
    return NetworkSpec.model_validate({"mode": "allowlist", "allow": list(entries)})


@pytest.mark.parametrize(("narrow", "wide", "expected"), [
    (NetworkSpec(), allow("pypi.org"), True),
    (allow("pypi.org"), NetworkSpec(mode="bridge"), True),
    (NetworkSpec(mode="bridge"), allow("pypi.org"), False),
    (allow("pypi.org"), NetworkSpec(), False),
    (allow("pypi.org:443"), allow("pypi.org"), True),
    (allow("pypi.org"), allow("pypi.org:443"), False),
    (allow("files.pythonhosted.org"), allow("*.pythonhosted.org"), True),
    (allow("*.pythonhosted.org"), allow("files.pythonhosted.org"), False),
    (allow("a.b.example.org"), allow("*.example.org"), False),
    (allow(), allow("pypi.org"), True),
    (allow("pypi.org", "github.com"), allow("pypi.org"), False),
    (allow({"host": "10.0.0.1", "wide": True}), allow({"host": "*", "wide": True}), False),
])
def test_within_orders_networks_by_what_they_reach(narrow: NetworkSpec, wide: NetworkSpec,
                                                  expected: bool) -> None:
    assert narrow.within(wide) is expected


def test_a_bad_entry_is_refused_at_load_naming_its_line() -> None:
    from canal.runtime.errors import ConfigError
    from canal.runtime.settings.config import parse_config

    text = ("sandbox:\n  network:\n    mode: allowlist\n    allow:\n"
            "      - pypi.org\n      - '*.com'\n      - 10.0.0.1\n")
    with pytest.raises(ConfigError) as info:
        parse_config(text)
    assert "canal.yaml:6: sandbox.network.allow.1:" in info.value.message
    assert "canal.yaml:7: sandbox.network.allow.2:" in info.value.message
    assert "wide: true" in info.value.message
