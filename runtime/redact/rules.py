"""The gitleaks default rule set, compiled with ``regex`` under gitleaks' own semantics.

gitleaks is written in Go: inline flags such as ``(?i)`` in mid-pattern apply to the end of their
group, ``\\w`` and ``\\s`` are ASCII, and ``\\z`` is the end of text. ``regex`` in VERSION1 mode with
ASCII matches those semantics once ``\\z`` is spelled ``\\Z``. Rules that also need a file path
(``path = ...``) cannot apply to command output and are left out; so are path-only allowlists.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any, Literal

import regex

FLAGS = regex.V1 | regex.ASCII
# A match of these rules starts with a run of [\w.-] (at most 50, or 2 x 50) right before one of the
# rule's keywords, so they are tried once at each keyword hit instead of at every text position.
ANCHORED_PREFIXES = (r"(?i)[\w.-]{0,50}?", r"[\w.-]{0,50}?")
DOUBLE_PREFIX = r"[\w.-]{0,50}?(?i:[\w.-]{0,50}?"
# gitleaks gives database-password no keywords; every match contains one of these, so use them.
IMPLIED_KEYWORDS = {"database-password": ("pwd", "db_passw", "database_passw")}
Target = Literal["secret", "match", "line"]


def compile_go(pattern: str) -> regex.Pattern[str]:
    return regex.compile(pattern.replace(r"\z", r"\Z"), FLAGS)


@dataclass(frozen=True)
class Allowlist:
    target: Target
    regexes: tuple[regex.Pattern[str], ...]
    stopwords: tuple[str, ...]
    require_all: bool
    needs_path: bool

    def allows(self, secret: str, match: str, line: str) -> bool:
        checks: list[bool] = []
        if self.needs_path:
            checks.append(False)  # no file path exists for command output
        if self.regexes:
            subject = {"secret": secret, "match": match, "line": line}[self.target]
            checks.append(any(r.search(subject) for r in self.regexes))
        if self.stopwords:
            lowered = secret.lower()
            checks.append(any(word in lowered for word in self.stopwords))
        if not checks:
            return False
        return all(checks) if self.require_all else any(checks)


@dataclass(frozen=True)
class Rule:
    id: str
    pattern: regex.Pattern[str]
    secret_group: int
    entropy: float
    keywords: tuple[str, ...]
    allowlists: tuple[Allowlist, ...]
    anchored: bool = False
    prefix_limit: int = 0  # anchored rules: how many [\w.-] characters may precede the keyword


@dataclass(frozen=True)
class RuleSet:
    rules: tuple[Rule, ...]
    global_allow: Allowlist
    skipped: tuple[str, ...]  # rule ids that need a file path


def _allowlist(raw: dict[str, Any]) -> Allowlist:
    return Allowlist(
        target=raw.get("regexTarget", "secret"),
        regexes=tuple(compile_go(p) for p in raw.get("regexes", ())),
        stopwords=tuple(w.lower() for w in raw.get("stopwords", ())),
        require_all=raw.get("condition", "OR").upper() == "AND",
        needs_path=bool(raw.get("paths")),
    )


def _rule(raw: dict[str, Any]) -> Rule:
    implied = IMPLIED_KEYWORDS.get(raw["id"], ())
    return Rule(
        id=raw["id"],
        pattern=compile_go(raw["regex"]),
        secret_group=int(raw.get("secretGroup", 0)),
        entropy=float(raw.get("entropy", 0.0)),
        keywords=tuple(k.lower() for k in raw.get("keywords", implied)),
        allowlists=tuple(_allowlist(a) for a in raw.get("allowlists", ())),
        anchored=raw["regex"].startswith(ANCHORED_PREFIXES) and bool(raw.get("keywords", implied)),
        prefix_limit=100 if raw["regex"].startswith(DOUBLE_PREFIX) else 50,
    )


def parse_rules(text: str) -> RuleSet:
    data = tomllib.loads(text)
    usable = [r for r in data["rules"] if "regex" in r and "path" not in r]
    skipped = tuple(r["id"] for r in data["rules"] if r not in usable)
    glob = dict(data.get("allowlist", {}))
    glob.pop("paths", None)  # path allowlists describe files, not output
    return RuleSet(tuple(_rule(r) for r in usable), _allowlist(glob), skipped)


@cache
def default_rules() -> RuleSet:
    """The shipped gitleaks rule set, compiled once per process."""
    text = resources.files("runtime.redact").joinpath("gitleaks.toml").read_text(encoding="utf-8")
    return parse_rules(text)
