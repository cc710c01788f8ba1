"""The one-pass detector and replacer (issue 33) find and replace exactly what the old ones did, on
the corpora and on generated text, and their cost does not grow with the number of findings."""

from __future__ import annotations

import base64
import dataclasses
import json
import random
from collections.abc import Callable
from pathlib import Path

import pytest

from canal.host.redact import Detector, Finding, Redactor
from canal.host.redact import entropy as new_entropy
from canal.host.redact.keywords import KeywordScanner
from canal.host.redact.prefilter import RulePrefilter
from canal.host.redact.replace import replacer
from canal.host.redact.rules import Rule, builtin_rules
from canal.host.redact.runs import token_map
from canal.host.redact.spans import Spans
from canal.presenter.textclean import TextCleaner
from tests.unit.redact import reference

CORPUS = json.loads((Path(__file__).parents[2] / "data" / "secrets" / "corpus.json").read_text())
TEXTS = [e["text"] for e in CORPUS["secrets"]] + [e["text"] if isinstance(e, dict) else e
                                                    for e in CORPUS.get("benign", [])]
PIECES = ["token=", "password=", "secret: ", "ghp_", "Bearer ", "https://u:", "@host ", "api_key=",
          "-----BEGIN CERTIFICATE-----\n", "sig=", "AKIA", "eyJ", "=", "==", "===", "-", "_", "/",
          "+", ".", ":", "\n", " ", "\t", '"', "é", "İ", "K", "ß", "☃", "\udc80", "KEY", "Token",
          "sha256-", "AAAAB3NzaC1", "--password ", "xoxb-", "[REDACTED_SECRET:x:0a]"]
ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"


@pytest.fixture(scope="module")
def detectors() -> tuple[Detector, reference.ReferenceDetector]:
    return Detector(), reference.ReferenceDetector()


def generated(seed: int, size: int = 6000) -> str:
    """Text made to hit the edges: tokens of every length around 24 with padding, keywords in any
    case, characters outside ASCII (some change length when lower-cased), lone surrogates."""
    rng, out, total = random.Random(seed), [], 0
    while total < size:
        kind = rng.random()
        if kind < 0.35:
            piece = "".join(rng.choice(ALPHABET + "+/_-") for _ in range(rng.randint(18, 60)))
        elif kind < 0.45:
            piece = base64.b64encode(rng.randbytes(rng.randint(15, 60))).decode()
        elif kind < 0.55:
            piece = "".join(rng.choice("0123456789abcdef") for _ in range(rng.choice((32, 40, 64))))
        else:
            piece = rng.choice(PIECES)
        out.append(piece)
        total += len(piece)
    return "".join(out)


@pytest.mark.parametrize("index", range(len(TEXTS)))
def test_same_findings_on_each_corpus_text(detectors: tuple[Detector, reference.ReferenceDetector],
                                           index: int) -> None:
    new, old = detectors
    assert new.find(TEXTS[index]) == old.find(TEXTS[index])


def test_same_findings_on_the_whole_corpus(detectors: tuple[Detector, reference.ReferenceDetector]) -> None:
    new, old = detectors
    text = "\n".join(TEXTS)
    assert new.find(text) == old.find(text)
    assert new.find(text.upper()) == old.find(text.upper())


@pytest.mark.parametrize("seed", range(40))
def test_same_findings_on_generated_text(detectors: tuple[Detector, reference.ReferenceDetector],
                                         seed: int) -> None:
    new, old = detectors
    text = generated(seed)
    found = new.find(text)
    assert found == old.find(text)


Pair = tuple[Detector, reference.ReferenceDetector]


def test_generated_text_does_reach_the_detectors(detectors: Pair) -> None:
    # the comparison above would pass on two detectors that find nothing
    rules = {f.rule for seed in range(40) for f in detectors[0].find(generated(seed))}
    assert {"high-entropy", "generic-secret"} <= rules


@pytest.mark.parametrize("seed", range(20))
def test_tokens_are_the_old_pattern_matches(seed: int) -> None:
    text = generated(seed, 20000)
    spans = [(s, e) for s, e, _ in new_entropy.tokens(text)]
    assert spans == [m.span() for m in reference.TOKEN.finditer(text)]


