"""Issue 36's policy findings, each with the exact commands the review ran (the corpus,
``test_edges_corpus.py``, holds other instances of every family)."""

from __future__ import annotations

import pytest

from canal.policy import Policy


@pytest.mark.parametrize("command", [
    "date --file=.env", "diff --to-file=.env a.txt", "diff --from-file=.env", "wc --files0-from=.env",
    "du --files0-from=.env", "git show HEAD:.env", "git show :.env", "jq -n env"])
def test_finding_3_strict_asks_before_reading_a_secret_named_in_an_option_or_a_revision(
        strict: Policy, command: str) -> None:
    decision = strict.decide(command)
    assert decision.action == "confirm"
    assert "secret-read" in decision.rule_ids


@pytest.mark.parametrize("command", ["file --compile -m F", "ls > /dev/shm/x"])
def test_finding_4_strict_asks_before_a_long_writing_option_or_a_write_to_dev_shm(
        strict: Policy, command: str) -> None:
    assert strict.decide(command).action == "confirm"


@pytest.mark.parametrize("command", ["sudo ls", "sudo cat /etc/shadow", "sudo grep -r x /root", "doas ls",
                                     "pkexec ls", "su -c ls", "cat /etc/shadow"])
def test_finding_7_strict_never_allows_privilege_wrappers_nor_system_secrets(
        strict: Policy, command: str) -> None:
    assert strict.decide(command).action != "allow"


def test_finding_7_a_carriage_return_bash_keeps_in_the_word_is_opaque(
        strict: Policy, standard: Policy) -> None:
    for policy in (strict, standard):
        decision = policy.decide("ls\rnpm install x")
        assert decision.action == "confirm", decision.to_json()


@pytest.mark.parametrize("command", [
    "rm /etc/passwd", "rm ~/.ssh/id_rsa", "rm /var/log/auth.log", "echo x > /etc/passwd",
    "echo x | tee /etc/hosts", "> /var/log/syslog", "find . -fprint /etc/passwd", "find . -fls /etc/passwd",
    "find . -fprint0 /etc/passwd", "rm -f /etc/passwd"])
def test_finding_7_standard_confirms_deletes_and_overwrites_outside_the_workspace(
        standard: Policy, command: str) -> None:
    assert standard.decide(command).action == "confirm"


@pytest.mark.parametrize("command", ["rm -rf ~", "rm -rf $HOME", 'rm -rf "$HOME"', "rm -rf ${HOME}/"])
def test_finding_7_every_spelling_of_home_is_denied(standard: Policy, command: str) -> None:
    decision = standard.decide(command)
    assert decision.action == "deny"
    assert "rm-root" in decision.rule_ids


@pytest.mark.parametrize("command", ["base64 f.bin", "numfmt --to=iec 1024", "tac log.txt",
                                     "sed -n -e 122,202p f.py", "echo $(git log)"])
def test_finding_8_strict_allows_the_read_only_cases_it_asked_about(strict: Policy, command: str) -> None:
    decision = strict.decide(command)
    assert decision.action == "allow", decision.to_json()
