"""What a confirmed destructive command backs up: its targets come from the same option resolution as the
decision (getopt_long prefixes, value options, wrappers that change directory), against the real cwd."""

from __future__ import annotations

import pytest

from canal.policy import Policy


@pytest.mark.parametrize(("command", "targets"), [
    ("cd sub && rm --rec data", ("/workspace/sub/data",)),
    ("cd sub && rm --rec --interactive=never -- data", ("/workspace/sub/data",)),
    ("mv --t backup a", ("/workspace/backup/a",)),
    ("mv --targ=backup a b", ("/workspace/backup/a", "/workspace/backup/b")),
    ("cp --target-dir=backup a b", ("/workspace/backup/a", "/workspace/backup/b")),
    ("cp -rt backup src/a", ("/workspace/backup/a",)),
    ("shred --iter 3 f", ("/workspace/f",)),
    ("truncate --si 0 f", ("/workspace/f",)),
    ("cd /tmp && git -C /workspace/sub clean -fd", ("/workspace/sub",)),
    ("git -C sub -C inner clean -fd", ("/workspace/sub/inner",)),
    ("env -C sub rm -rf data", ("/workspace/sub/data",)),
    ("env --chd=sub rm --rec data", ("/workspace/sub/data",)),
    ("sudo -D /workspace/sub rm -rf data", ("/workspace/sub/data",)),
    ("sudo --chdir=sub rm -rf data", ("/workspace/sub/data",)),
    ("unshare --wd=sub rm -rf data", ("/workspace/sub/data",)),
    ("systemd-run --working-directory=/workspace/sub rm -rf data", ("/workspace/sub/data",)),
    ("timeout --sig=KILL 5 rm --rec data", ("/workspace/data",)),
])
def test_targets_follow_the_grammar_and_wrappers(standard: Policy, command: str,
                                                 targets: tuple[str, ...]) -> None:
    decision = standard.decide(command)
    assert decision.targets == targets, decision.to_json()


def test_targets_follow_the_session_cwd(standard: Policy) -> None:
    assert standard.decide("rm --rec data", cwd="/workspace/sub").targets == ("/workspace/sub/data",)
    assert standard.decide("env -C .. rm --rec data", cwd="/workspace/sub").targets == ("/workspace/data",)


@pytest.mark.parametrize("command", ["chroot /srv rm -rf data", "su - root -c 'rm -rf data'",
                                     "sudo -i rm -rf data", "nsenter -t 1 -w rm -rf data",
                                     "env -C \"$D\" rm -rf data"])
def test_a_wrapper_that_moves_somewhere_unknown_leaves_no_wrong_target(standard: Policy,
                                                                       command: str) -> None:
    decision = standard.decide(command)
    assert decision.action != "allow"
    assert "/workspace/data" not in decision.targets, decision.to_json()


@pytest.mark.parametrize("command", ["env -C / rm -rf usr", "env --chdir=/ rm -rf workspace",
                                     "sudo -D / rm -rf etc", "unshare --wd=/ rm -rf usr",
                                     "env -C /usr/.. rm -rf usr", "su - root -c 'rm -rf /'",
                                     "runuser - agent -c 'rm -rf /'"])
def test_a_wrapper_changing_directory_cannot_soften_a_deny(standard: Policy, strict: Policy,
                                                            command: str) -> None:
    assert standard.decide(command).action == "deny", standard.decide(command).to_json()
    assert strict.decide(command).action == "deny"
