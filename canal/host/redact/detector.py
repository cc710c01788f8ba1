"""Finding secrets in text: the rules (gitleaks semantics: keyword prefilter, secret group, entropy,
allowlists) followed by the high-entropy detector.

The keyword prefilter matters: this runs on every presented output, and most outputs contain few of
the keywords, so most rules never run their regex. It is one multi-pattern pass (``keywords``), one
more tells which rule patterns may match at all (``prefilter``), and findings are placed against a
per-position map of what is taken (``spans``), so a text with a hundred thousand findings costs as
much per finding as one with two.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import regex

from canal.host.redact import batch
from canal.host.redact.entropy import high_entropy_tokens, shannon
from canal.host.redact.keywords import Hits, KeywordScanner
from canal.host.redact.prefilter import RulePrefilter
from canal.host.redact.rules import Rule, RuleSet, default_rules
from canal.host.redact.spans import Spans

PLACEHOLDER = regex.compile(r"\[REDACTED_SECRET:[a-z0-9-]+:[0-9a-f]+\]")
PLACEHOLDER_START = "[REDACTED_SECRET:"
DIGIT = regex.compile(r"\d")
# found by shape or context only: a finding of a specific rule over the same span wins
FALLBACK_RULES = frozenset({"high-entropy", "url-password", "authorization-header", "bearer-token"})


@dataclass(frozen=True)
class Finding:
    rule: str
    start: int
    end: int
    secret: str


class Detector:
    def __init__(self, rules: RuleSet | None = None, *, entropy: bool = True) -> None:
        self._rules = rules or default_rules()
        self._entropy = entropy
        self._scanner = KeywordScanner(
            (k for r in self._rules.rules for k in r.keywords),
            positions=(k for r in self._rules.rules if r.anchored for k in r.keywords))
        self._prefilter = RulePrefilter(self._rules.rules)

    def find(self, text: str) -> list[Finding]:
        """Non-overlapping findings, in text order.

        Specific rules are placed first (earliest, then longest, wins); generic and fallback
        detectors then fill what is left, so a token is named by its provider's rule.
        """
        if not text:
            return []
        found = [*self._rule_findings(text), *self._extra(text)]
        taken = Spans(len(text))
        if PLACEHOLDER_START in text:
            for m in PLACEHOLDER.finditer(text):
                taken.take(*m.span())
        result = [f for f in sorted(found, key=lambda f: (_generic(f.rule), f.start, f.start - f.end))
                  if taken.take_if_free(f.start, f.end)]
        return sorted(result, key=lambda f: f.start)

    def _rule_findings(self, text: str) -> list[Finding]:
        hits = self._scanner.scan(text)
        possible = self._prefilter.possible(text)
        out: list[Finding] = []
        for index, rule in enumerate(self._rules.rules):
            words = [k for k in rule.keywords if k in hits.present]
            if rule.keywords and not words:
                continue
            if possible is not None and index in self._prefilter.covered and index not in possible:
                continue
            matches = _windowed(rule, text, hits, words) if rule.anchored else rule.pattern.finditer(text)
            for m in matches:
                finding = self._check(rule, m, text)
                if finding is not None:
                    out.append(finding)
        return out

    def _check(self, rule: Rule, m: regex.Match[str], text: str) -> Finding | None:
        group = _secret_group(rule, m)
        secret = m.group(group)
        start, end = m.span(group)
        if not secret.strip():
            return None
        if rule.entropy and shannon(secret) <= rule.entropy:
            return None
        if rule.id.startswith("generic") and not DIGIT.search(secret):
            return None  # gitleaks: a generic secret without a digit is almost always a word
        line = _line(text, m.start(), m.end())
        if any(a.allows(secret, m.group(0), line) for a in rule.allowlists):
            return None
        return Finding(rule.id, start, end, secret)

    def _extra(self, text: str) -> list[Finding]:
        if not self._entropy:
            return []
        spans = batch.high_entropy_tokens(text) if len(text) >= batch.BATCH_MIN else high_entropy_tokens(text)
        return [Finding("high-entropy", s, e, text[s:e]) for s, e in spans]


def _windowed(rule: Rule, text: str, hits: Hits, words: list[str]) -> Iterator[regex.Match[str]]:
    """Matches of a keyword-anchored rule, tried once per keyword occurrence.

    Such a rule begins with up to ``prefix_limit`` characters of ``[\\w.-]`` before its keyword, so a
    match that uses the keyword at ``p`` starts where that run of characters starts (at most
    ``prefix_limit`` back); one anchored attempt there covers every prefix length.
    """
    done = 0
    for p in sorted({p for k in words for p in hits.positions.get(k, ())}):
        if p < done:
            continue
        start, low = p, max(done, p - rule.prefix_limit)
        while start > low and _prefix_char(text[start - 1]):
            start -= 1
        m = rule.pattern.match(text, start)
        if m is not None:
            done = m.end()
            yield m


def _prefix_char(c: str) -> bool:
    return c.isascii() and (c.isalnum() or c in "_.-")


def _generic(rule: str) -> bool:
    return rule.startswith("generic") or rule in FALLBACK_RULES


def _secret_group(rule: Rule, m: regex.Match[str]) -> int:
    if rule.secret_group and rule.secret_group <= len(m.groups()):
        return rule.secret_group
    for index, value in enumerate(m.groups(), start=1):
        if value:
            return index
    return 0


def _line(text: str, start: int, end: int) -> str:
    left = text.rfind("\n", 0, start) + 1
    right = text.find("\n", end)
    return text[left: right if right != -1 else len(text)]
