"""The detector as it was before the one-pass rewrite (main at 1c3cd60), kept as the reference the
new one must agree with finding for finding: the token pattern with its lookbehind in ``regex``, one
substring search per keyword, the filters in ``regex``, and placement against every span taken."""

from __future__ import annotations

import bisect
import math
from collections import Counter
from collections.abc import Callable, Iterator

import regex

from canal.host.redact import Finding
from canal.host.redact.detector import DIGIT, FALLBACK_RULES, PLACEHOLDER, _line, _secret_group
from canal.host.redact.rules import FLAGS, Rule, RuleSet, default_rules

TOKEN = regex.compile(r"(?<![\w+/=-])[A-Za-z0-9+/_-]{24,}={0,2}(?![\w+/=-])", FLAGS)
HEX = regex.compile(r"^[0-9a-fA-F]+$", FLAGS)
UUIDISH = regex.compile(r"^[0-9a-fA-F]{8}(?:-[0-9a-fA-F]{4}){3}-[0-9a-fA-F]{12}$", FLAGS)
WORDLIKE = regex.compile(r"^(?:[A-Za-z][a-z]{1,}\d{0,4}|[A-Z]{1,8}\d{0,4}|\d{1,8})$", FLAGS)
SWITCH = regex.compile(r"(?<=[a-z])[A-Z]|(?<=[A-Za-z])[0-9]|(?<=[0-9])[A-Za-z]", FLAGS)
LOWER, UPPER, DIGITS = (regex.compile(p, FLAGS) for p in ("[a-z]", "[A-Z]", "[0-9]"))
PUBLIC_TOKEN = regex.compile(
    r"^(?:sha(?:1|256|384|512)-|AAAA[B-I][0-9A-Za-z]{1,3}(?:NzaC1|VjZHNh|NrLXNza|NrLWVjZHNh))", FLAGS)
PUBLIC_PEM = regex.compile(
    r"-----BEGIN (?![A-Z0-9 ]*PRIVATE)[A-Z0-9 ]{1,40}-----"
    r"(?:(?:\r?\n|\\r?\\n)[ \t]*(?:[A-Za-z0-9+/=]{1,128}|[A-Za-z-]{1,30}:[^\r\n\\]{0,200})?)+", FLAGS)


def shannon(text: str) -> float:
    if not text:
        return 0.0
    n = len(text)
    return -sum(c / n * math.log2(c / n) for c in Counter(text).values())


def switch_rate(token: str) -> float:
    return len(SWITCH.findall(token)) / max(len(token) - 1, 1)


def made_of_words(token: str) -> bool:
    parts = [p for p in regex.split(r"[/_\-+.]", token) if p]
    camel = [w for p in parts for w in regex.findall(r"[A-Z]?[a-z]+\d*|[A-Z]+\d*(?![a-z])|\d+", p)]
    return bool(camel) and all(WORDLIKE.match(w) for w in camel) and len(camel) * 4 <= len(token)


def looks_random(token: str) -> bool:
    core = token.rstrip("=")
    if HEX.match(core) or UUIDISH.match(core):
        return False
    if not (LOWER.search(core) and UPPER.search(core) and DIGITS.search(core)):
        return False
    if shannon(core) < 4.0:
        return False
    return switch_rate(core) >= 0.3 and not made_of_words(core)


def high_entropy_tokens(text: str) -> Iterator[tuple[int, int]]:
    public = [m.span() for m in PUBLIC_PEM.finditer(text)] if "-----BEGIN " in text else []
    for m in TOKEN.finditer(text):
        if PUBLIC_TOKEN.match(m.group(0)) or any(s <= m.start() < e for s, e in public):
            continue
        if looks_random(m.group(0)):
            yield m.span()


