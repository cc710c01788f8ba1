"""Redactor: every secret of the corpus vanishes, benign text stays, placeholders are stable."""

from __future__ import annotations

import base64
import hmac
import json
import re
from pathlib import Path
from typing import Any

import pytest

from canal.host.ports import Redactor as RedactorPort
from canal.host.redact import Detector, Redactor, builtin_rules, restore

CORPUS = json.loads((Path(__file__).parents[2] / "data" / "secrets" / "corpus.json").read_text())
PLACEHOLDER = re.compile(r"\[REDACTED_SECRET:[a-z0-9-]+:[0-9a-f]{12}\]")


@pytest.fixture(scope="module")
def redactor() -> Redactor:
    return Redactor(b"k" * 32)


# rules that need no keyword because their regex is specific and cheap on its own
NO_KEYWORDS = {"discord-bot-token"}



def test_built_in_rules_compile_with_unique_ids_and_keywords() -> None:
    rules = builtin_rules().rules
    ids = [r.id for r in rules]
    assert len(ids) == len(set(ids)) >= 50
    assert {r.id for r in rules if not r.keywords} == NO_KEYWORDS
    assert all(k == k.lower() for r in rules for k in r.keywords)


def test_every_built_in_rule_finds_a_corpus_secret(redactor: Redactor) -> None:
    found = {f.rule for e in CORPUS["secrets"] for f in redactor.findings(e["text"])}
    assert {r.id for r in builtin_rules().rules} - found == set()


@pytest.mark.parametrize("entry", [e for e in CORPUS["secrets"] if e["kind"] != "high-entropy"],
                         ids=lambda e: e["kind"])
def test_corpus_secret_is_named_by_a_rule(redactor: Redactor, entry: dict[str, Any]) -> None:
    rules = {f.rule for f in redactor.findings(entry["text"])}
    assert rules - {"high-entropy"}, rules


@pytest.mark.parametrize("entry", CORPUS["secrets"], ids=[e["kind"] for e in CORPUS["secrets"]])
def test_corpus_secret_is_replaced(redactor: Redactor, entry: dict[str, Any]) -> None:
    out = redactor(entry["text"])
    assert entry["secret"] not in out
    assert PLACEHOLDER.search(out)


def test_whole_corpus_in_one_text(redactor: Redactor) -> None:
    text = "\n".join(e["text"] for e in CORPUS["secrets"])
    out = redactor(text)
    leaked = [e["kind"] for e in CORPUS["secrets"] if e["secret"] in out]
    assert leaked == []


@pytest.mark.parametrize("text", CORPUS["benign"])
def test_benign_text_is_untouched(redactor: Redactor, text: str) -> None:
    assert redactor(text) == text


def test_placeholder_is_stable_per_value_and_keyed() -> None:
    entry = CORPUS["secrets"][0]
    one, two = Redactor(b"a" * 32), Redactor(b"b" * 32)
    assert one(entry["text"]) == one(entry["text"]) == Redactor(b"a" * 32)(entry["text"])
    assert one(entry["text"]) != two(entry["text"])


@pytest.mark.parametrize("key", [b"k" * 32, b"\x00" * 64, bytes(range(65)), b"x" * 200, b"short"])
def test_placeholder_ids_are_hmac_sha256_of_the_value(key: bytes) -> None:
    # the ids come from precomputed HMAC states: they must stay the ids hmac.digest gives, or every
    # placeholder in sealed state and saved outputs would change meaning
    redactor = Redactor(key)
    for value in ("hunter2", "ghp_" + "a1B2" * 9, "é and ☃", "x" * 300):
        digest = hmac.digest(key, value.encode(), "sha256").hex()[:12]
        assert redactor.placeholder("rule", value) == f"[REDACTED_SECRET:rule:{digest}]"


