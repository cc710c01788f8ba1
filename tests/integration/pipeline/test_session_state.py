"""What the session keeps between commands is what the policy decides with (issue 16, issue 15 item 5).

Real sandbox, Python API. The session's working directory and its changed execution-relevant variables
come back with every reply; the decision, the confirmation token and the backup all follow them. Aliases
and functions never outlive the command that defined them.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from project_helpers import chown_tree

from canal.runtime.api import Canal


@pytest.fixture
def fresh(host_env: Path, tmp_path: Path) -> Iterator[Canal]:
    project = tmp_path / "project"
    (project / "sub" / "data").mkdir(parents=True)
    (project / "sub" / "data" / "f.txt").write_text("inner\n")
    (project / "data").mkdir()
    (project / "data" / "f.txt").write_text("outer\n")
    chown_tree(project)
    with Canal(project) as canal:
        yield canal
        canal.down()


def test_decision_token_and_backup_follow_the_real_cwd(fresh: Canal) -> None:
    assert fresh.run("cd sub").status == "ok"
    asked = fresh.run("rm -rf data")
    assert asked.status == "confirmation_required", asked.text
    assert asked.confirmation is not None
    assert (fresh.project_dir / "sub" / "data" / "f.txt").exists()

    done = fresh.run("rm -rf data", confirm=asked.confirmation.token)
    assert done.status == "ok", done.text
    assert not (fresh.project_dir / "sub" / "data").exists()
    assert (fresh.project_dir / "data" / "f.txt").read_text() == "outer\n", "the other data is untouched"
    assert [b.path for b in done.backups] == ["sub/data"]
    fresh._services.trash.restore(done.backups[0].trash_id)
    assert (fresh.project_dir / "sub" / "data" / "f.txt").read_text() == "inner\n"


def test_token_is_bound_to_the_cwd_it_was_asked_in(fresh: Canal) -> None:
    assert fresh.run("cd sub").status == "ok"
    asked = fresh.run("rm -rf data")
    assert asked.confirmation is not None
    assert fresh.run("cd ..").status == "ok"
    with pytest.raises(Exception) as refused:  # noqa: PT011 - the code is what matters
        fresh.run("rm -rf data", confirm=asked.confirmation.token)
    assert getattr(refused.value, "code", "") == "APPROVAL_MISMATCH"
    assert (fresh.project_dir / "data" / "f.txt").exists()
    assert (fresh.project_dir / "sub" / "data" / "f.txt").exists()


def test_whole_project_delete_after_cd_root_is_denied(fresh: Canal) -> None:
    assert fresh.run("cd /").status == "ok"
    assert fresh.run("pwd").output.strip() == "/"
    denied = fresh.run("rm -rf workspace")
    assert denied.status == "denied", denied.text
    assert "rm-root" in denied.decision.rule_ids
    assert (fresh.project_dir / "data" / "f.txt").exists()


def test_aliases_and_functions_do_not_outlive_their_command(fresh: Canal) -> None:
    defined = fresh.run("shopt -s expand_aliases; alias pwd='echo ALIASED'; pwd() { echo FUNCTION; }; "
                        "export -f pwd")
    assert defined.status == "ok", defined.text
    later = fresh.run("pwd")
    assert later.output.strip() == "/workspace"


def test_path_planting_chain_needs_a_confirmation(fresh: Canal) -> None:
    planted = fresh.run("mkdir -p .bin && printf '#!/bin/sh\\necho PLANTED\\n' > .bin/ls && chmod +x .bin/ls")
    assert planted.status == "ok", planted.text
    changed = fresh.run("export PATH=/workspace/.bin:$PATH")
    assert changed.status == "confirmation_required", changed.text
    assert "exec-variable" in changed.decision.rule_ids
    listed = fresh.run("ls")
    assert "PLANTED" not in listed.output, "nothing ran the planted file without a confirmation"
    for spelling in ("printf -v PATH %s /workspace/.bin:/usr/bin", "read PATH <<< /workspace/.bin",
                     "declare -x PATH=/workspace/.bin:/usr/bin", "PATH=/workspace/.bin"):
        assert fresh.run(spelling).status == "confirmation_required", spelling
    assert "PLANTED" not in fresh.run("ls").output


def test_backup_of_a_disguised_delete_follows_cwd_prefixes_and_wrappers(fresh: Canal) -> None:
    """`rm --rec` (a getopt_long prefix) after `cd sub`, and `env --chd=sub` (a wrapper that changes
    folder, itself abbreviated): the backup is sub/data, the other data is untouched."""
    assert fresh.run("cd sub").status == "ok"
    for command, back_to in (("rm --rec data", "/workspace"), ("env --chd=sub rm --rec data", "")):
        asked = fresh.run(command)
        assert asked.status == "confirmation_required", asked.text
        assert asked.confirmation is not None
        done = fresh.run(command, confirm=asked.confirmation.token)
        assert done.status == "ok", done.text
        assert [b.path for b in done.backups] == ["sub/data"], command
        assert not (fresh.project_dir / "sub" / "data").exists()
        assert (fresh.project_dir / "data" / "f.txt").read_text() == "outer\n", command
        fresh._services.trash.restore(done.backups[0].trash_id)
        assert (fresh.project_dir / "sub" / "data" / "f.txt").read_text() == "inner\n"
        if back_to:
            assert fresh.run(f"cd {back_to}").status == "ok"
