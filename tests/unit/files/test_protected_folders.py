"""Issue 35: removing or restoring a folder that holds `.git` or a `canal.yaml` is refused, and no test
said so. A folder is judged by what lies inside it, and a restore by the folder it would put back."""

from __future__ import annotations

from pathlib import Path, PurePosixPath

import pytest

from canal.host.files.confine import Located
from canal.host.files.errors import PATH_PROTECTED
from canal.host.files.protect import Protected
from tests.error_codes import raises_code

PROTECTED = Protected.of(["canal.yaml"])


def _loc(root: Path, rel: str) -> Located:
    return Located(root=root, rel=PurePosixPath(rel))


@pytest.mark.parametrize("inner", ["vendor/lib/.git/config", "vendor/sub/canal.yaml",
                                   "vendor/.gitattributes"])
def test_a_folder_holding_a_protected_file_cannot_be_removed(tmp_path: Path, inner: str) -> None:
    path = tmp_path / inner
    path.parent.mkdir(parents=True)
    path.write_text("x\n")
    with raises_code(PATH_PROTECTED) as info:
        PROTECTED.check(_loc(tmp_path, "vendor"), "remove")
    assert info.value.details["protected"] == inner.removesuffix("/config")
    PROTECTED.check(_loc(tmp_path, "vendor/lib/x"), "remove")  # a path beside it is fine


def test_restoring_a_folder_that_holds_git_internals_is_refused(tmp_path: Path) -> None:
    incoming = tmp_path / "trash-copy"
    (incoming / ".git" / "hooks").mkdir(parents=True)
    (incoming / ".git" / "hooks" / "post-checkout").write_text("#!/bin/sh\n")
    with raises_code(PATH_PROTECTED, match="holds"):
        PROTECTED.check(_loc(tmp_path, "restored"), "restore", content=incoming)


def test_the_project_root_holds_the_settings(tmp_path: Path) -> None:
    with raises_code(PATH_PROTECTED):
        PROTECTED.check(_loc(tmp_path, ""), "remove")


@pytest.mark.parametrize("rel", ["canal.yaml", "sub/deeper/canal.yaml", "lib/.git/config",
                                 "x/.gitattributes"])
def test_a_protected_file_at_any_depth_is_refused(tmp_path: Path, rel: str) -> None:
    with raises_code(PATH_PROTECTED):
        Protected.of([]).check(_loc(tmp_path, rel), "edit")
