"""The high-entropy checks done over a whole block at once (``batch``) decide every token as the
per-token code does: on base64, on log-like text, on generated text full of edges, and through the
detector on texts long enough to take the batch path."""

from __future__ import annotations

import base64
import random
import subprocess
import sys

import numpy as np
import pytest

from canal.host.redact import Detector, batch, entropy
from canal.host.redact.runs import run_spans, runs, token_map
from tests.unit.redact import reference
from tests.unit.redact.test_one_pass import ALPHABET, TEXTS, generated


def per_token(text: str) -> list[tuple[int, int]]:
    return list(entropy.high_entropy_tokens(text))


def exactly_four_bits(rng: random.Random) -> str:
    """A token of 16 symbols twice each: Shannon entropy 4.0 exactly, the threshold."""
    symbols = rng.sample(ALPHABET, 16)
    while not (any(c.islower() for c in symbols) and any(c.isupper() for c in symbols)
               and any(c.isdigit() for c in symbols)):
        symbols = rng.sample(ALPHABET, 16)
    chars = symbols * 2
    rng.shuffle(chars)
    return "".join(chars)


def words_switching_often(rng: random.Random) -> str:
    """Made of words (``Ab12Cd34...``) yet dense and switching often: only the word check rules it out."""
    return "".join(rng.choice("ABCDEFGHIJKLMNOPQRSTUVWXYZ") + rng.choice("abcdefghijklmnopqrstuvwxyz")
                   + str(rng.randint(10, 99)) for _ in range(rng.randint(8, 12)))


def edges(seed: int, size: int = 60000) -> str:
    """Runs of every kind the checks tell apart, many of them random (so the array path decides); a
    public PEM block in every third text only (with one, every finding is checked the per-token way)."""
    rng, out, total = random.Random(seed), [], 0
    makers = [
        lambda: base64.b64encode(rng.randbytes(rng.randint(15, 70))).decode(),
        lambda: base64.urlsafe_b64encode(rng.randbytes(rng.randint(15, 70))).decode(),
        lambda: "".join(rng.choice(ALPHABET + "+/_-") for _ in range(rng.randint(20, 30))),
        lambda: "".join(rng.choice(ALPHABET) for _ in range(rng.randint(22, 26))) + "=" * rng.randint(0, 4),
        lambda: f"{''.join(rng.choices(ALPHABET, k=30))}={''.join(rng.choices(ALPHABET, k=30))}",
        lambda: exactly_four_bits(rng),
        lambda: "".join(rng.choice("0123456789abcdefABCDEF") for _ in range(rng.choice((32, 40, 64)))),
        lambda: "-".join("".join(rng.choice("0123456789ABCDEF") for _ in range(n)) for n in (8, 4, 4, 4, 12)),
        lambda: "sha512-" + base64.b64encode(rng.randbytes(48)).decode(),
        lambda: "AAAAB3NzaC1yc2EAAAADAQABAAABAQ" + base64.b64encode(rng.randbytes(40)).decode(),
        lambda: "src/Module2_HTTPServer/Test_config-v2/URLHandler9/" * rng.randint(1, 3),
        lambda: words_switching_often(rng),
        lambda: rng.choice(["é", "\udc80", "☃", "İ", "ß"]) + base64.b64encode(rng.randbytes(30)).decode(),
    ]
    if seed % 3 == 0:
        pem = base64.encodebytes(rng.randbytes(150)).decode()
        makers.append(lambda: f"-----BEGIN CERTIFICATE-----\n{pem}-----END CERTIFICATE-----")
    while total < size:
        piece = rng.choice(makers)() if rng.random() < 0.7 else rng.choice(["\n", " ", ":", '"', ".", "\t"])
        out.append(piece)
        total += len(piece)
    return "".join(out)


@pytest.mark.parametrize("seed", range(12))
def test_the_array_path_decides_each_token_as_the_per_token_code(seed: int) -> None:
    text = edges(seed)
    found = batch.high_entropy_tokens(text)
    assert found == per_token(text)
    assert len(found) > batch.FEW  # the arrays decided, not the per-token fallback


@pytest.mark.parametrize("seed", range(12))
def test_it_agrees_on_text_from_the_one_pass_tests(seed: int) -> None:
    text = generated(seed, 40000)
    assert batch.high_entropy_tokens(text) == per_token(text)


def test_it_agrees_on_base64_output_and_at_the_ends_of_the_text() -> None:
    rng = random.Random(1)
    text = base64.encodebytes(rng.randbytes(300000)).decode()
    for piece in (text, text.strip(), text[5:-7], text.replace("\n", " "), text[:23], text[:24]):
        assert batch.high_entropy_tokens(piece) == per_token(piece)
    assert len(batch.high_entropy_tokens(text)) > 3000


