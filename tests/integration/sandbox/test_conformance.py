"""One conformance suite over every SandboxBackend: the in-package fake and Docker."""

from __future__ import annotations

import stat
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from canal.sandbox.backend import LABEL_EXPIRES, LABEL_OWNER, LABEL_SANDBOX, SandboxBackend
from canal.sandbox.errors import (
    FILE_TRANSFER_REFUSED,
    MOUNT_REFUSED,
    ImageNotFound,
    SandboxExists,
    SandboxNotFound,
    SpecInvalid,
)
from canal.sandbox.fake import FakeBackend
from canal.sandbox.images import DEFAULT_IMAGE
from canal.sandbox.result import EndReason
from canal.sandbox.spec import Mount, SandboxSpec
from tests.error_codes import raises_code
from tests.integration.gvisor import runtimes_under_test


def unique() -> str:
    return f"canal-t-{uuid.uuid4().hex[:10]}"


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """The fake, Docker under runc, and Docker under gVisor when the engine has it (tests/integration/
    gvisor.py: generated only where it can run; CANAL_REQUIRE_RUNSC=1 fails the run without it)."""
    if "backend" in metafunc.fixturenames:
        kinds = ["fake", *("docker" if rt == "runc" else f"docker-{rt}" for rt in runtimes_under_test())]
        metafunc.parametrize("backend", kinds, indirect=True)


@pytest.fixture
def backend(request: pytest.FixtureRequest,
            small_spec: SandboxSpec) -> Iterator[tuple[SandboxBackend, SandboxSpec]]:
    spec = small_spec
    if request.param == "fake":
        yield FakeBackend(owner="fake-owner", output_cap=4096), spec
        return
    if request.param != "docker":
        spec = spec.model_copy(update={"runtime": request.param.removeprefix("docker-")})
    yield request.getfixturevalue("docker_backend"), spec


@pytest.fixture
def box(backend: tuple[SandboxBackend, SandboxSpec]) -> Iterator[tuple[SandboxBackend, str]]:
    impl, spec = backend
    name = unique()
    impl.create(name, spec)
    yield impl, name
    impl.remove(name)


def test_lifecycle(backend: tuple[SandboxBackend, SandboxSpec]) -> None:
    impl, spec = backend
    name = unique()
    info = impl.create(name, spec)
    try:
        assert info.name == name
        assert info.running
        assert {LABEL_OWNER, LABEL_SANDBOX, LABEL_EXPIRES} <= set(info.labels)
        assert info.expires_at is not None
        assert impl.get(name) is not None
        assert name in [i.name for i in impl.list()]
        with pytest.raises(SandboxExists):
            impl.create(name, spec)
    finally:
        impl.remove(name)
    assert impl.get(name) is None
    impl.remove(name)  # idempotent


def test_bad_names_and_mounts_are_refused(backend: tuple[SandboxBackend, SandboxSpec]) -> None:
    impl, spec = backend
    with pytest.raises(SpecInvalid):
        impl.create("no-prefix", spec)
    bad = spec.model_copy(update={"mounts": (Mount(source=Path("/var/run/docker.sock"), target="/s"),)})
    with raises_code(MOUNT_REFUSED):
        impl.create(unique(), bad)
    with pytest.raises(SandboxNotFound):
        impl.exec(unique(), "true")


def test_exit_codes_and_missing_commands(box: tuple[SandboxBackend, str]) -> None:
    impl, name = box
    assert impl.exec(name, "exit 3").exit_code == 3
    missing = impl.exec(name, ["no-such-program-xyz"])
    assert (missing.reason, missing.exit_code) == (EndReason.EXITED, 127)
    assert impl.exec(name, "true").ok


def test_str_commands_keep_cwd_and_env(box: tuple[SandboxBackend, str]) -> None:
    impl, name = box
    impl.exec(name, "cd /tmp")
    impl.exec(name, "export CANAL_T=persisted")
    assert impl.exec(name, "pwd").stdout.read_bytes() == b"/tmp\n"
    assert impl.exec(name, ["printenv", "CANAL_T"]).stdout.read_bytes() == b"persisted\n"


def test_argv_is_exact_and_per_command_env_does_not_persist(box: tuple[SandboxBackend, str]) -> None:
    impl, name = box
    result = impl.exec(name, ["echo", "a  b", "$HOME", "; rm -rf /"])
    assert result.stdout.read_bytes() == b"a  b $HOME ; rm -rf /\n"
    assert impl.exec(name, ["printenv", "ONCE"], env={"ONCE": "1"}).stdout.read_bytes() == b"1\n"
    assert impl.exec(name, ["printenv", "ONCE"]).exit_code == 1


def test_stdin_is_empty_unless_given(box: tuple[SandboxBackend, str]) -> None:
    impl, name = box
    assert impl.exec(name, ["cat"]).stdout.read_bytes() == b""
    data = b"line\x00\xff\xfe binary"
    assert impl.exec(name, ["cat"], stdin=data).stdout.read_bytes() == data


def test_files_round_trip_binary_and_spool(box: tuple[SandboxBackend, str], tmp_path: Path) -> None:
    impl, name = box
    blob = bytes(range(256)) * 40  # 10 KiB, past the 4 KiB cap of these backends
    impl.put_files(name, {"d/blob.bin": blob, "d/t.txt": b"text"})
    assert impl.get_files(name, "/workspace/d") == {"d/blob.bin": blob, "d/t.txt": b"text"}
    result = impl.exec(name, ["cat", "/workspace/d/blob.bin"], spool_dir=tmp_path / "spool")
    assert result.stdout.spooled
    assert result.stdout.path is not None
    assert stat.S_IMODE(result.stdout.path.stat().st_mode) == 0o600
    assert result.stdout.read_bytes() == blob


def test_file_limits(box: tuple[SandboxBackend, str]) -> None:
    impl, name = box
    with raises_code(FILE_TRANSFER_REFUSED):
        impl.put_files(name, {"big": b"x" * 100}, max_bytes=10)
    with raises_code(FILE_TRANSFER_REFUSED):
        impl.put_files(name, {"../escape": b"x"})
    impl.put_files(name, {"f": b"x" * 100})
    with raises_code(FILE_TRANSFER_REFUSED):
        impl.get_files(name, "/workspace/f", max_bytes=10)


def test_warm_starts_the_session_a_first_command_then_uses(box: tuple[SandboxBackend, str]) -> None:
    impl, name = box
    real = not isinstance(impl, FakeBackend)  # the fake has no session to start
    if real:
        assert impl.ready(name) is None  # a fresh sandbox: no session until something starts one
    impl.warm(name)
    if real:
        assert impl.ready(name) is not None, "warm() started no session"
    assert impl.exec(name, "true").ok


def test_ensure_image_gives_canal_images_and_refuses_others(backend: tuple[SandboxBackend, SandboxSpec],
                                                            sandbox_image: str) -> None:
    impl, _ = backend
    built = impl.ensure_image(DEFAULT_IMAGE)  # present already (the session's fixture built it): cached
    assert (built.tag, built.cached) == (DEFAULT_IMAGE, True)
    with pytest.raises(ImageNotFound):
        impl.ensure_image("example/not-canal:1")


def test_every_protocol_method_is_implemented_by_both_backends() -> None:
    from canal.sandbox.docker.backend import DockerBackend

    wanted = {n for n in vars(SandboxBackend) if not n.startswith("_")}
    for impl in (FakeBackend, DockerBackend):
        assert wanted <= {n for n in dir(impl) if callable(getattr(impl, n))}, impl
