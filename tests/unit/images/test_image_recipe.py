"""canal.yaml's image section: values are checked at load and reach the build only as whole argv elements."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from pydantic import ValidationError

from canal.runtime.settings.config import parse_config
from canal.runtime.trust.snapshot import trusted_settings
from canal.sandbox.docker.project_image import (
    INSTALLER,
    PRESETS,
    ProjectImage,
    StagedFile,
    dockerfile,
    recipe_hash,
)

DOCS = Path(__file__).resolve().parents[3] / "docs" / "images.md"


def test_a_preset_and_packages_become_exec_form_runs_with_whole_arguments() -> None:
    image = ProjectImage(preset="python", apt=("libpq-dev", "make"), pip=("pytest==8.3.2", "ruff[all]>=0.5"),
                         npm=("@scope/tool@^1.2.0",))
    text = dockerfile(image, "sha256:abc", [StagedFile("/opt/tools/x.sh", b"echo", True)], "1000:1000")
    runs = [json.loads(line.removeprefix("RUN ")) for line in text.splitlines() if line.startswith("RUN ")]
    assert runs[0] == ["/bin/sh", INSTALLER, "apt", *PRESETS["python"], "libpq-dev", "npm"]
    assert runs[1] == ["/bin/sh", INSTALLER, "pip", "pytest==8.3.2", "ruff[all]>=0.5"]
    assert runs[2] == ["/bin/sh", INSTALLER, "npm", "@scope/tool@^1.2.0"]
    assert text.splitlines()[0] == "FROM sha256:abc"
    assert 'COPY ["files/0", "/opt/tools/x.sh"]' in text
    assert text.splitlines()[-1] == "USER 1000:1000"


@pytest.mark.parametrize(("kind", "value"), [
    ("apt", "-o=APT::Get::AllowUnauthenticated=1"), ("apt", "make; curl x | sh"), ("apt", "Make"),
    ("pip", "--index-url=http://evil"), ("pip", "git+https://x/y"), ("pip", "./local"), ("pip", "a b"),
    ("pip", "pkg @ file:///etc/passwd"), ("npm", "--prefix=/"), ("npm", "github:a/b"), ("npm", "../x"),
    ("npm", "x@$(id)"),
])
def test_options_urls_paths_and_shell_are_refused(kind: str, value: str) -> None:
    with pytest.raises(ValidationError):
        ProjectImage.model_validate({kind: [value]})


@pytest.mark.parametrize("target", ["relative/x", "/workspace/x", "/canal/output/x", "/proc/x", "/",
                                    "/opt/../etc/x", "/opt/a b", "/opt/$(id)"])
def test_copy_targets_stay_out_of_mounts_and_need_plain_absolute_paths(target: str) -> None:
    with pytest.raises(ValidationError):
        ProjectImage.model_validate({"files": [{"source": "tools/x", "target": target}]})


@pytest.mark.parametrize("source", ["/etc/passwd", "../outside", "a/../../b", ""])
def test_copy_sources_are_relative_paths_inside_the_project(source: str) -> None:
    with pytest.raises(ValidationError):
        ProjectImage.model_validate({"files": [{"source": source, "target": "/opt/x"}]})


def test_the_recipe_hash_follows_every_input() -> None:
    image = ProjectImage(apt=("make",))
    one = [StagedFile("/opt/x", b"1", False)]
    base = recipe_hash(dockerfile(image, "sha256:a", one, ""), one)
    assert base == recipe_hash(dockerfile(image, "sha256:a", one, ""), one)
    assert base != recipe_hash(dockerfile(image, "sha256:b", one, ""), one)  # a rebuilt base
    assert base != recipe_hash(dockerfile(image, "sha256:a", one, ""), [StagedFile("/opt/x", b"2", False)])
    assert base != recipe_hash(dockerfile(image, "sha256:a", one, ""), [StagedFile("/opt/x", b"1", True)])
    other = ProjectImage(apt=("make", "gcc"))
    assert base != recipe_hash(dockerfile(other, "sha256:a", one, ""), one)


def test_an_empty_image_section_leaves_the_trusted_settings_as_before() -> None:
    assert "image" not in trusted_settings(parse_config("policy: {profile: strict}\n"))
    settings = trusted_settings(parse_config("image: {preset: node, files: [{source: a, target: /opt/a}]}\n"),
                                {"a": "d" * 64})
    assert settings["image"]["preset"] == "node"
    assert settings["image"]["files"] == [{"source": "a", "target": "/opt/a", "sha256": "d" * 64}]


def test_docs_list_every_preset_package() -> None:
    text = DOCS.read_text()
    for preset, packages in PRESETS.items():
        row = re.search(rf"^ *\| `{preset}` \| (.+) \|$", text, re.MULTILINE)
        assert row is not None, preset
        assert row.group(1).split(", ") == [f"`{p}`" for p in packages]


def test_an_image_file_is_read_inside_the_project_without_following_links(tmp_path: Path) -> None:
    from canal.runtime.errors import ConfigError
    from canal.runtime.trust.snapshot import read_image_file

    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret").write_text("host secret\n")
    project = tmp_path / "project"
    (project / "tools").mkdir(parents=True)
    (project / "tools" / "ok.sh").write_text("echo ok\n")
    (project / "tools" / "link.sh").symlink_to(outside / "secret")
    (project / "via").symlink_to(outside)
    assert read_image_file(project, "tools/ok.sh") == b"echo ok\n"
    for source in ("tools/link.sh", "via/secret", "tools/missing.sh"):
        with pytest.raises(ConfigError) as info:
            read_image_file(project, source)
        assert "host secret" not in info.value.message
        assert info.value.details["reason"] in ("unsafe", "missing")
