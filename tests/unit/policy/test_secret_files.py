"""Issue 35: strict's secret-read rule names credential files no test named, so removing one from the
rule let `cat` of it through. Each is asked about, in the workspace and in the home folder, however
the program reads it."""

from __future__ import annotations

import pytest

from canal.policy.engine import Policy
from canal.policy.loader import load_policy

SECRETS = (".netrc", ".git-credentials", ".npmrc", ".pypirc", ".kube/config", ".docker/config.json",
           ".aws/credentials", ".ssh/id_ed25519", ".env", ".env.local")


@pytest.fixture(scope="module")
def strict() -> Policy:
    return load_policy("strict")


@pytest.mark.parametrize("name", SECRETS)
@pytest.mark.parametrize("form", ["cat {p}", "head -n1 {p}", "grep -h x {p}", "cat < {p}"])
def test_strict_never_reads_a_credential_file_unasked(strict: Policy, name: str, form: str) -> None:
    for path in (name, f"~/{name}", f"/workspace/sub/{name}"):
        decision = strict.decide(form.format(p=path))
        assert decision.action != "allow", (path, form, decision)


def test_an_ordinary_file_is_still_read(strict: Policy) -> None:
    assert strict.decide("cat notes.txt").action == "allow"
    assert strict.decide("cat netrc.md").action == "allow"
