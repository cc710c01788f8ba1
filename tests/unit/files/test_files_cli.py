from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from canal.cli.main import cli
from canal.host.paths import state_path_for


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    proj = tmp_path / "proj"
    proj.mkdir()
    (proj / "canal.yaml").write_text("")
    monkeypatch.setenv("CANAL_STATE_DIR", str(tmp_path / "state"))
    monkeypatch.setenv("CANAL_CONFIG_DIR", str(tmp_path / "config"))
    monkeypatch.delenv("CANAL_PROJECT_DIR", raising=False)
    monkeypatch.delenv("CANAL_KEY", raising=False)
    monkeypatch.chdir(proj)
    return proj


def _run(*args: str, stdin: bytes | None = None) -> tuple[int, str, str]:
    # The error boundary looks for --json in sys.argv (the real process's arguments).
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(sys, "argv", ["canal", *args])
        result = CliRunner().invoke(cli, list(args), input=stdin, catch_exceptions=False)
    return result.exit_code, result.stdout, result.stderr


def test_rm_then_restore_round_trip(project: Path, tmp_path: Path) -> None:
    (project / "data.bin").write_bytes(b"\x00\x01payload")
    (project / "data.bin").chmod(0o640)
    code, out, err = _run("rm", "data.bin", "--json")
    assert (code, err) == (0, "")
    [item] = json.loads(out)["results"]
    assert item["status"] == "trashed"
    entry_id = item["entry"]["id"]
    assert item["entry"]["audit_id"].startswith("a-")
    assert not (project / "data.bin").exists()
    code, out, _ = _run("trash", "list")
    assert code == 0
    assert entry_id in out
    code, out, _ = _run("restore", entry_id)
    assert code == 0
    assert out.startswith(f"restored {entry_id} to ")
    assert (project / "data.bin").read_bytes() == b"\x00\x01payload"
    assert (project / "data.bin").stat().st_mode & 0o777 == 0o640
    audit_log = (state_path_for(project) / "audit" / "audit.jsonl").read_text().splitlines()
    assert [json.loads(line)["event"] for line in audit_log] == [
        "audit.opened", "config.accept", "trash.put", "trash.restore"]  # config: read for the checkpoint


def test_errors_render_code_message_and_next_command(project: Path) -> None:
    code, out, err = _run("view", "../elsewhere")
    assert code == 2
    assert out == ""
    assert err.splitlines()[0] == "PATH_OUTSIDE_WORKSPACE"
    assert err.splitlines()[-1].startswith("Next: ")
    code, out, _ = _run("restore", "t20250101T000000Z-abcdef", "--json")
    assert code == 2
    assert json.loads(out)["code"] == "TRASH_ENTRY_NOT_FOUND"


def test_write_edit_view_from_the_cli(project: Path) -> None:
    code, out, _ = _run("write", "notes.txt", stdin=b"one\ntwo\n")
    assert code == 0
    assert out.endswith("[created notes.txt: 2 lines, 8 bytes | checkpoint cp-1 (undo: canal undo cp-1)]\n")
    code, out, _ = _run("edit", "notes.txt", "--old", "two", "--new", "2", "--json")
    assert code == 0
    assert json.loads(out)["diff"] == "--- a/notes.txt\n+++ b/notes.txt\n@@ -1,2 +1,2 @@\n one\n-two\n+2\n"
    code, out, _ = _run("view", "notes.txt", "--range", "2:2")
    assert (code, out) == (0, "     2\t2\n[notes.txt: showing 2-2 of 2 lines]\n")
    code, out, _ = _run("write", "notes.txt", "--json", stdin=b"replaced\n")
    backup = json.loads(out)["backup_id"]
    code, out, _ = _run("restore", backup, "--to", "old-notes.txt")
    assert code == 0
    assert (project / "old-notes.txt").read_text() == "one\n2\n"


