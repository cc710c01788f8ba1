"""What changed between two versions of the trusted settings, and whether each change loosens them.

A change "tightens" when the new value is at least as strict as the old one on an order we can prove
(strict over standard, human over agent, no network over an egress allowlist over bridge, an allowlist
losing entries, smaller limits, a mount dropped or made read-only...). Anything we cannot order
(another image, another user, new environment variables, another rule file) counts as loosening: a
person approves it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from pydantic import ValidationError

from canal.runtime.settings.config import ProjectLimits
from canal.sandbox.egress import NetworkSpec

# Settings that never need approval: they change what the agent reads, not what it may do.
FREE_SECTIONS = ("presenter",)
FREE_SETTINGS = ("sandbox.labels",)
# Settings compared as whole values (dicts and lists are not walked into).
WHOLE = ("sandbox.env", "sandbox.labels", "sandbox.mounts", "policy.files", "mount_roots",
         "approvals.approvers", "sandbox.network")
POLICY_CONTENT = "policy files content"

_RANKS: dict[str, tuple[str, ...]] = {  # least strict first
    "policy.profile": ("autonomous", "standard", "strict"),
    "policy.approval": ("agent", "human"),
    "workspace": ("rw", "ro", "none"),
    "sandbox.runtime": ("runc", "runsc"),
}
_MORE_IS_TIGHTER = ("unattended", "sandbox.read_only_root", "sandbox.cap_drop_all",
                    "sandbox.no_new_privileges", "sandbox.init")
_LESS_IS_TIGHTER = ("sandbox.ttl_s", "policy.token_ttl_s", "timeouts.command")
# settings of sections counted only where set (snapshot.LATER_SECTIONS): absent is the default
_DEFAULTED = {"limits.sandboxes": ProjectLimits().sandboxes}


@dataclass(frozen=True)
class Change:
    setting: str
    before: Any
    after: Any
    loosens: bool

    def to_json(self) -> dict[str, Any]:
        return {"setting": self.setting, "before": self.before, "after": self.after, "loosens": self.loosens}


def flatten(settings: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in settings.items():
        name = f"{prefix}{key}"
        if isinstance(value, Mapping) and name not in WHOLE:
            out.update(flatten(value, f"{name}."))
        else:
            out[name] = value
    return out


def _ranked(order: tuple[str, ...], before: Any, after: Any) -> bool:
    return before in order and after in order and order.index(after) >= order.index(before)


def _mounts_tighter(before: Any, after: Any) -> bool:
    """Every new mount was there before, same source and target, and is no more writable."""
    old = {(m["source"], m["target"]): m.get("read_only", True) for m in before or []}
    for mount in after or []:
        key = (mount["source"], mount["target"])
        if key not in old or (old[key] and not mount.get("read_only", True)):
            return False
    return True


def _network_tighter(before: Any, after: Any) -> bool:
    """No network over an allowlist over a bridge; between allowlists, every new entry is covered by an
    old one (same host, or a wildcard naming it, and no new port). Anything unreadable loosens."""
    try:
        old, new = NetworkSpec.model_validate(before), NetworkSpec.model_validate(after)
    except ValidationError:
        return False
    return new.within(old)


def _subset(before: Any, after: Any) -> bool:
    return set(after or []) <= set(before or [])


def _number_tighter(before: Any, after: Any) -> bool:
    return isinstance(before, int | float) and isinstance(after, int | float) and after <= before


def _optional_limit_tighter(before: Any, after: Any) -> bool:
    """``None`` is no limit at all: any limit tightens it; removing one loosens."""
    if after is None:
        return before is None
    return before is None or _number_tighter(before, after)


def _rule(setting: str) -> Callable[[Any, Any], bool] | None:
    if setting in _RANKS:
        order = _RANKS[setting]
        return lambda b, a: _ranked(order, b, a)
    if setting in _MORE_IS_TIGHTER:
        return lambda b, a: bool(a) >= bool(b)
    if setting in _LESS_IS_TIGHTER or setting.startswith(("sandbox.limits.", "storage.")):
        return _number_tighter
    if setting == "timeouts.idle":
        return _optional_limit_tighter
    if setting in _DEFAULTED:
        default = _DEFAULTED[setting]
        return lambda b, a: _number_tighter(default if b is None else b, default if a is None else a)
    if setting == "sandbox.mounts":
        return _mounts_tighter
    if setting == "sandbox.network":
        return _network_tighter
    if setting == "mount_roots":
        return _subset
    return None


def tightens(setting: str, before: Any, after: Any) -> bool:
    if setting in FREE_SETTINGS:
        return True
    rule = _rule(setting)
    return rule is not None and rule(before, after)


def compare(before: Mapping[str, Any], after: Mapping[str, Any],
            policy_before: Mapping[str, str], policy_after: Mapping[str, str]) -> list[Change]:
    """Every trusted setting that differs, in a stable order; ``loosens`` on each."""
    old, new = flatten(before), flatten(after)
    changes = [Change(name, old.get(name), new.get(name), not tightens(name, old.get(name), new.get(name)))
               for name in sorted(old.keys() | new.keys()) if old.get(name) != new.get(name)]
    edited = sorted(name for name in policy_before.keys() & policy_after.keys()
                    if policy_before[name] != policy_after[name])
    if edited:
        changes.append(Change(POLICY_CONTENT, None, edited, loosens=True))
    return changes
