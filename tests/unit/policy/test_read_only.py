"""The decision's ``read_only`` fact: true only for commands made wholly of known read-only program
invocations (no write redirect, no option that writes or runs code, nothing opaque). The pipeline skips
the workspace checkpoint only then, so a false "true" would let a change run unprotected."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from canal.policy import Policy

CORPUS = Path(__file__).resolve().parents[2] / "data" / "corpus"

READ_ONLY = [
    "ls", "cat f", "grep -rn x .", "git status", "git diff", "ls -la src | grep py", "cd src && cat a.py",
    "head -n 5 f 2>/dev/null", "wc -l < f", "sed -n 1,5p f", "find . -name '*.py' -type f",
    "git log --oneline -5", "git show HEAD:README.md", "git branch -a", "sort names.txt", "uniq -c f",
    "cat <<'EOF'\nrm -rf /\nEOF", "echo 'rm -rf /'", "if [ -f setup.py ]; then echo yes; fi", "x=1 ls",
    "diff a b", "du -sh .", "stat f", "tree -L 2",
]
NOT_READ_ONLY = [
    "ls > f", "ls >> f", "sort -o f x", "sort --out=f x", "sed -i 's/a/b/' f", "sed -n 'w out' f",
    "find . -delete", "find . -name x -exec rm {} \\;", "find . -fprint out", "git status; rm x",
    "python3 -c 'print(1)'", "make", "echo $(rm x)", "cat <(rm x)", "PAGER='rm -rf data' git log",
    "timeout 5 ls", "./ls", "git -C x status", "git -c core.pager=sh log", "git branch new",
    "git diff --output=f", "git log --outp=x", "git diff --ext-diff", "rg --pre=x y", "rg -z y",
    "uniq a b", "tree -o f", "sort --compress-program sh x", "date -s 2020-01-01", "file -C -m x",
    "cat f <> f", "cat f >& out", 'ls "$HOME"', "tee f", "touch f", "git commit -m x", "ls &> f",
    "f() { rm -rf data; }; f", "alias ll='rm -rf data'; ll", "bash -c ls", "xargs cat < list", "",
    "ls; npm test", "cat f | sh", "LD_PRELOAD=/x.so ls", "printf -v PATH /tmp; ls", "cat /dev/sda > f",
]


@pytest.mark.parametrize("command", READ_ONLY)
def test_read_only_commands(standard: Policy, strict: Policy, command: str) -> None:
    assert standard.decide(command).read_only, command
    assert strict.decide(command).read_only, command


@pytest.mark.parametrize("command", NOT_READ_ONLY)
def test_commands_that_may_write_or_run_code_are_not_read_only(standard: Policy, command: str) -> None:
    assert not standard.decide(command).read_only, command


def test_a_session_that_changed_path_is_never_read_only(standard: Policy) -> None:
    assert standard.decide("ls").read_only
    assert not standard.decide("ls", env={"PATH": "/workspace/bin:/usr/bin"}).read_only
    assert not standard.decide("git log", env={"GIT_DIR": "/tmp/x"}).read_only


def test_an_exact_argv_is_read_only_by_the_same_rules(standard: Policy) -> None:
    assert standard.decide_argv(["git", "status"]).read_only
    assert not standard.decide_argv(["sort", "-o", "f", "x"]).read_only
    assert not standard.decide_argv(["bash", "-c", "ls"]).read_only


# Categories whose commands strict refuses for what they read (secrets), not for writing.
_READS_SECRETS = frozenset({"secret_reads_via_other_tools", "secret-read"})
_READS_SECRETS_IDS = frozenset({"WO-07"})  # cat /proc/self/environ, filed under obfuscation


def _corpus() -> list[tuple[str, str, str]]:
    """(id, command, category) of every adversarial case strict refuses: each may write or run code."""
    out: list[tuple[str, str, str]] = []
    for name in ("policy-adversarial.yaml", "canal-findings.yaml"):
        for group, cases in yaml.safe_load((CORPUS / name).read_text()).items():
            out += [(c["id"], c["cmd"], group) for c in cases
                    if c["strict"] in ("not-allow", "deny", "confirm")]
    for name in ("policy-disguises.yaml", "canal-disguises.yaml"):
        cases: list[dict[str, Any]] = yaml.safe_load((CORPUS / name).read_text())
        # every family disguises a destructive command, except secret reads (`cat .env` spelled otherwise)
        out += [(c["id"], c[k], c["family"]) for c in cases for k in ("canonical", "disguised")
                if not c["canonical"].startswith("cat ")]
    return out


def test_no_command_the_corpus_marks_as_writing_is_read_only(standard: Policy, strict: Policy) -> None:
    cases = _corpus()
    assert len(cases) > 250
    wrongly = [(i, cmd) for i, cmd, group in cases
               if group not in _READS_SECRETS and i not in _READS_SECRETS_IDS
               and (standard.decide(cmd).read_only or strict.decide(cmd).read_only)]
    assert wrongly == []


def test_read_only_never_exceeds_what_strict_allows(strict: Policy) -> None:
    """The read-only table and strict's read-only allow rules agree: every command read_only vouches
    for, strict runs without confirmation (secret reads aside, which strict confirms for reading)."""
    benign = yaml.safe_load((CORPUS / "policy-benign.yaml").read_text())
    commands = [*READ_ONLY, *(c["cmd"] for c in benign)]
    for cmd in commands:
        decision = strict.decide(cmd)
        if decision.read_only:
            assert decision.action == "allow", (cmd, decision.reasons)
