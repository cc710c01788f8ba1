"""CANAL_REDACT_RULES: an operator's gitleaks-format files add rules to the built-in ones; a bad file
is refused with an error naming the file and the rule."""

from __future__ import annotations

import os
import textwrap
from pathlib import Path

import pytest

from canal.core.errors import ExitCode
from canal.host.redact import ENV_VAR, REDACT_RULES_INVALID, Detector, Redactor, builtin_rules, default_rules
from tests.error_codes import raises_code

GHP = "ghp_4r6bSr0pFBOPCWBRDFOxEzf5FJtRBZRAJyu5"
ACME = "acme_k3y_9f8e7d6c5b4a39281706"

# A file in the gitleaks format written for these tests: a rule with a secret group and keywords,
# an old-style per-rule allowlist, a rule that needs a file path, an [extend] table and a global
# allowlist (which applies to this file's rules only).
EXTRA = textwrap.dedent("""\
    title = "operator rules"
    [extend]
    useDefault = true

    [[rules]]
    id = "acme-key"
    description = "ACME internal key"
    regex = '''(?i)acme[_-]?key\\s*[:=]\\s*(acme_k3y_[0-9a-f]{20})'''
    secretGroup = 1
    keywords = ["acme"]
    tags = ["internal"]
    [rules.allowlist]
    regexes = ['''0{20}$''']

    [[rules]]
    id = "acme-keystore-file"
    path = '''\\.acmestore$'''

    [allowlist]
    description = "test fixtures"
    regexes = ['''^acme_k3y_1111''', '''^ghp_''']
    paths = ['''fixtures/''']
    """)


@pytest.fixture
def extra_file(tmp_path: Path) -> Path:
    path = tmp_path / "operator.toml"
    path.write_text(EXTRA)
    return path


def rules_file(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "bad.toml"
    path.write_text(textwrap.dedent(text))
    return path


def test_without_the_variable_the_built_in_rules_are_used(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(ENV_VAR, raising=False)
    assert default_rules() is builtin_rules()


def test_an_operator_file_adds_rules_to_the_built_in_ones(extra_file: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(ENV_VAR, str(extra_file))
    rules = default_rules()
    assert len(rules.rules) == len(builtin_rules().rules) + 1
    assert rules.skipped == ("acme-keystore-file",)
    red = Redactor(b"k" * 32)
    out = red(f"ACME_KEY={ACME}\ntoken {GHP}")
    assert ACME not in out
    assert GHP not in out
    assert "[REDACTED_SECRET:acme-key:" in out
    assert out.startswith("ACME_KEY=[REDACTED_SECRET:")  # secretGroup: only the value goes


def test_several_files_separated_by_the_path_separator(tmp_path: Path, extra_file: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    second = tmp_path / "second.toml"
    second.write_text("[[rules]]\nid = 'zeta-token'\nregex = '''zeta_[0-9]{12}'''\nkeywords = ['zeta_']\n")
    monkeypatch.setenv(ENV_VAR, f"{extra_file}{os.pathsep}{second}")
    found = {f.rule for f in Detector().find(f"acme_key: {ACME} and zeta_123456789012")}
    assert {"acme-key", "zeta-token"} <= found


def test_allowlists_of_a_file_apply_to_its_own_rules_only(extra_file: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(ENV_VAR, str(extra_file))
    detector = Detector(entropy=False)

    def rules(text: str) -> set[str]:
        return {f.rule for f in detector.find(text)}

    assert "acme-key" in rules(f"acme_key: {ACME}")
    assert "acme-key" not in rules("acme_key: acme_k3y_00000000000000000000")  # its own allowlist
    assert "acme-key" not in rules("acme_key: acme_k3y_1111aaaaaaaaaaaaaaaa")  # its file's global one
    # that global allowlist also names ghp_ tokens, yet the built-in github-pat rule still finds them
    assert rules(f"token {GHP}") == {"github-pat"}


@pytest.mark.parametrize(("text", "rule", "what"), [
    ("[[rules]]\nid = 'broken'\nregex = '''(unclosed'''\n", "broken", "regex does not compile"),
    ("[[rules]]\nid = 'typed'\nregex = 'x'\nsecretGroup = 'one'\n", "typed", "secretGroup"),
    ("[[rules]]\nregex = 'x'\n", "#1", "rules.0.id"),
    ("[[rules]]\nid = 'a'\nregex = 'x'\n[[rules.allowlists]]\nregexes = ['''[z-a]''']\n", "a",
     "regex does not compile"),
    ("[[rules]\nid = 'x'\n", "", "not valid TOML"),
    ("title = 'empty'\n", "", "no [[rules]]"),
])
def test_a_bad_file_is_refused_naming_file_and_rule(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                    text: str, rule: str, what: str) -> None:
    path = rules_file(tmp_path, text)
    monkeypatch.setenv(ENV_VAR, str(path))
    with raises_code(REDACT_RULES_INVALID) as err:
        Redactor(b"k" * 32)  # fails closed: no redactor without every rule the operator asked for
    assert str(path) in err.value.message
    assert what in err.value.message
    assert err.value.details["file"] == str(path)
    assert err.value.details["rule"] == rule
    if rule:
        assert f"rule {rule!r}" in err.value.message
    assert ENV_VAR in err.value.hint
    assert err.value.code == "REDACT_RULES_INVALID"
    assert err.value.exit_code == ExitCode.USAGE


def test_a_missing_file_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(ENV_VAR, str(tmp_path / "nope.toml"))
    with raises_code(REDACT_RULES_INVALID, match=r"nope\.toml: cannot read it"):
        default_rules()


def test_the_built_in_file_parses_under_its_own_name() -> None:
    assert builtin_rules().sources == ("host/redact/rules.toml (built in)",)
    assert builtin_rules().skipped == ()


def test_the_built_in_rules_compile_each_pattern_when_it_first_runs() -> None:
    """Compiling all 50 took 40-50 ms of a new project's first command, whose output needs few or none
    (issue 33): read without compiling, and every pattern and allowlist of them compiles."""
    from importlib import resources

    from canal.host.redact.rules import BUILTIN, parse_rules

    text = resources.files("canal.host.redact").joinpath(BUILTIN).read_text(encoding="utf-8")
    fresh = parse_rules(text, "built in", checked=False)
    assert not [r.id for r in fresh.rules if "pattern" in vars(r)]
    assert not [a for r in fresh.rules for a in r.allowlists if "regexes" in vars(a)]
    for rule in builtin_rules().rules:
        assert rule.pattern.pattern == rule.expression, rule.id
        assert all(a.regexes for a in rule.allowlists if a.expressions), rule.id