class ReferenceDetector:
    def __init__(self, rules: RuleSet | None = None) -> None:
        self._rules = rules or default_rules()
        self._keywords = sorted({k for r in self._rules.rules for k in r.keywords})

    def find(self, text: str) -> list[Finding]:
        if not text:
            return []
        found = [*self._rule_findings(text),
                 *(Finding("high-entropy", s, e, text[s:e]) for s, e in high_entropy_tokens(text))]
        taken = [m.span() for m in PLACEHOLDER.finditer(text)]
        result: list[Finding] = []
        generic = lambda rule: rule.startswith("generic") or rule in FALLBACK_RULES  # noqa: E731
        for f in sorted(found, key=lambda f: (generic(f.rule), f.start, f.start - f.end)):
            if any(f.start < e and s < f.end for s, e in taken):
                continue
            taken.append((f.start, f.end))
            result.append(f)
        return sorted(result, key=lambda f: f.start)

    def _rule_findings(self, text: str) -> list[Finding]:
        lowered = text.lower()
        present = {k for k in self._keywords if k in lowered}
        out: list[Finding] = []
        for rule in self._rules.rules:
            hits = [k for k in rule.keywords if k in present]
            if rule.keywords and not hits:
                continue
            matches = _windowed(rule, text, lowered, hits) if rule.anchored else rule.pattern.finditer(text)
            for m in matches:
                finding = _check(rule, m, text)
                if finding is not None:
                    out.append(finding)
        return out


def _check(rule: Rule, m: regex.Match[str], text: str) -> Finding | None:
    group = _secret_group(rule, m)
    secret = m.group(group)
    start, end = m.span(group)
    if not secret.strip():
        return None
    if rule.entropy and shannon(secret) <= rule.entropy:
        return None
    if rule.id.startswith("generic") and not DIGIT.search(secret):
        return None
    line = _line(text, m.start(), m.end())
    if any(a.allows(secret, m.group(0), line) for a in rule.allowlists):
        return None
    return Finding(rule.id, start, end, secret)


def _windowed(rule: Rule, text: str, lowered: str, hits: list[str]) -> Iterator[regex.Match[str]]:
    done = 0
    for p in sorted({p for k in hits for p in _occurrences(lowered, k)}):
        if p < done:
            continue
        start, low = p, max(done, p - rule.prefix_limit)
        while start > low and _prefix_char(text[start - 1]):
            start -= 1
        m = rule.pattern.match(text, start)
        if m is not None:
            done = m.end()
            yield m


def _occurrences(text: str, word: str) -> Iterator[int]:
    at = text.find(word)
    while at != -1:
        yield at
        at = text.find(word, at + 1)


def _prefix_char(c: str) -> bool:
    return c.isascii() and (c.isalnum() or c in "_.-")


def replacer(by_value: dict[str, str]) -> Callable[[str], str]:
    """Every occurrence of a detected value goes, not only the one a rule saw in context.

    Plain ``str.find`` rather than one regex alternation: compiling a pattern from a long value (a
    private key of several kB) costs up to seconds in ``regex``; finding literals costs microseconds.
    Longer values are placed first; an occurrence overlapping one already placed is skipped.
    """
    values = sorted(by_value, key=len, reverse=True)

    def apply(text: str) -> str:
        starts: list[int] = []
        spans: dict[int, tuple[int, str]] = {}  # start -> (end, placeholder)
        for value in values:
            at = text.find(value)
            while at != -1:
                end = at + len(value)
                i = bisect.bisect_left(starts, at)
                before_free = i == 0 or spans[starts[i - 1]][0] <= at
                after_free = i == len(starts) or starts[i] >= end
                if before_free and after_free:
                    starts.insert(i, at)
                    spans[at] = (end, by_value[value])
                at = text.find(value, end if before_free and after_free else at + 1)
        if not starts:
            return text
        out, pos = [], 0
        for start in starts:
            end, placeholder = spans[start]
            out += [text[pos:start], placeholder]
            pos = end
        out.append(text[pos:])
        return "".join(out)

    return apply