def _held(obj: object, depth: int = 3) -> list[str]:
    """Every string an object holds in its attributes, dictionaries, sets and sequences."""
    if isinstance(obj, str):
        return [obj]
    if depth == 0:
        return []
    if isinstance(obj, dict):
        return [s for k, v in obj.items() for s in (*_held(k, depth - 1), *_held(v, depth - 1))]
    if isinstance(obj, list | tuple | set | frozenset):
        return [s for item in obj for s in _held(item, depth - 1)]
    return [s for value in getattr(obj, "__dict__", {}).values() for s in _held(value, depth - 1)]


def test_the_redactor_keeps_no_value_it_found() -> None:
    # a server's redactor lives for days: each value kept would stay there in clear for its life (8 MiB
    # of base64 has ~110,000). The callers that restore values get their own map; the redactor keeps none
    redactor = Redactor(b"k" * 32)
    values = ["ghp_" + "a1B2" * 9, "ghp_" + "c3D4" * 9, "ghp_" + "e5F6" * 9, "ghp_" + "g7H8" * 9]
    out = redactor.redact_keep_lines(f"GITHUB_TOKEN={values[0]}\n"
                                     + base64.b64encode(bytes(range(60))).decode() + "\n")
    assert values[0] not in out
    assert out.count("\n") == 2
    assert values[1] not in redactor.redact(f"GITHUB_TOKEN={values[1]}")
    _, mapping = redactor.redact_with_map(f"GITHUB_TOKEN={values[2]}")
    assert values[2] in mapping.values()
    replace, found = redactor.redact_many([f"GITHUB_TOKEN={values[3]}", "plain"])
    assert values[3] in found.values()
    assert replace("plain") == "plain"
    held = _held(redactor)
    assert not [v for v in values if any(v in s for s in held)]


def test_every_occurrence_of_a_found_value_goes(redactor: Redactor) -> None:
    secret = CORPUS["secrets"][0]["secret"]
    out = redactor(f"aws_access_key_id = {secret}\nlater the bare value again: {secret}")
    assert secret not in out
    assert len(set(PLACEHOLDER.findall(out))) == 1


def test_redaction_is_idempotent(redactor: Redactor) -> None:
    text = "\n".join(e["text"] for e in CORPUS["secrets"])
    once = redactor(text)
    assert redactor(once) == once


def test_restore_puts_values_back_from_the_map() -> None:
    red = Redactor(b"k" * 32)
    text = "\n".join(e["text"] for e in CORPUS["secrets"][:5])
    out, mapping = red.redact_with_map(text)
    assert restore(out, mapping) == text


def test_allowlists_and_the_generic_digit_rule_apply() -> None:
    red = Redactor(b"k" * 32, Detector(entropy=False))
    assert red("aws_access_key_id = AKIAIOSFODNN7EXAMPLE") == "aws_access_key_id = AKIAIOSFODNN7EXAMPLE"
    assert red("password=changeme_please") == "password=changeme_please"  # no digit: generic skips it


def test_matches_the_runtime_port(redactor: Redactor) -> None:
    port: RedactorPort = redactor
    assert port("plain text") == "plain text"


def test_redact_many_finds_secrets_in_new_texts_after_clean_ones_were_cached() -> None:
    red = Redactor(b"k" * 32)
    clean = ["status", "done", "make test"]
    fn, found = red.redact_many(clean)
    assert found == {}
    assert [fn(t) for t in clean] == clean
    entry = CORPUS["secrets"][3]
    texts = [*clean, entry["text"], f"again: {entry['secret']}"]
    fn, found = red.redact_many(texts)
    assert all(entry["secret"] not in fn(t) for t in texts)
    assert entry["secret"] in found.values()


def test_a_secret_split_across_two_texts_survives_in_neither(redactor: Redactor) -> None:
    """Issue 35: redact_many promises a secret split across two fields never survives in either; no
    test said so. A private key cut in the middle, half in each of two strings of one document."""
    key = next(e["secret"] for e in CORPUS["secrets"] if e["kind"] == "rsa-private-key")
    lines = key.split("\n")
    first, second = "\n".join(lines[:7]), "\n".join(lines[7:])
    apply, _ = Redactor(b"k" * 32).redact_many(["note", first, second])
    for half in (apply(first), apply(second)):
        for line in lines[1:-1]:
            assert line not in half
