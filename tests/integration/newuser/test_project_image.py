"""Finding 10: a project adds packages and files to its sandbox image through canal.yaml (a trusted
setting), built once and cached by content, pinned by id in the audit log."""

from __future__ import annotations

import json
import re
import stat
from pathlib import Path

from first_hour import User, at_terminal

MAKEFILE = "test:\n\tpython3 -m pytest --version >/dev/null 2>&1 || python3 -c 'print(\"tests ok\")'\n"


def approve(user: User, root: Path) -> None:
    code, shown = at_terminal(root, user.env, ["config", "approve"], [("Approve these settings?", "y")])
    assert code == 0, shown
    assert re.search(r"LOOSENS +image\.", shown), shown


def test_the_python_preset_brings_make_and_a_toolchain(user: User) -> None:
    root = user.project("py", {"canal.yaml": "image:\n  preset: python\n", "Makefile": MAKEFILE})
    refused = user.canal(root, "run", "--", "make test")
    assert refused.returncode == 2, refused.stdout + refused.stderr
    assert refused.stderr.startswith("CONFIG_UNAPPROVED\n")
    assert "image.preset" in refused.stderr
    approve(user, root)
    done = user.canal(root, "run", "--", "make test && gcc --version | head -1 && pip3 --version",
                      timeout=900)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "tests ok" in done.stdout
    assert "gcc" in done.stdout
    show = json.loads(user.canal(root, "image", "show", "--json").stdout)
    assert show["built"] is True
    assert show["image"].startswith("canal/project:")
    assert show["added"]["preset"] == "python"
    assert "make" in show["added"]["preset_packages"]
    doctor = user.canal(root, "doctor").stdout
    assert f"ok   image      {show['image']}" in doctor
    assert "preset python (python3-dev" in doctor
    records = json.loads(user.canal(root, "audit", "show", "--json").stdout)["records"]
    started = [r for r in records if r["event"] == "run.started"]
    assert started[-1]["data"]["image_digest"] == show["image_id"]


def test_canal_image_builds_and_shows(user: User) -> None:
    root = user.project("app")
    text = user.canal(root, "image", "--help").stdout
    assert "build" in text
    assert "show" in text
    show = json.loads(user.canal(root, "image", "show", "--json").stdout)
    assert show["image"] == show["base"] == "canal/sandbox:0.1.0"
    assert "git" in show["base_packages"]
    assert show["added"] is None


def test_copied_files_land_in_the_image_and_an_edit_needs_approval(user: User) -> None:
    root = user.project("tools", {
        "canal.yaml": "image:\n  files:\n    - {source: tools/hello.sh, target: /opt/tools/hello.sh}\n",
        "tools/hello.sh": "#!/bin/sh\necho hello from the image\n"})
    (root / "tools" / "hello.sh").chmod(0o755)
    approve(user, root)
    done = user.canal(root, "run", "--", "/opt/tools/hello.sh && stat -c %a /opt/tools/hello.sh")
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.splitlines()[:2] == ["hello from the image", "755"]
    records = json.loads(user.canal(root, "audit", "show", "--event", "image.ready", "--json").stdout)
    assert [r["data"]["recipe"]["files"] for r in records["records"]] == [
        ["tools/hello.sh -> /opt/tools/hello.sh"]]
    overwrite = user.canal(root, "run", "--", "echo 'echo pwned' > tools/hello.sh")
    assert overwrite.returncode != 0  # read-only inside the sandbox, like canal.yaml
    (root / "tools" / "hello.sh").write_text("#!/bin/sh\necho changed\n")
    assert stat.S_IMODE((root / "tools" / "hello.sh").stat().st_mode) == 0o755
    refused = user.canal(root, "run", "--", "true")
    assert refused.returncode == 2
    assert refused.stderr.startswith("CONFIG_UNAPPROVED\n")
    assert "image.files" in refused.stderr
    approve(user, root)
    user.canal(root, "image", "build")
    doctor = user.canal(root, "doctor")
    assert "FAIL image      the default sandbox still runs an older image" in doctor.stdout, doctor.stdout
    assert "fix: canal down" in doctor.stdout
    user.canal(root, "down")
    assert user.canal(root, "run", "--", "/opt/tools/hello.sh").stdout.splitlines()[0] == "changed"