@pytest.mark.parametrize("seed", range(10))
def test_filters_agree_on_every_token(seed: int) -> None:
    text = generated(seed, 20000)
    for m in reference.TOKEN.finditer(text):
        token = m.group(0)
        assert new_entropy.looks_random(token) == reference.looks_random(token), token
        assert new_entropy.shannon(token) == reference.shannon(token)
        core = token.rstrip("=")
        assert new_entropy._switch_rate(core) == reference.switch_rate(core)
        assert new_entropy._made_of_words(core) == reference.made_of_words(core)


def test_shannon_is_the_same_float_for_long_and_short_texts() -> None:
    rng = random.Random(7)
    for n in (1, 2, 24, 255, 256, 257, 5000):
        text = "".join(rng.choice(ALPHABET[:rng.randint(1, 62)]) for _ in range(n))
        assert new_entropy.shannon(text) == reference.shannon(text)


@pytest.mark.parametrize("seed", range(20))
def test_keyword_scan_matches_substring_search(seed: int) -> None:
    keywords = sorted({k for r in builtin_rules().rules for k in r.keywords})
    scanner = KeywordScanner(keywords, positions=keywords[::3])
    assert scanner.multi_pattern
    text = generated(seed) + "".join(random.Random(seed).sample(keywords, 20))
    lowered = text.lower()
    hits = scanner.scan(text)
    assert hits.present == {k for k in keywords if k in lowered}
    for word in keywords[::3]:
        if word in hits.present:
            assert sorted(hits.positions[word]) == list(reference._occurrences(lowered, word))


def test_keywords_outside_ascii_fall_back_to_substring_search() -> None:
    scanner = KeywordScanner(["clé", "key"], positions=["clé"])
    assert not scanner.multi_pattern
    hits = scanner.scan("la CLÉ et la clé, KEY")
    assert hits.present == {"clé", "key"}
    assert hits.positions["clé"] == [3, 13]


def test_token_map_keeps_one_byte_per_character() -> None:
    text = "aé\udc80☃b=+ x"
    assert token_map(text) == b"a   aaa a"


@pytest.mark.parametrize("seed", range(20))
def test_replacer_matches_the_old_one(seed: int) -> None:
    rng = random.Random(seed)
    text = generated(seed, 20000)
    found = Detector().find(text)
    values = {f.secret: f"<{i}>" for i, f in enumerate(found)}
    # values that also occur inside longer runs, overlap each other, or repeat themselves
    values.update({text[s:s + rng.randint(8, 40)]: f"<x{s}>" for s in rng.sample(range(len(text) - 40), 40)})
    values.update({"aaaa": "<a>", "abab": "<ab>", "=": "<eq>"})
    text += "aaaaaaa ababab " + "".join(list(values)[:50])
    assert replacer(values)(text) == reference.replacer(values)(text)


def test_replacer_with_many_values_still_replaces_occurrences_inside_longer_runs() -> None:
    values = {base64.b64encode(bytes([i]) * 30).decode(): f"<{i}>" for i in range(100)}
    first = next(iter(values))
    text = "\n".join(values) + f"\nprefix{first}suffix\n{first}"
    out = replacer(values)(text)
    assert out == reference.replacer(values)(text)
    assert first not in out
    assert "prefix<0>suffix" in out


def test_replacer_with_many_token_values_and_a_few_others_matches_the_old_one() -> None:
    # token-shaped values are looked up in the runs, the others searched for: one order-free pass
    # when nothing overlaps, the placing order otherwise (a short value inside a long one)
    rng = random.Random(9)
    tokens = [base64.b64encode(rng.randbytes(45)).decode() for _ in range(60)]
    values = {t: f"<{i}>" for i, t in enumerate(tokens)} | {"pass word!": "<pw>", "a b": "<ab>"}
    text = "\n".join(tokens) + "\npass word! and a b, again pass word!\n" + tokens[3]
    assert replacer(values)(text) == reference.replacer(values)(text)
    assert "pass word!" not in replacer(values)(text)
    overlapping = values | {tokens[5][10:30]: "<inner>", "word! and": "<w>"}
    assert replacer(overlapping)(text) == reference.replacer(overlapping)(text)


