"""The egress allowlist: which hosts and ports a sandbox may reach through its proxy.

An entry is ``host`` (ports 80 and 443) or ``host:port``. ``host`` is a DNS name, or ``*.`` and a name
of at least two labels (exactly one label more: ``*.pythonhosted.org`` allows
``files.pythonhosted.org``, not ``a.b.pythonhosted.org``). An IP literal, a wildcard over a top-level
name (``*.com``) or anything wider (``*.*.example.org``, ``*``) is refused unless the entry is written
as a mapping with ``wide: true``: an IP address bypasses every name check, and a wide wildcard allows a
whole registry's worth of hosts, so a person must say so explicitly. Each leading ``*.`` stands for
exactly one label; ``*`` alone for any host.
"""

from __future__ import annotations

import ipaddress
import re
from typing import Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SerializerFunctionWrapHandler,
    field_validator,
    model_serializer,
    model_validator,
)

from canal.sandbox.egress_upstream import check_upstream_url

DEFAULT_PORTS = (80, 443)
_LABEL = r"(?!-)[a-z0-9-]{1,63}(?<!-)"
_NAME = re.compile(rf"^{_LABEL}(\.{_LABEL})*$")
_STARS = re.compile(r"^(\*\.)+|^\*$")
_ENTRY = re.compile(r"^(?P<host>\[[0-9a-fA-F:.]+\]|[^:\s]+)(?::(?P<port>[0-9]{1,5}))?$")
HostKind = Literal["name", "wildcard", "ip", "wide", "malformed"]


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class AllowEntry(_Model):
    """One allowed destination: ``host`` with ``port`` (both 80 and 443 when no port is given)."""

    host: str
    port: int | None = Field(default=None, ge=1, le=65535)
    wide: bool = False  # an IP literal or a wildcard wider than one label, accepted on purpose

    @model_validator(mode="before")
    @classmethod
    def _from_string(cls, value: Any) -> Any:
        if isinstance(value, str):
            return parse_entry(value)
        if isinstance(value, dict) and isinstance(value.get("host"), str):
            return {**value, "host": value["host"].strip().lower().rstrip(".").strip("[]")}
        return value

    @model_validator(mode="after")
    def _check(self) -> AllowEntry:
        kind = host_kind(self.host)
        if kind == "malformed":
            msg = (f"not a host name: {self.host!r} (use a DNS name such as pypi.org, or *.example.org, "
                   "optionally with :PORT)")
            raise ValueError(msg)
        if kind in ("ip", "wide") and not self.wide:
            what = "an IP literal" if kind == "ip" else "a wildcard wider than one label under a domain"
            msg = (f"{self.host!r} is {what}; allow names instead, or write it as "
                   f"{{host: {self.host!r}, wide: true}} if you mean it")
            raise ValueError(msg)
        return self

    @property
    def ports(self) -> tuple[int, ...]:
        return DEFAULT_PORTS if self.port is None else (self.port,)

    @property
    def label(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return host if self.port is None else f"{host}:{self.port}"

    @property
    def is_ip(self) -> bool:
        return host_kind(self.host) == "ip"

    def matches(self, host: str) -> bool:
        """Whether a request for ``host`` is one this entry names (ports aside)."""
        host = host.lower().rstrip(".")
        if not self.host.startswith("*"):
            return host == self.host
        if self.host == "*":
            return True
        stars = self.host.count("*.")
        labels = host.split(".")
        rest = self.host[2 * stars:]
        return len(labels) > stars and ".".join(labels[stars:]) == rest and all(labels[:stars])

    def covers(self, other: AllowEntry) -> bool:
        """Whether every destination ``other`` allows, this entry allows too."""
        if not set(other.ports) <= set(self.ports):
            return False
        if other.host == self.host:
            return True
        return "*" not in other.host and not other.is_ip and self.matches(other.host)


def parse_entry(text: str) -> dict[str, Any]:
    match = _ENTRY.match(text.strip())
    if match is None:
        msg = f"not HOST or HOST:PORT: {text!r}"
        raise ValueError(msg)
    host = match["host"].lower().rstrip(".")
    port = match["port"]
    if port is not None and not 1 <= int(port) <= 65535:
        msg = f"port out of range in {text!r}"
        raise ValueError(msg)
    return {"host": host.strip("[]"), "port": int(port) if port else None}


def host_kind(host: str) -> HostKind:
    try:
        ipaddress.ip_address(host)
    except ValueError:
        pass
    else:
        return "ip"
    stars = _STARS.match(host)
    if stars is None:
        return "name" if _NAME.match(host) else "malformed"
    rest = host[stars.end():]
    if rest and not _NAME.match(rest):
        return "malformed"
    one_label = stars.group() == "*."
    return "wildcard" if one_label and "." in rest else "wide"


class NetworkSpec(_Model):
    """``none`` (no network), ``bridge`` (Docker's default bridge: anywhere) or ``allowlist``.

    Written in canal.yaml as a word (``network: none``) or a mapping (``{mode: allowlist, allow: [...]}``);
    saved the same way (a word unless it is an allowlist), so settings approved before allowlists
    existed keep their digest."""

    mode: Literal["none", "bridge", "allowlist"] = "none"
    allow: tuple[AllowEntry, ...] = ()
    # a corporate proxy the egress proxy and image builds go out through (egress_upstream), and whether
    # the package mirrors canal.yaml's image section names are allowed too (canal.runtime.settings.config)
    upstream_proxy: str | None = None
    allow_mirrors: bool = False

    @model_validator(mode="before")
    @classmethod
    def _from_string(cls, value: Any) -> Any:
        return {"mode": value} if isinstance(value, str) else value

    @model_validator(mode="after")
    def _check(self) -> NetworkSpec:
        if (self.allow or self.allow_mirrors) and self.mode != "allowlist":
            msg = f"allow entries need mode: allowlist (mode is {self.mode})"
            raise ValueError(msg)
        if self.upstream_proxy is not None and self.mode == "bridge":
            msg = ("upstream_proxy needs mode: allowlist (or none, for image builds only): a bridge sandbox "
                   "goes out directly, past any proxy")
            raise ValueError(msg)
        return self

    @field_validator("upstream_proxy")
    @classmethod
    def _upstream(cls, value: str | None) -> str | None:
        return None if value is None else check_upstream_url(value)

    @model_serializer(mode="wrap")
    def _as_word(self, handler: SerializerFunctionWrapHandler) -> Any:
        """A word for none and bridge; the settings added later only where set (approvals stay valid)."""
        if self.mode != "allowlist" and self.upstream_proxy is None:
            return self.mode
        data = handler(self)
        for name, default in (("upstream_proxy", None), ("allow_mirrors", False)):
            if data.get(name) == default:
                data.pop(name, None)
        return data

    def within(self, wider: NetworkSpec) -> bool:
        """Whether this network reaches nothing ``wider`` does not (no network < allowlist < bridge)."""
        if self.mode == "none" or wider.mode == "bridge":
            return True
        if self.mode == "bridge" or wider.mode == "none":
            return False
        return all(any(old.covers(new) for old in wider.allow) for new in self.allow)