def test_purge_and_folder_removal(project: Path) -> None:
    (project / "build" / "obj").mkdir(parents=True)
    code, _, err = _run("rm", "build")
    assert code == 2
    assert "FOLDER_NEEDS_RECURSIVE" in err
    code, _, _ = _run("rm", "-r", "build")
    assert code == 0
    code, out, _ = _run("trash", "purge", "--older-than", "30d")
    assert (code, out) == (0, "purged 0 item(s) trashed more than 30d ago\n")
    code, out, _ = _run("trash", "purge", "--older-than", "0s", "--json")
    assert [e["rel_path"] for e in json.loads(out)["purged"]] == ["build"]
    assert os.listdir(project) == ["canal.yaml"]


def test_error_message_and_hint_pass_the_redactor(project: Path) -> None:
    token = "ghp_" + "x9Kq2LmP4vR7tY1nB8cD3fG6hJ0kWzQeUaSo"
    code, out, err = _run("view", f"token={token}/notes.txt")
    assert code != 0
    assert err.startswith("PATH_NOT_FOUND\n"), err
    assert token not in err
    assert "[REDACTED_SECRET:github-pat:" in err
    code, out, err = _run("view", f"token={token}/notes.txt", "--json")
    assert token not in out
    assert json.loads(out)["code"] == "PATH_NOT_FOUND"


def test_file_operations_take_a_checkpoint_first_so_undo_reverts_them(project: Path) -> None:
    (project / "data.txt").write_text("before\n")
    code, out, _ = _run("edit", "data.txt", "--old", "before", "--new", "after", "--json")
    assert code == 0
    checkpoint = json.loads(out)["checkpoint"]
    code, out, _ = _run("rm", "data.txt")
    assert code == 0
    assert out.rstrip().endswith("(undo: canal undo cp-2)]")
    code, _, err = _run("undo", checkpoint)
    assert (code, err) == (0, "")
    assert (project / "data.txt").read_text() == "before\n"


@pytest.mark.parametrize("args", [("view", "N.txt"), ("write", "N.txt"), ("rm", "N.txt"),
                                  ("edit", "N.txt", "--old", "a", "--new", "b")])
def test_what_the_operating_system_refuses_is_file_io_error_not_a_traceback(project: Path,
                                                                            args: tuple[str, ...]) -> None:
    long_name = "n" * 300 + ".txt"  # ENAMETOOLONG: refused whoever runs it, root included
    argv = [a.replace("N.txt", long_name) for a in args]
    code, out, err = _run(*argv, stdin=b"data\n")
    assert code == 125, out + err
    assert err.startswith("FILE_IO_ERROR\n"), err
    assert "File name too long" in err
    assert str(project) not in err  # the path as given, never the host's
    code, out, err = _run(*argv, "--json", stdin=b"data\n")
    reply = json.loads(out)
    assert (reply["code"], reply["details"]["errno"]) == ("FILE_IO_ERROR", "ENAMETOOLONG")


def test_the_file_size_cap_is_canal_yaml_storage_file_per_operation(project: Path) -> None:
    (project / "canal.yaml").write_text("storage:\n  file_per_operation: 1k\n")  # lower: applies at once
    (project / "big.txt").write_text("x" * 1500)
    code, _, err = _run("write", "small.txt", stdin=b"y" * 1000)
    assert code == 0, err
    code, _, err = _run("write", "notes.txt", stdin=b"y" * 1025)
    assert code == 2
    assert err.startswith("FILE_TOO_LARGE\n")
    assert "1024-byte limit" in err
    assert "storage.file_per_operation" in err
    assert not (project / "notes.txt").exists()
    code, _, err = _run("view", "big.txt")
    assert code == 2
    assert err.startswith("FILE_TOO_LARGE\n")
    code, _, err = _run("edit", "small.txt", "--old", "y", "--new", "zz", "--all")
    assert code == 2, "the result of an edit counts too"
    assert err.startswith("FILE_TOO_LARGE\n")
    assert (project / "small.txt").read_bytes() == b"y" * 1000


def test_the_file_size_cap_defaults_to_8_mib(project: Path) -> None:
    code, _, err = _run("write", "eight.bin", stdin=b"y" * (8 << 20))
    assert code == 0, err
    code, _, err = _run("write", "over.bin", stdin=b"y" * ((8 << 20) + 1))
    assert (code, err.split("\n")[0]) == (2, "FILE_TOO_LARGE")
