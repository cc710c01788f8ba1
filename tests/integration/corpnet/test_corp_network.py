"""Issue 31: Canal behind a corporate network, in a world the test builds (corp_world): its own CA, a
package index served over TLS with a certificate from that CA (a container on a network the test
creates), and an upstream proxy (in this process, on the host's docker0 address) that alone reaches the
index and asks for credentials. Nothing leaves the machine.

- an image build with ``pip:`` from that index (an sdist whose build isolation fetches its backend)
  succeeds with the CA and the upstream proxy set, and fails clearly without the CA;
- ``pip install`` inside an allowlisted sandbox, through Canal's egress proxy and the upstream proxy,
  succeeds, build isolation included; the egress log shows the request;
- the proxy's credentials appear in no sandbox-visible file or environment variable, nor in the image.
"""

from __future__ import annotations

import json
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from corp_world import INDEX_HOST, CorpWorld, cleanup, corp_world, pip_base_image
from project_helpers import remove_project_containers

from canal.host.approvals import Approver
from canal.runtime.api import Canal
from canal.runtime.sandboxes.images import image_report
from canal.runtime.services import Services
from canal.sandbox.docker.image import build_egress_image
from canal.sandbox.egress_upstream import ENV_CREDENTIALS
from canal.sandbox.errors import ImageBuildFailed

pytestmark = pytest.mark.docker

USER, PASSWORD = "corp-user", "corp-s3cret@x"  # an @ and a digit: the credentials are escaped for squid
INDEX = f"https://{INDEX_HOST}/simple/"


@pytest.fixture(scope="module")
def world(docker_client: Any, sandbox_image: str) -> Iterator[CorpWorld]:
    build_egress_image(docker_client)
    with corp_world(docker_client, username=USER, password=PASSWORD) as made:
        yield made
    cleanup(docker_client)


@pytest.fixture(scope="module")
def pip_image(docker_client: Any, sandbox_image: str) -> str:
    return pip_base_image(docker_client)


@pytest.fixture
def env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("CANAL_STATE_DIR", str(tmp_path / "state"))
    monkeypatch.setenv("CANAL_CONFIG_DIR", str(tmp_path / "config"))
    monkeypatch.delenv("CANAL_KEY", raising=False)
    monkeypatch.delenv("CANAL_PROJECT_DIR", raising=False)
    monkeypatch.setenv(ENV_CREDENTIALS, f"{USER}:{PASSWORD}")
    return tmp_path


@pytest.fixture
def make_project(env: Path, docker_client: Any) -> Iterator[Any]:
    made: list[Path] = []

    def make(config: str, ca: bytes | None) -> Path:
        folder = Path(tempfile.mkdtemp(prefix="canal-corp-", dir="/tmp")) / "project"
        folder.mkdir()
        if ca is not None:
            (folder / "certs").mkdir()
            (folder / "certs" / "corp.pem").write_bytes(ca)
        (folder / "canal.yaml").write_text(config)
        services = Services(folder)  # a person approves the settings, the CA's content included
        services.trust.approve(Approver(user="alice", how="tty"), services.trust.status().snapshot.digest)
        made.append(folder)
        return folder

    yield make
    for folder in made:
        remove_project_containers(docker_client, folder)
        shutil.rmtree(folder.parent, ignore_errors=True)


def _config(world: CorpWorld, image: str, *, ca: bool, network: str = "mode: none",
            pip: str = "[canal-corp-hello, canal-corp-demo]") -> str:
    trust = "  ca_certificates: [certs/corp.pem]\n" if ca else ""
    return (f"sandbox:\n  image: {image}\n{trust}"
            f"  network: {{{network}, upstream_proxy: '{world.proxy.url}'}}\n"
            f"image:\n  pip: {pip}\n  index_url: {INDEX}\n")


def _assert_no_credentials(canal: Canal, docker_client: Any, tag: str) -> None:
    """Neither the sandbox (its environment, its files) nor the image (config, history) holds them."""
    seen = canal.run("env; cat /proc/1/environ | tr '\\0' '\\n'; "
                     f"grep -rlsF -- {PASSWORD.split('@')[0]!r} /etc /usr/local /home /tmp /opt /root "
                     "/workspace /var 2>/dev/null; echo scanned")
    assert "scanned" in seen.text, seen.text
    assert PASSWORD.split("@")[0] not in seen.text, seen.text
    image = docker_client.images.get(tag)
    history = json.dumps(docker_client.api.history(image.id))
    assert PASSWORD.split("@")[0] not in json.dumps(image.attrs) + history


