"""Finding secrets in text: the rules (gitleaks semantics: keyword prefilter, secret group, entropy,
allowlists) followed by the high-entropy detector.

The keyword prefilter matters: this runs on every presented output, and most outputs contain few of
the keywords, so most rules never run their regex. It is one multi-pattern pass (``keywords``), one
more tells which rule patterns may match at all (``prefilter``), and findings are placed against a
per-position map of what is taken (``spans``), so a text with a hundred thousand findings costs as
much per finding as one with two.
"""

from __future__ import annotations

import bisect
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

import regex

from canal.host.ports import PLACEHOLDER_START
from canal.host.redact.anchors import AnchorFilter
from canal.host.redact.entropy import BATCH_MIN, high_entropy_tokens, shannon
from canal.host.redact.gate import RuleGate
from canal.host.redact.keywords import KeywordScanner, occurrences
from canal.host.redact.prefilter import RulePrefilter
from canal.host.redact.rules import Rule, RuleSet, builtin_rules, default_rules
from canal.host.redact.spans import Spans

PLACEHOLDER = regex.compile(r"\[REDACTED_SECRET:[a-z0-9-]+:[0-9a-f]+\]")
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
        # the built-in rules and the entropy checks, as ``Detector()`` makes them in any process
        self.builtin = rules is None and entropy and self._rules is builtin_rules()
        every = self._rules.rules
        keywords = [k for r in every for k in r.keywords]
        anchored = [i for i, r in enumerate(every) if r.anchored]
        self._scanner = KeywordScanner(keywords, positions=(k for i in anchored for k in every[i].keywords))
        self._prefilter = RulePrefilter(every)
        self._gate = RuleGate(every)
        self._anchors = AnchorFilter(every)
        self._ascii_scanner: KeywordScanner | None = None  # once the anchor filter applies (``_ascii``)

    def find(self, text: str) -> list[Finding]:
        """Non-overlapping findings, in text order.

        Specific rules are placed first (earliest, then longest, wins); generic and fallback
        detectors then fill what is left, so a token is named by its provider's rule.
        """
        return [Finding(rule, start, end, text[start:end]) for start, end, rule in self.spans(text)]

    def spans(self, text: str) -> list[tuple[int, int, str]]:
        """``find`` as ``(start, end, rule)``, without a ``Finding`` for each (base64 output has
        ~14,000 findings per MiB)."""
        if not text:
            return []
        return _place(text, self._rule_findings(text), self._extra_spans(text))

    def _ascii(self) -> KeywordScanner:
        """For a text the anchor filter applies to: the covered rules' occurrences are found near their
        spans only, so the scan leaves out their keywords' positions."""
        if self._ascii_scanner is None:
            every = self._rules.rules
            self._ascii_scanner = KeywordScanner((k for r in every for k in r.keywords), positions=(
                k for i, r in enumerate(every) if r.anchored and i not in self._anchors.covered
                for k in r.keywords))
        return self._ascii_scanner

    def _rule_findings(self, text: str) -> list[Finding]:
        spans = self._anchors.spans(text)
        hits = (self._scanner if spans is None else self._ascii()).scan(text)
        possible = self._prefilter.possible(text)
        gated = self._gate.possible(text) if hits.present else None
        out: list[Finding] = []
        for index, rule in enumerate(self._rules.rules):
            words = [k for k in rule.keywords if k in hits.present]
            if rule.keywords and not words:
                continue
            if possible is not None and index in self._prefilter.covered and index not in possible:
                continue
            if gated is not None and index in self._gate.covered and index not in gated:
                continue
            if not rule.anchored:
                matches: Iterable[regex.Match[str]] = rule.pattern.finditer(text)
            elif spans is not None and index in spans:
                matches = _windowed(rule, text, _near(text, words, spans[index], rule.prefix_limit))
            else:
                matches = _windowed(rule, text, sorted({p for k in words for p in hits.positions.get(k, ())}))
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

    def _extra_spans(self, text: str) -> list[tuple[int, int]]:
        """High-entropy tokens: disjoint, in text order."""
        if not self._entropy:
            return []
        if len(text) >= BATCH_MIN:
            from canal.host.redact import batch  # numpy: imported with the first long text, not at start

            return batch.high_entropy_tokens(text)
        return list(high_entropy_tokens(text))


def _place(text: str, found: list[Finding], tokens: list[tuple[int, int]]) -> list[tuple[int, int, str]]:
    """Place the rules' findings and the high-entropy tokens against each other and against
    placeholders already in the text: all in one order (specific rules, then generic ones by start,
    longest first), each taken only where nothing is yet. A token that overlaps no finding and no
    placeholder is taken whatever the order (tokens never overlap each other): only the others are
    placed one by one, so thousands of tokens cost no more than sorting them."""
    if not found and not tokens:
        return []
    held = [m.span() for m in PLACEHOLDER.finditer(text)] if PLACEHOLDER_START in text else []
    if not found and not held:
        return [(start, end, "high-entropy") for start, end in tokens]
    ends = [end for _, end in tokens]
    contested: set[int] = set()
    for start, end in (*((f.start, f.end) for f in found), *held):
        at = bisect.bisect_right(ends, start)  # the first token that ends after this starts
        while at < len(tokens) and tokens[at][0] < end:
            contested.add(at)
            at += 1
    taken = Spans(len(text))
    for start, end in held:
        taken.take(start, end)
    candidates = [*found, *(Finding("high-entropy", *tokens[i], "") for i in sorted(contested))]
    placed = [(f.start, f.end, f.rule) for f in sorted(candidates, key=lambda f: (_generic(f.rule), f.start,
                                                                                 f.start - f.end))
              if taken.take_if_free(f.start, f.end)]
    placed += [(start, end, "high-entropy") for i, (start, end) in enumerate(tokens) if i not in contested]
    return sorted(placed, key=lambda p: p[0])


def _near(text: str, words: list[str], spans: list[tuple[int, int]], limit: int) -> list[int]:
    """The occurrences of ``words`` in ASCII ``text`` less than ``limit`` before a span or ``limit``
    after its end (``anchors``: no attempt anywhere else can succeed), in order."""
    found: set[int] = set()
    longest = max(map(len, words))
    for start, end in spans:
        low, high = max(start - limit, 0), end + limit
        window = text[low:high + longest].lower()
        for word in words:
            found.update(low + p for p in occurrences(window, word) if low + p < high)
    return sorted(found)


def _windowed(rule: Rule, text: str, positions: list[int]) -> Iterator[regex.Match[str]]:
    """Matches of a keyword-anchored rule, tried once per keyword occurrence (``positions``, in order).

    Such a rule begins with up to ``prefix_limit`` characters of ``[\\w.-]`` before its keyword, so a
    match that uses the keyword at ``p`` starts where that run of characters starts (at most
    ``prefix_limit`` back); one anchored attempt there covers every prefix length.
    """
    done = 0
    for p in positions:
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
