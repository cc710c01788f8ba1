"""Strict holds against an adversarial agent (issue 16): real containers, each disguise refused, and the
proof that nothing ran, nothing was written and nothing was printed.

Every case tries to create a marker file (or to rewrite keep.txt, or to print the secret); after each
one an allowed command and the host both look for the marker.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from project_helpers import chown_tree

from canal.runtime.api import Canal

SECRET = "canal-test-secret-4f2a"
CASES = {
    "arithmetic [[ -eq ]]": "[[ 'a[$(touch /workspace/pwned)]' -eq 0 ]]",
    "arithmetic test -v": "test -v 'a[$(touch /workspace/pwned)]'",
    "arithmetic printf -v": "printf -v 'a[$(touch /workspace/pwned)]' %s x",
    "arithmetic read": "read 'a[$(touch /workspace/pwned)]' <<< 1",
    "arithmetic variable": "[[ x -eq 0 ]]",
    "arithmetic quoted in (( ))": "(( 'a[$(touch /workspace/pwned)]' ))",
    "arithmetic quoted in $(( ))": "echo $(( 'a[$(touch /workspace/pwned)]' ))",
    "subscript assignment": "A['a[$(touch /workspace/pwned)]']=1",
    "subscript through a pipe": "echo 'a[$(touch /workspace/pwned)]' | { read x; echo $((x)); }",
    "startup BASH_ENV": "BASH_ENV='$(touch /workspace/pwned)' bash -c true",
    "startup ENV": "ENV='$(touch /workspace/pwned)' sh -i < /dev/null",
    "redirect alone": "> pwned",
    "redirect in group": "{ 2> pwned; }",
    "redirect exec": "exec 3> pwned",
    "redirect append": ">> pwned",
    "sort --out prefix": "sort --out=pwned keep.txt",
    "sort compress program": "sort --compress-p=touch -S 1 keep.txt",
    "sed --in-place prefix": "sed --in-pl 's/keep/gone/' keep.txt",
    "sed e command": "sed -n '1e touch /workspace/pwned' keep.txt",
    "secret by glob": "cat .e?v",
    "secret by bracket": "cat .[e]nv",
    "secret by brace": "cat .{e,x}nv",
    "secret environ by ..": "cat /proc/self/../1/environ",
    "secret environ by cd": "cd /proc/1 && cat environ",
    "input spliced into a script by xargs": "echo 'touch /workspace/pwned' | xargs -I{} sh -c {}",
    "names spliced into a script by xargs": "echo x | xargs -I X sh -c 'touch /workspace/pwnedX'",
    "secret named at run time": "ls -a | xargs cat",
}


@pytest.fixture(scope="module")
def strict(host_env: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Canal]:
    project = tmp_path_factory.mktemp("strict") / "project"
    project.mkdir()
    (project / "canal.yaml").write_text("policy:\n  profile: strict\n")
    (project / "keep.txt").write_text("keep\n")
    (project / ".env").write_text(f"TOKEN={SECRET}\n")
    chown_tree(project)
    with Canal(project) as canal:
        yield canal
        canal.down()


@pytest.mark.parametrize("command", list(CASES.values()), ids=list(CASES))
def test_strict_runs_nothing_writes_nothing_prints_nothing(strict: Canal, command: str) -> None:
    result = strict.run(command)
    assert result.status in ("confirmation_required", "denied"), result.text
    assert result.exit_code is None
    assert SECRET not in result.text
    assert not result.output
    assert not [p.name for p in strict.project_dir.glob("pwned*")]
    assert (strict.project_dir / "keep.txt").read_text() == "keep\n"
    listing = strict.run("ls -a")
    assert listing.status == "ok", listing.text
    assert not [name for name in listing.output.split() if name.startswith("pwned")]


# What each case does when it runs unrefused (straight in the sandbox, no policy): the positive control
# of the test above (issue 35). None: no effect a marker can see (kept as a case: strict refuses it).
EFFECTS = {name: "pwned" for name in CASES} | {
    "arithmetic variable": None, "sort compress program": None, "sed --in-place prefix": "keep",
    "secret by glob": "secret", "secret by bracket": "secret", "secret by brace": "secret",
    "secret environ by ..": None, "secret environ by cd": None, "secret named at run time": "secret"}


@pytest.mark.parametrize("name", list(CASES))
def test_each_case_does_its_damage_when_nothing_refuses_it(strict: Canal, name: str) -> None:
    ran = strict.backend.exec(strict.ref().container, ["bash", "-c", CASES[name]], timeout_s=20)
    said = ran.stdout.read_bytes() + ran.stderr.read_bytes()
    effects = [e for e, seen in (("pwned", bool(list(strict.project_dir.glob("pwned*")))),
                                 ("keep", (strict.project_dir / "keep.txt").read_text() != "keep\n"),
                                 ("secret", SECRET.encode() in said)) if seen]
    for marker in strict.project_dir.glob("pwned*"):
        marker.unlink()
    (strict.project_dir / "keep.txt").write_text("keep\n")
    chown_tree(strict.project_dir)
    assert effects == ([EFFECTS[name]] if EFFECTS[name] else []), said[-300:]


def test_the_sandbox_really_would_have_run_them(strict: Canal) -> None:
    """The cases are not refused because they cannot work: the same shell runs a visible one."""
    probe = strict.run("echo $(( 1 + 1 ))")
    assert probe.status == "confirmation_required"  # strict: arithmetic is not read-only
    plain = strict.run("cat keep.txt")
    assert (plain.status, plain.output) == ("ok", "keep")


def test_a_subscript_in_plain_data_is_only_data(strict: Canal) -> None:
    """What is not evaluated runs nothing, so strict lets it print (issue 16's over-approximation)."""
    shown = strict.run("echo 'a[$(touch /workspace/pwned)]'")
    assert (shown.status, shown.output) == ("ok", "a[$(touch /workspace/pwned)]"), shown.text
    assert not [p.name for p in strict.project_dir.glob("pwned*")]