class CountingInt(int):
    """An int that counts the comparisons made with it."""

    compared = 0

    def _count(self, other: object, op: str) -> bool:
        CountingInt.compared += 1
        return bool(getattr(int(self), op)(other))

    def __lt__(self, other: object) -> bool:
        return self._count(other, "__lt__")

    def __le__(self, other: object) -> bool:
        return self._count(other, "__le__")

    def __gt__(self, other: object) -> bool:
        return self._count(other, "__gt__")

    def __ge__(self, other: object) -> bool:
        return self._count(other, "__ge__")

    def __eq__(self, other: object) -> bool:
        return self._count(other, "__eq__")

    __hash__ = int.__hash__


class ManyFindings(Detector):
    def __init__(self, count: int) -> None:
        super().__init__(entropy=False)
        self.count = count

    def _rule_findings(self, text: str) -> list[Finding]:
        return []

    def _extra_spans(self, text: str) -> list[tuple[int, int]]:
        return [(CountingInt(30 * i), CountingInt(30 * i + 25)) for i in range(self.count)]


def test_placing_findings_does_not_compare_each_with_every_span_taken() -> None:
    # 3,000 disjoint findings: checking each against all taken before it made ~4.5 million
    # comparisons (8 MiB of base64 has ~110,000 findings: minutes); sorting needs ~n log n
    count = 3000
    detector = ManyFindings(count)
    CountingInt.compared = 0
    found = detector.find(" " * (30 * count))
    assert len(found) == count
    assert CountingInt.compared < 40 * count


class ManyContested(ManyFindings):
    """As many rule findings as tokens, each overlapping one: every token is placed the slow way."""

    def _rule_findings(self, text: str) -> list[Finding]:
        return [Finding("generic-secret", CountingInt(30 * i + 20), CountingInt(30 * i + 28), "x" * 8)
                for i in range(self.count)]


def test_placing_findings_that_overlap_tokens_does_not_compare_each_with_every_span_taken() -> None:
    count = 3000
    detector = ManyContested(count)
    CountingInt.compared = 0
    found = detector.find(" " * (30 * count))
    assert [f.rule for f in found[:2]] == ["high-entropy", "high-entropy"]  # earlier start wins
    assert len(found) == count
    assert CountingInt.compared < 80 * count


class CountingText(str):
    """A text that counts how many characters its ``find`` calls may scan."""

    scanned = 0

    def find(self, sub: str, start: int | None = None, end: int | None = None) -> int:  # type: ignore[override]
        CountingText.scanned += len(self) - (start or 0)
        return super().find(sub, start, end)


def test_replacing_many_values_does_not_search_the_text_once_per_value() -> None:
    rng = random.Random(3)
    lines = [base64.b64encode(rng.randbytes(57)).decode() for _ in range(2000)]
    text = CountingText("\n".join(lines))
    CountingText.scanned = 0
    out = replacer({line: "<r>" for line in lines})(text)
    assert out == "\n".join(["<r>"] * len(lines))
    assert CountingText.scanned <= 4 * len(text)


def test_spans_refuse_any_overlap_and_accept_what_touches() -> None:
    spans = Spans(100)
    assert spans.take_if_free(10, 20)
    assert not spans.take_if_free(19, 30)
    assert not spans.take_if_free(0, 11)
    assert not spans.take_if_free(12, 15)
    assert not spans.take_if_free(5, 25)
    assert spans.take_if_free(20, 30)
    assert spans.take_if_free(0, 10)
    assert spans.taken == 3


def test_a_key_across_a_block_cut_in_base64_output_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    # thousands of findings per block, and a provider token split by the cut between two blocks
    monkeypatch.setattr("canal.presenter.textclean.OVERLAP", 4096)
    rng = random.Random(5)
    token = "ghp_" + "".join(rng.choice(ALPHABET) for _ in range(36))
    body = base64.encodebytes(rng.randbytes(60000)).decode()
    data = f"{body}GITHUB_TOKEN={token}\n{body}".encode()
    cut = len(body) + 20
    cleaner = TextCleaner(Redactor(b"k" * 32).redact_keep_lines)
    out = cleaner.feed(data[:cut]) + cleaner.feed(data[cut:]) + cleaner.finish()
    assert token.encode() not in out
    assert token[4:24].encode() not in out
    assert out.count(b"\n") == data.count(b"\n")
    assert b"REDACTED_SECRET:github-pat:" in out
    for line in body.splitlines()[:50]:
        assert line.encode() not in out


