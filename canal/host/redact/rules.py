"""Secret rules in the gitleaks TOML format, compiled with ``regex`` under gitleaks' semantics.

Canal ships its own rule set (``rules.toml``). An operator adds more with ``CANAL_REDACT_RULES`` (one
or more gitleaks-format files separated by ``os.pathsep``, e.g. the upstream gitleaks default config);
those rules run in addition to the built-in ones, never instead of them.

gitleaks is written in Go: inline flags such as ``(?i)`` in mid-pattern apply to the end of their
group, ``\\w`` and ``\\s`` are ASCII, and ``\\z`` is the end of text. ``regex`` in VERSION1 mode with
ASCII matches those semantics once ``\\z`` is spelled ``\\Z``. Rules that also need a file path
(``path = ...``) cannot apply to command output and are left out; so are path-only allowlists.

An operator's file is compiled whole when it is read (a pattern that does not compile is refused then,
naming its rule). The built-in rules compile each pattern when it first runs: most run only when one
of their keywords is in the text, and compiling all 50 took 40-50 ms of a new project's first command
(``tests/unit/redact`` compiles every one).
"""

from __future__ import annotations

import os
import tomllib
from dataclasses import dataclass
from functools import cache, cached_property
from importlib import resources
from pathlib import Path
from typing import Any, Literal

import regex
from pydantic import ValidationError

from canal.core.errors import CanalError
from canal.host.redact.errors import REDACT_RULES_INVALID
from canal.host.redact.schema import RawAllowlist, RawConfig, RawRule

ENV_VAR = "CANAL_REDACT_RULES"
BUILTIN = "rules.toml"
FLAGS = regex.V1 | regex.ASCII
# A match of these rules starts with a run of [\w.-] (at most 50, or 2 x 50) right before one of the
# rule's keywords, so they are tried once at each keyword hit instead of at every text position.
ANCHORED_PREFIXES = (r"(?i)[\w.-]{0,50}?", r"[\w.-]{0,50}?")
DOUBLE_PREFIX = r"[\w.-]{0,50}?(?i:[\w.-]{0,50}?"
# upstream gitleaks gives database-password no keywords; every match contains one of these.
IMPLIED_KEYWORDS = {"database-password": ("pwd", "db_passw", "database_passw")}
Target = Literal["secret", "match", "line"]


def python_pattern(pattern: str) -> str:
    """A gitleaks (Go) pattern as ``regex`` reads it under ``FLAGS``."""
    return pattern.replace(r"\z", r"\Z")


def compile_go(pattern: str) -> regex.Pattern[str]:
    return regex.compile(python_pattern(pattern), FLAGS)


@dataclass(frozen=True)
class Allowlist:
    target: Target
    expressions: tuple[str, ...]  # python_pattern's, compiled on first use (``regexes``)
    stopwords: tuple[str, ...]
    require_all: bool
    needs_path: bool

    @cached_property
    def regexes(self) -> tuple[regex.Pattern[str], ...]:
        return tuple(regex.compile(e, FLAGS) for e in self.expressions)

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
    expression: str  # python_pattern's, compiled on first use (``pattern``)
    secret_group: int
    entropy: float
    keywords: tuple[str, ...]
    allowlists: tuple[Allowlist, ...]  # the rule's own, then its file's global ones
    anchored: bool = False
    prefix_limit: int = 0  # anchored rules: how many [\w.-] characters may precede the keyword
    source: str = ""

    @cached_property
    def pattern(self) -> regex.Pattern[str]:
        return regex.compile(self.expression, FLAGS)


@dataclass(frozen=True)
class RuleSet:
    rules: tuple[Rule, ...]
    skipped: tuple[str, ...]  # rule ids that need a file path
    sources: tuple[str, ...] = ()


def _fail(source: str, what: str, rule: str = "", **details: object) -> CanalError:
    where = f"rule {rule!r} of {source}" if rule else source
    return REDACT_RULES_INVALID(
        f"Redaction rules file unusable: {where}: {what}",
        hint=f"fix or remove {source} (set by {ENV_VAR}), then run the command again",
        details={"file": source, "rule": rule, **details})


def _allowlist(raw: RawAllowlist, source: str, rule: str, checked: bool) -> Allowlist:
    return Allowlist(
        target=raw.regex_target,
        expressions=tuple(_expression(p, source, rule, checked) for p in raw.regexes),
        stopwords=tuple(w.lower() for w in raw.stopwords),
        require_all=raw.condition.upper() == "AND",
        needs_path=bool(raw.paths),
    )