def test_an_image_build_reaches_the_index_through_the_upstream_proxy_with_the_ca(
        world: CorpWorld, pip_image: str, make_project: Any, docker_client: Any) -> None:
    project = make_project(_config(world, pip_image, ca=True), world.ca.cert_pem)
    with Canal(project) as canal:
        done = canal.run("python3 -c 'import canal_corp_hello, canal_corp_demo; "
                         "print(canal_corp_hello.ANSWER, canal_corp_demo.ANSWER)'; "
                         "echo $SSL_CERT_FILE $PIP_INDEX_URL")
        assert done.exit_code == 0, done.text
        assert "7 42" in done.text
        assert f"/etc/ssl/certs/ca-certificates.crt {INDEX}" in done.text
        report = image_report(canal._services)
        shown = report.added or {}
        assert any("Canal Test Root CA" in line for line in shown.get("ca_certificates", [])), shown
        assert shown.get("index_url") == INDEX
        records = [json.loads(line.text) for line in canal._services.audit.lines()]
        ready = [r["data"]["recipe"] for r in records if r.get("event") == "image.ready"]
        assert any("Canal Test Root CA" in " ".join(r.get("ca_certificates", [])) for r in ready), ready
        _assert_no_credentials(canal, docker_client, report.tag)
    # the sdist's build isolation fetched its backend from the index too, through the proxy, signed in
    assert any(r.startswith("GET /simple/canal-corp-backend/") for r in world.index.requests())
    connects = [r for r in world.proxy.log if r.method == "CONNECT" and r.target == f"{INDEX_HOST}:443"]
    assert connects, world.proxy.log
    assert all(r.authorized for r in connects), world.proxy.log


def test_without_the_ca_the_build_fails_and_says_which_setting_is_missing(
        world: CorpWorld, pip_image: str, make_project: Any) -> None:
    project = make_project(_config(world, pip_image, ca=False, pip="[canal-corp-hello]"), None)
    with Canal(project) as canal, pytest.raises(ImageBuildFailed) as failed:
        canal.run("true")
    assert "CERTIFICATE_VERIFY_FAILED" in failed.value.message
    assert "sandbox.ca_certificates" in failed.value.hint
    assert "docs/images.md" in failed.value.hint


def test_pip_in_an_allowlisted_sandbox_goes_through_both_proxies(
        world: CorpWorld, pip_image: str, make_project: Any, docker_client: Any) -> None:
    config = _config(world, pip_image, ca=True, network="mode: allowlist, allow_mirrors: true", pip="[]")
    project = make_project(config, world.ca.cert_pem)
    with Canal(project) as canal:
        try:
            done = canal.run("python3 -m pip install --no-cache-dir --break-system-packages --target /tmp/t "
                             "canal-corp-demo && PYTHONPATH=/tmp/t python3 -c "
                             "'import canal_corp_demo; print(canal_corp_demo.ANSWER)'", timeout_s=180)
            assert done.exit_code == 0, done.text
            assert done.output.splitlines()[-1] == "42", done.text
            proxied = canal.run("echo $HTTPS_PROXY")
            assert "@" not in proxied.text  # Canal's own proxy: no credentials, not the upstream's address
            assert world.proxy.url not in proxied.text
            log = canal.egress_log()
            assert any(r.host == INDEX_HOST and r.port == 443 and r.allowed for r in log.records), log
            _assert_no_credentials(canal, docker_client, image_report(canal._services).tag)
        finally:
            canal.down()
    connects = [r for r in world.proxy.log if r.method == "CONNECT" and r.target == f"{INDEX_HOST}:443"]
    assert len(connects) >= 3, world.proxy.log  # the index, the files, build isolation's own fetches
    assert all(r.authorized for r in connects)


def test_a_network_failure_without_a_network_names_the_setting(env: Path, make_project: Any) -> None:
    project = make_project("sandbox:\n  network: none\n", None)
    with Canal(project) as canal:
        failed = canal.run("curl -sS https://example.com/simple/")
        canal.down()
    assert failed.exit_code != 0
    assert "no network (sandbox.network: none)" in failed.text
    assert "docs/egress.md" in failed.text