def test_runs_too_long_for_the_counts_are_decided_the_per_token_way() -> None:
    rng = random.Random(6)
    lines = base64.encodebytes(rng.randbytes(60000)).decode()
    text = f"{lines}{base64.b64encode(rng.randbytes(150000)).decode()}\n{lines}"  # one run of 200,000
    found = batch.high_entropy_tokens(text)
    assert found == per_token(text)
    assert any(end - start == 200000 for start, end in found)


def test_a_token_at_the_threshold_is_decided_the_per_token_way() -> None:
    rng = random.Random(2)
    tokens = [exactly_four_bits(rng) for _ in range(200)]
    assert all(entropy.shannon(t) == entropy.MIN_ENTROPY for t in tokens)
    text = "\n".join(tokens)
    assert batch.high_entropy_tokens(text) == per_token(text)
    assert batch.high_entropy_tokens(text)  # at the threshold is not below it: these are findings
    raw = text.encode()
    classes = np.frombuffer(raw.translate(batch._CLASS), np.uint8)
    starts, ends = batch._runs(classes)
    sure, maybe = batch._checks(np.frombuffer(raw, np.uint8), classes, starts, ends)
    assert len(starts) == 200
    assert not sure.any()  # so close to the threshold, the per-token code decides
    assert maybe.sum() == len(per_token(text)) > 0  # each finding among them was decided that way


def test_tokens_made_of_words_are_not_findings() -> None:
    rng = random.Random(4)
    tokens = [words_switching_often(rng) for _ in range(100)]
    assert all(entropy._switch_rate(t) >= entropy.MIN_SWITCH_RATE for t in tokens)
    text = "\n".join(tokens)
    assert batch.high_entropy_tokens(text) == per_token(text) == []


def test_it_agrees_on_the_corpus() -> None:
    text = "\n".join(TEXTS) * 3
    assert batch.high_entropy_tokens(text) == per_token(text)
    assert batch.high_entropy_tokens(text.upper()) == per_token(text.upper())


@pytest.mark.parametrize("seed", range(3))
def test_the_detector_on_long_texts_finds_what_the_old_detector_found(seed: int) -> None:
    text = edges(seed, 2 * batch.BATCH_MIN) + "\n".join(TEXTS)
    assert len(text) >= batch.BATCH_MIN
    assert Detector().find(text) == reference.ReferenceDetector().find(text)


@pytest.mark.parametrize("seed", range(6))
def test_run_spans_are_the_runs(seed: int) -> None:
    text = generated(seed, 20000) + edges(seed, 20000)
    mapped = token_map(text)
    for size in (1, 8, 24, 76):
        starts, ends = run_spans(mapped, size)
        assert list(zip(starts.tolist(), ends.tolist(), strict=True)) == list(runs(mapped, size))


def test_numpy_is_imported_with_the_first_long_text_not_at_start() -> None:
    # numpy costs ~0.1-0.4 s to import: every process that builds a redactor would pay it at start
    code = ("import sys; from canal.host.redact import Redactor; r = Redactor(b'k' * 32); "
            "r.redact('short text ghp_' + 'a1B2' * 9); print('numpy' in sys.modules); "
            "r.redact_keep_lines('x' * 20000); print('numpy' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["False", "True"]


WARMED = ("import sys; from canal.host.redact import prefilter; {call}; "
          "print('numpy' in sys.modules, 'canal.host.redact.batch' in sys.modules, "
          "prefilter._database.cache_info().currsize)")


@pytest.mark.parametrize("call", [
    "from canal.host.redact import warm_up; warm_up()",
    "from canal.cli.served import preload; [step() for step in preload()]",  # a server, when no request runs
])
def test_warming_up_does_what_the_first_long_text_would(call: str) -> None:
    # numpy's import and the rule gate's compile (0.2-0.4 s) are paid by whoever saves the first long
    # text in a process: in a server, the first big output of its life, unless warmed up ahead
    cold = subprocess.run([sys.executable, "-c", WARMED.format(call="pass")], capture_output=True,
                          text=True, check=True).stdout.split()
    first = ("from canal.host.redact import Redactor; "
             "Redactor(b'k' * 32).redact_keep_lines(('ghp_x ' + 'Ab1' * 9 + ' aws\\n') * 2000)")
    after_text = subprocess.run([sys.executable, "-c", WARMED.format(call=first)], capture_output=True,
                                text=True, check=True).stdout.split()
    warmed = subprocess.run([sys.executable, "-c", WARMED.format(call=call)], capture_output=True,
                            text=True, check=True).stdout.split()
    assert cold[:2] == ["False", "False"]
    assert warmed[:2] == after_text[:2] == ["True", "True"]
    assert int(warmed[2]) >= int(after_text[2]) > int(cold[2])
