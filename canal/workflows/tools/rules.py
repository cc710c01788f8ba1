"""Rules files: one per tool, lines a person can edit that shape what ``tool meta`` shows.

Line forms (``#`` starts a comment line; a trailing `` #auto`` marks a line ``canal discover`` wrote)::

    IGNORE:<field>                       hide a field from ``tool meta`` (system fields: automatic)
    KEEP:<field>                         undo an automatic IGNORE for that field
    NOTE:<text>                          a note on the tool
    NOTE:<field>:<text>                  a note on one field
    ENUM:<field>:<value>-<label>,...     labels for a field's values

On every discover run the ``#auto`` lines are regenerated and every other line is kept as written.
A line a person wrote wins over a generated one of the same kind for the same field.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable
from dataclasses import dataclass
from typing import Literal

from canal.core.next import act
from canal.workflows.tools.errors import TOOL_RULES_INVALID

RuleKind = Literal["IGNORE", "KEEP", "NOTE", "ENUM"]
AUTO_MARK = "#auto"
_KINDS: tuple[RuleKind, ...] = ("IGNORE", "KEEP", "NOTE", "ENUM")


@dataclass(frozen=True)
class EnumOption:
    value: str
    label: str


@dataclass(frozen=True)
class Rule:
    kind: RuleKind
    field: str | None = None  # None: a NOTE about the whole tool
    text: str = ""
    options: tuple[EnumOption, ...] = ()
    auto: bool = False

    @property
    def key(self) -> tuple[str, str | None]:
        """What a manual rule overrides: KEEP and IGNORE of a field are the same decision."""
        return ("IGNORE" if self.kind == "KEEP" else self.kind, self.field)

    def line(self) -> str:
        if self.kind == "ENUM":
            body = f"{self.field}:" + ",".join(f"{o.value}-{o.label}" for o in self.options)
        elif self.kind == "NOTE":
            body = f"{self.field}:{self.text}" if self.field else self.text
        else:
            body = self.field or ""
        return f"{self.kind}:{body}" + (f" {AUTO_MARK}" if self.auto else "")


@dataclass(frozen=True)
class RulesLine:
    """One physical line: kept verbatim when a person wrote it."""

    number: int
    raw: str
    rule: Rule | None  # None for comments and blank lines
    auto: bool


def parse_options(text: str) -> tuple[EnumOption, ...] | None:
    """``0-pre-auth,1-SDK`` into options (the value ends at the first hyphen); None when malformed."""
    options: list[EnumOption] = []
    for item in text.split(","):
        value, sep, label = item.strip().partition("-")
        if not sep or not value or not label:
            return None
        options.append(EnumOption(value, label.strip()))
    return tuple(options) if options else None


def _parse_rule(body: str, fields: Collection[str], auto: bool) -> Rule | str:
    """A rule, or a problem text."""
    kind, sep, rest = body.partition(":")
    if not sep or kind not in _KINDS:
        return f"unknown rule {body!r}: lines start with IGNORE:, KEEP:, NOTE: or ENUM:"
    if kind in ("IGNORE", "KEEP"):
        name = rest.strip()
        return Rule(kind, name, auto=auto) if name else f"{kind}: needs a field name"
    if kind == "NOTE":
        head, colon, tail = rest.partition(":")
        if colon and head.strip() in fields and tail.strip():
            return Rule("NOTE", head.strip(), text=tail.strip(), auto=auto)
        return Rule("NOTE", None, text=rest.strip(), auto=auto) if rest.strip() else "NOTE: needs text"
    name, colon, spec = rest.partition(":")
    options = parse_options(spec) if colon else None
    if not name.strip() or options is None:
        return "ENUM lines look like ENUM:<field>:<value>-<label>,<value>-<label>"
    return Rule("ENUM", name.strip(), options=options, auto=auto)


def parse_rules(text: str, source: str, fields: Collection[str]) -> list[RulesLine]:
    """Every line of a rules file; raises ``TOOL_RULES_INVALID`` naming ``source:line`` on a bad rule line."""
    parsed: list[RulesLine] = []
    for number, raw in enumerate(text.splitlines(), start=1):
        stripped = raw.strip()
        auto = stripped.endswith(AUTO_MARK)
        body = stripped.removesuffix(AUTO_MARK).rstrip() if auto else stripped
        if not body or body.startswith("#"):
            parsed.append(RulesLine(number, raw, None, auto))
            continue
        rule = _parse_rule(body, fields, auto)
        if isinstance(rule, str):
            msg = f"{source}:{number}: {rule}"
            raise TOOL_RULES_INVALID(msg, hint=f"edit {source}", next=act("discover"),
                               details={"file": source, "line": number, "problem": rule})
        parsed.append(RulesLine(number, raw, rule, auto))
    return parsed


def effective(lines: Iterable[RulesLine], generated: Iterable[Rule] = ()) -> list[Rule]:
    """Manual rules of the file, plus the ``generated`` ones no manual rule overrides.

    The file's own ``#auto`` lines are a snapshot of ``generated`` from the last discover run; the
    live ones are used so a changed tool never shows stale rules.
    """
    manual = [ln.rule for ln in lines if ln.rule is not None and not ln.auto]
    taken = {r.key for r in manual}
    return [*manual, *(r for r in generated if r.key not in taken)]


def regenerate(existing: list[RulesLine], generated: Iterable[Rule], header: str) -> str:
    """The new file: header, the lines a person wrote (verbatim), then fresh ``#auto`` lines."""
    manual_lines = [ln for ln in existing if not ln.auto]
    while manual_lines and not manual_lines[-1].raw.strip():
        manual_lines.pop()
    taken = {ln.rule.key for ln in manual_lines if ln.rule is not None}
    auto = [r.line() for r in generated if r.key not in taken]
    out = [f"# {header} {AUTO_MARK}", *(ln.raw for ln in manual_lines), *auto]
    return "\n".join(out) + "\n"
