"""Keyword-anchored rules tried only near where their rest can match (``anchors``) find what trying
them at every keyword occurrence found: on ASCII text full of keywords, assignments and prefixes."""

from __future__ import annotations

import random

import pytest

from canal.host.redact import Detector
from canal.host.redact.anchors import AnchorFilter
from canal.host.redact.entropy import BATCH_MIN
from canal.host.redact.gate import RuleGate
from canal.host.redact.relax import relaxed
from canal.host.redact.rules import builtin_rules
from tests.unit.redact import reference
from tests.unit.redact.test_one_pass import ALPHABET, TEXTS, never_skips

KEYWORDS = ["pass", "PASSED", "password", "Passwd", "pwd", "secret", "SECRET_KEY", "token", "api_key",
            "apiKey", "access-key", "auth.key", "private_key", "credentials", "KeyError", "tokens",
            "db_password", "my.app-password_value", "passphrase"]
BETWEEN = ["=", " = ", ":", ": ", ":=", "=>", "\t=\t", '"="', "'", " ", "", "==", " : ", "=" + " " * 60]
VALUES = ["hunter2", "S3cr3t-3XkjNHFZxn", "${VAR}", "abc", "123456", "$(cat f)", "x9" * 40,
          "'quoted-val1'", "\"Zq8xLp2Wn\"", "none", "/etc/passwd"]


def assignments(seed: int, size: int = 20000) -> str:
    """ASCII text dense in keywords, each with or without an assignment after it, after prefixes of
    every length around the rule's limit (50 characters of ``[\\w.-]``)."""
    rng, out, total = random.Random(seed), [], 0
    while total < size:
        prefix = "".join(rng.choice(ALPHABET + "_.-") for _ in range(rng.choice((0, 1, 5, 49, 50, 51, 80))))
        piece = prefix + rng.choice(KEYWORDS)
        if rng.random() < 0.6:
            piece += rng.choice(BETWEEN) + rng.choice(VALUES)
        piece += rng.choice([" ", "\n", ";", ",", "", " tests PASSED\n", "KeyError: 'user_1'\n"])
        out.append(piece)
        total += len(piece)
    return "".join(out)


@pytest.fixture(scope="module")
def detectors() -> tuple[Detector, reference.ReferenceDetector]:
    return Detector(), reference.ReferenceDetector()


@pytest.mark.parametrize("seed", range(30))
def test_same_findings_as_trying_every_occurrence(
        detectors: tuple[Detector, reference.ReferenceDetector], seed: int) -> None:
    text = assignments(seed)
    assert text.isascii()
    new, old = detectors
    found = new.find(text)
    assert found == old.find(text)
    assert any(f.rule == "generic-secret" for f in found)


def test_same_findings_on_the_ascii_corpus(detectors: tuple[Detector, reference.ReferenceDetector]) -> None:
    new, old = detectors
    text = "\n".join(t for t in TEXTS if t.isascii())
    assert new.find(text) == old.find(text)


def test_the_generic_rule_is_covered_and_ordinary_output_gives_it_nowhere_to_try() -> None:
    rules = builtin_rules().rules
    generic = next(i for i, r in enumerate(rules) if r.id == "generic-secret")
    anchors = AnchorFilter(rules)
    assert anchors.spans("db_password = hunter22") is None  # a short text: every occurrence is tried
    assert anchors.covered == frozenset()  # and nothing was compiled for it (issue 33: 30-50 ms)
    log = "tests/test_a.py::test_key PASSED\nKeyError: 'user_1'\ntoken counts: 3\n" * 300
    assert len(log) >= BATCH_MIN
    spans = anchors.spans(log)
    assert generic in anchors.covered
    assert spans is not None
    assert spans[generic] == []
    spans = anchors.spans(log + "db_password = hunter22\n")
    assert spans is not None
    assert len(spans[generic]) == 1
    assert anchors.spans("non-ASCII é password=hunter22 " + log) is None  # every occurrence is tried


def test_counted_repeats_open_outside_classes_only() -> None:
    assert relaxed(r"a{2,5}[{2,5}]\{2,5}(?:b){0,50}x{3}") == r"a{2,}[{2,5}]\{2,5}(?:b){0,}x{3}"
    assert relaxed(r"[]{1,2}]{1,2}") == r"[]{1,2}]{1,}"
    assert relaxed(r"[^]a]{1,2}") == r"[^]a]{1,}"
    assert relaxed(r"[[a]]") is None  # a class inside a class (regex V1): not covered
    assert relaxed(r"a{,5}") is None  # {0,5} to regex, the literal "{,5}" to Hyperscan


def test_lookarounds_are_dropped_with_whatever_they_hold() -> None:
    assert relaxed(r"(?<![0-9:])(\d{8,10}:AA)(?![\w-])") == r"(\d{8,}:AA)"
    assert relaxed(r"a(?=[)(])b(?<=\))c(?!(x|y)z)d") == r"abcd"
    assert relaxed(r"(?:ab)(?i:cd)(?P<n>e)") == r"(?:ab)(?i:cd)(?P<n>e)"
    assert relaxed(r"a(?=b") is None  # unbalanced: not covered


def padded(text: str) -> str:
    """Long enough for the gate (it applies from BATCH_MIN characters), ASCII like ``text``."""
    return text + "\n" + "ordinary line of output, nothing to see here\n" * (BATCH_MIN // 40)


def test_the_gate_never_skips_a_rule_that_matches() -> None:
    rules = builtin_rules().rules
    gate = RuleGate(rules)
    texts = [padded(t) for t in TEXTS if t.isascii()] + [padded(assignments(s)) for s in range(5)]
    texts.append(padded("\n".join(t for t in TEXTS if t.isascii()).upper()))
    gate.possible(texts[0])  # compiled with the first long text: covered is known then
    assert len(gate.covered) >= 40
    assert never_skips(gate.possible, gate.covered, rules, texts) >= 60
    assert gate.possible(padded("ordinary output")) == frozenset()
    assert gate.possible("short text: the gate stands aside") is None


@pytest.mark.parametrize("seed", range(4))
def test_same_findings_on_long_ascii_text(detectors: tuple[Detector, reference.ReferenceDetector],
                                          seed: int) -> None:
    text = assignments(seed, BATCH_MIN) + "\n".join(t for t in TEXTS if t.isascii())
    assert len(text) >= BATCH_MIN
    assert text.isascii()
    new, old = detectors
    found = new.find(text)
    assert found == old.find(text)
    assert len({f.rule for f in found}) >= 20