def _expression(pattern: str, source: str, rule: str, checked: bool) -> str:
    """``pattern`` as ``regex`` reads it; ``checked``: compiled now, refused with its rule named when it
    does not compile."""
    expression = python_pattern(pattern)
    if checked:
        try:
            regex.compile(expression, FLAGS)
        except regex.error as exc:
            raise _fail(source, f"regex does not compile ({exc}): {pattern[:120]}", rule) from None
    return expression


def _rule(raw: RawRule, source: str, global_lists: tuple[Allowlist, ...], checked: bool) -> Rule:
    assert raw.regex is not None
    implied = IMPLIED_KEYWORDS.get(raw.id, ())
    keywords = raw.keywords or implied
    own = (*raw.allowlists, *((raw.allowlist,) if raw.allowlist else ()))
    return Rule(
        id=raw.id,
        expression=_expression(raw.regex, source, raw.id, checked),
        secret_group=raw.secret_group,
        entropy=raw.entropy,
        keywords=tuple(k.lower() for k in keywords),
        allowlists=(*(_allowlist(a, source, raw.id, checked) for a in own), *global_lists),
        anchored=raw.regex.startswith(ANCHORED_PREFIXES) and bool(keywords),
        prefix_limit=100 if raw.regex.startswith(DOUBLE_PREFIX) else 50,
        source=source,
    )


def _validate(data: dict[str, Any], source: str) -> RawConfig:
    try:
        return RawConfig.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        loc = first["loc"]
        rule = ""
        if len(loc) > 1 and loc[0] == "rules" and isinstance(loc[1], int):
            raw_rule = data.get("rules", [])[loc[1]]
            rule = str(raw_rule.get("id", f"#{loc[1] + 1}")) if isinstance(raw_rule, dict) else ""
        field = ".".join(str(p) for p in loc)
        raise _fail(source, f"{field}: {first['msg']}", rule) from None


def parse_rules(text: str, source: str = "<rules>", *, checked: bool = True) -> RuleSet:
    """Read a gitleaks-format TOML text; ``source`` names it in errors. ``checked``: every pattern
    compiled now (a bad one refused); else each compiles when it first runs (the built-in rules)."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise _fail(source, f"not valid TOML ({exc})") from None
    config = _validate(data, source)
    if not config.rules:
        raise _fail(source, "no [[rules]] in the file")
    lists = (*config.allowlists, *((config.allowlist,) if config.allowlist else ()))
    global_lists = tuple(_allowlist(a, source, "(global allowlist)", checked) for a in lists)
    usable = [r for r in config.rules if r.regex is not None and r.path is None]
    skipped = tuple(r.id for r in config.rules if r.regex is None or r.path is not None)
    return RuleSet(tuple(_rule(r, source, global_lists, checked) for r in usable), skipped, (source,))


def merge_rules(*sets: RuleSet) -> RuleSet:
    """All rules of all sets; each keeps its own file's allowlists."""
    return RuleSet(tuple(r for s in sets for r in s.rules), tuple(i for s in sets for i in s.skipped),
                   tuple(src for s in sets for src in s.sources))


@cache
def builtin_rules() -> RuleSet:
    """Canal's own rule set (``host/redact/rules.toml``), compiled once per process."""
    text = resources.files("canal.host.redact").joinpath(BUILTIN).read_text(encoding="utf-8")
    return parse_rules(text, f"host/redact/{BUILTIN} (built in)", checked=False)


@cache
def file_rules(path: str) -> RuleSet:
    """The rules of an operator's gitleaks-format file, compiled once per process."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise _fail(path, f"cannot read it ({exc})") from None
    return parse_rules(text, path)


def extra_rule_files(environ: dict[str, str] | None = None) -> tuple[str, ...]:
    value = (os.environ if environ is None else environ).get(ENV_VAR, "")
    return tuple(p for p in value.split(os.pathsep) if p.strip())


def default_rules() -> RuleSet:
    """The built-in rules plus those of every file named by ``CANAL_REDACT_RULES``."""
    extras = extra_rule_files()
    if not extras:
        return builtin_rules()
    return merge_rules(builtin_rules(), *(file_rules(p) for p in extras))
