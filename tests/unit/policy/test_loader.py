"""Malformed policies are refused, naming file, rule and position."""

from __future__ import annotations

from pathlib import Path

import pytest

from canal.policy import build_policy, load_fork_policy, load_policy
from canal.policy.errors import POLICY_NOT_FOUND, PolicyLoadError
from canal.policy.parser_cache import VerifiedMarks
from tests.error_codes import raises_code
from tests.policy_examples import examples_run

GOOD_RULE = """
  - id: no-curl
    decision: confirm
    programs: [curl]
    expression: "true"
    examples: {match: ["curl x"], not_match: ["ls"]}
"""


def _write(tmp_path: Path, body: str) -> Path:
    path = tmp_path / "p.yaml"
    path.write_text(body)
    return path


def _refused(tmp_path: Path, body: str) -> PolicyLoadError:
    path = _write(tmp_path, body)
    with pytest.raises(PolicyLoadError) as info:
        build_policy([path])
    assert info.value.file == str(path)
    assert info.value.code == "POLICY_INVALID"
    return info.value


def test_good_file_loads(tmp_path: Path) -> None:
    policy = build_policy([_write(tmp_path, "name: mine\ndefault: allow\nrules:" + GOOD_RULE)])
    assert policy.decide("curl https://x").action == "confirm"
    assert policy.decide("ls").action == "allow"


def test_bad_yaml_names_line(tmp_path: Path) -> None:
    err = _refused(tmp_path, "name: mine\ndefault: allow\nrules: [\n  - id: x\n")
    assert err.line >= 3
    assert "not valid YAML" in err.message


def test_unknown_field_names_rule_and_line(tmp_path: Path) -> None:
    body = "name: mine\ndefault: allow\nrules:" + GOOD_RULE + "    severity: high\n"
    err = _refused(tmp_path, body)
    assert err.rule == "no-curl"
    assert err.line == 9  # the line of the unknown field
    assert "severity" in err.message


def test_missing_decision_is_refused(tmp_path: Path) -> None:
    err = _refused(tmp_path, "name: mine\ndefault: allow\nrules:\n  - id: r1\n    expression: 'true'\n")
    assert err.rule == "r1"
    assert "decision" in err.message


def test_missing_default_is_refused(tmp_path: Path) -> None:
    err = _refused(tmp_path, "name: mine\nrules: []\n")
    assert "default" in err.message


def test_bad_cel_names_rule_and_position(tmp_path: Path) -> None:
    body = ("name: mine\ndefault: allow\nrules:\n  - id: broken\n    decision: deny\n"
            "    expression: 'program =='\n")
    err = _refused(tmp_path, body)
    assert err.rule == "broken"
    assert err.line == 6
    assert "CEL does not compile" in err.message


def test_nested_comprehension_is_refused(tmp_path: Path) -> None:
    body = ("name: mine\ndefault: allow\nrules:\n  - id: slow\n    decision: deny\n"
            "    expression: 'args.exists(a, args.exists(b, a == b))'\n")
    assert "nested" in _refused(tmp_path, body).message


def test_failing_example_is_refused(tmp_path: Path) -> None:
    body = GOOD_RULE.replace('match: ["curl x"]', 'match: ["wget x"]')
    err = _refused(tmp_path, "name: mine\ndefault: allow\nrules:" + body)
    assert err.rule == "no-curl"
    assert "'wget x' did not match" in err.message


def test_example_hitting_eval_error_is_refused(tmp_path: Path) -> None:
    body = ("name: mine\ndefault: allow\nrules:\n  - id: typo\n    decision: deny\n"
            "    expression: 'progam == \"rm\"'\n    examples: {match: ['rm x']}\n")
    assert "failed to evaluate" in _refused(tmp_path, body).message


def test_duplicate_rule_id_is_refused(tmp_path: Path) -> None:
    body = "name: mine\ndefault: allow\nrules:" + GOOD_RULE + GOOD_RULE
    assert "already defined" in _refused(tmp_path, body).message


def test_unknown_profile() -> None:
    with raises_code(POLICY_NOT_FOUND):
        load_policy("lenient")


def test_hash_is_stable_and_depends_on_rules(tmp_path: Path) -> None:
    assert load_policy("standard").hash == load_policy("standard").hash
    assert load_policy("standard").hash != load_policy("strict").hash
    extra = _write(tmp_path, "name: extra\ndefault: allow\nrules:" + GOOD_RULE)
    assert load_policy("standard", [extra]).hash != load_policy("standard").hash


def test_extra_file_cannot_loosen_default(tmp_path: Path) -> None:
    extra = _write(tmp_path, "name: extra\ndefault: allow\nrules:" + GOOD_RULE)
    assert load_policy("strict", [extra]).default == "confirm"


EXAMPLED = """name: mine
default: allow
rules:
  - id: no-curl
    decision: confirm
    programs: [curl]
    expression: "true"
    examples: {match: [%s], not_match: ["ls"]}
"""


def test_verified_examples_are_remembered_per_policy_and_engine(tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    ran = examples_run(monkeypatch)
    marks = VerifiedMarks(tmp_path / "v", b"k" * 32)
    first = load_policy("standard", verified=marks)
    found = list((tmp_path / "v").iterdir())
    assert len(found) == 1
    assert found[0].stat().st_mode & 0o777 == 0o600
    again = load_policy("standard", verified=marks)
    assert ran == ["standard"]  # the second load compiled the rules and skipped only the examples
    assert again.hash == first.hash
    assert again.decide("rm -rf /").action == "deny"
    load_fork_policy("standard", verified=marks)  # another policy: its examples run
    assert ran == ["standard", "autonomous"]


def test_a_new_failing_example_is_run_though_the_rules_are_the_same(tmp_path: Path) -> None:
    path = tmp_path / "p.yaml"
    path.write_text(EXAMPLED % '"curl x"')
    marks = VerifiedMarks(tmp_path / "v", b"k" * 32)
    build_policy([path], verified=marks)
    path.write_text(EXAMPLED % '"wget x"')  # same rule, an example it does not fire on: refused
    with pytest.raises(PolicyLoadError, match="did not match"):
        build_policy([path], verified=marks)


@pytest.mark.parametrize("forge", ["touched", "other key", "truncated", "symlink"])
def test_a_mark_not_made_with_the_key_is_not_trusted(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                     forge: str) -> None:
    """A mark planted or copied without the key (or damaged) counts as never written: examples run."""
    ran = examples_run(monkeypatch)
    path = tmp_path / "p.yaml"
    path.write_text(EXAMPLED % '"curl x"')
    build_policy([path], verified=VerifiedMarks(tmp_path / "made", b"o" * 32))
    (made,) = (tmp_path / "made").iterdir()
    folder = tmp_path / "v"
    folder.mkdir(mode=0o700)
    mark = folder / made.name
    if forge == "touched":
        mark.write_bytes(b"")
    elif forge == "other key":
        mark.write_bytes(made.read_bytes())  # a true mark, under another key
    elif forge == "truncated":
        mark.write_bytes(made.read_bytes()[:20])
    else:
        mark.symlink_to(made)
    build_policy([path], verified=VerifiedMarks(folder, b"k" * 32))
    assert ran == ["mine", "mine"]