def _identifiers(rng: random.Random, count: int) -> list[str]:
    words = ["src", "Module", "HTTP", "Server2", "io", "ABCDEF", "x9", "Test", "config", "v2", "URL", "A1b"]
    seps = ["/", "_", "-", "+", ""]
    return ["".join(rng.choice(words) + rng.choice(seps) for _ in range(rng.randint(3, 12)))
            for _ in range(count)]


def test_word_count_bound_never_exceeds_the_words() -> None:
    rng = random.Random(11)
    randoms = ["".join(rng.choice(ALPHABET + "+/_-") for _ in range(rng.randint(1, 90))) for _ in range(3000)]
    tokens = _identifiers(rng, 500) + randoms
    for token in tokens:
        classes = token.translate(new_entropy._CLASSES)
        assert new_entropy._word_starts(classes) <= len(new_entropy.CAMEL.findall(token)), token
        assert new_entropy._made_of_words(token) == reference.made_of_words(token), token
    assert any(reference.made_of_words(t) for t in tokens)  # the identifiers do reach the slow path


def never_skips(possible: Callable[[str], frozenset[int] | None], covered: frozenset[int],
                rules: tuple[Rule, ...], texts: list[str]) -> int:
    """Every covered rule whose regex matches a text is among those ``possible`` says may match;
    returns how many such matches were checked."""
    matched = 0
    for text in texts:
        found = possible(text)
        assert found is not None
        for index in covered:
            if rules[index].pattern.search(text):
                matched += 1
                assert index in found, (rules[index].id, text[:80])
    return matched


def test_rule_prefilter_never_skips_a_rule_that_matches() -> None:
    # every built-in rule stripped of its keywords, so each is a prefilter candidate: wherever its own
    # regex matches an ASCII text (the corpus, upper-cased too, and generated text), the prefilter
    # must report it as possible
    # (the slowest two to compile in prefilter mode, seconds each, are left out: the detector only
    # prefilters rules without keywords, and these have keywords)
    slow = {"gcp-service-account-key", "connection-string-password"}
    rules = tuple(dataclasses.replace(r, keywords=(), anchored=False) for r in builtin_rules().rules
                  if r.id not in slow)
    prefilter = RulePrefilter(rules)
    assert len(prefilter.covered) >= 30
    texts = [t for t in (*TEXTS, "\n".join(TEXTS).upper(), *(generated(s) for s in range(40))) if t.isascii()]
    assert never_skips(prefilter.possible, prefilter.covered, rules, texts) >= 60
    assert prefilter.possible("ordinary output, nothing to see\n") == frozenset()


def test_rule_prefilter_stands_aside_outside_ascii_and_for_set_operations() -> None:
    discord = next(r for r in builtin_rules().rules if not r.keywords)
    prefilter = RulePrefilter((discord,))
    assert prefilter.covered == frozenset({0})
    assert prefilter.possible("héllo") is None
    odd = dataclasses.replace(discord, expression=r"[[a-z]--[aeiou]]{3}")
    assert RulePrefilter((odd,)).covered == frozenset()


def test_a_keyword_set_is_compiled_once_and_scanned_from_many_threads() -> None:
    """A server made a redactor, and so compiled its keyword database (1.4 ms), on every call."""
    import threading

    words = ["alpha_key", "bravo_token", "charlie"]
    first, second = KeywordScanner(words), KeywordScanner(reversed(words))
    assert first._db is not None
    assert first._db is second._db  # one compiled database per keyword set
    assert KeywordScanner([*words, "delta"])._db is not first._db
    texts = [f"x {w} y" * 50 for w in words]
    found: list[set[str]] = []

    def scan(text: str) -> None:
        for _ in range(200):
            found.append(second.scan(text).present if len(found) % 2 else first.scan(text).present)

    threads = [threading.Thread(target=scan, args=(t,)) for t in texts]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(found) == 600
    assert all(len(hit) == 1 and hit <= set(words) for hit in found)
