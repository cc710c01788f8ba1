"""Issue 31's settings as pure logic: each bad input refused with its own code at load (approval) time,
CA files checked and approved by content, the upstream proxy's credentials kept out of canal.yaml and of
squid's lookups, the build's CA layer before any fetch, and the offline hint."""

from __future__ import annotations

import datetime
import os
from pathlib import Path

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from canal.runtime.corpnet import cacerts
from canal.runtime.corpnet.offline import offline_footer
from canal.runtime.errors import ConfigError
from canal.runtime.settings.config import CanalConfig, parse_config
from canal.runtime.trust.snapshot import take_snapshot, trusted_settings
from canal.sandbox.docker.project_image import BuildTrust, ProjectImage, dockerfile, recipe_hash
from canal.sandbox.egress import AllowEntry
from canal.sandbox.egress_squid import squid_conf
from canal.sandbox.egress_upstream import ENV_CREDENTIALS, ENV_CREDENTIALS_FILE, Upstream, upstream
from canal.sandbox.errors import UPSTREAM_PROXY_CREDENTIALS_UNUSABLE
from canal.sandbox.result import CapturedOutput, ExecResult
from tests.error_codes import raises_code


def _ca_pem(name: str = "Corp Root CA") -> tuple[bytes, bytes]:
    key = ec.generate_private_key(ec.SECP256R1())
    subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, name)])
    now = datetime.datetime.now(datetime.UTC)
    cert = (x509.CertificateBuilder().subject_name(subject).issuer_name(subject).public_key(key.public_key())
            .serial_number(x509.random_serial_number()).not_valid_before(now)
            .not_valid_after(now + datetime.timedelta(days=1))
            .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
            .sign(key, hashes.SHA256()))
    key_pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                serialization.NoEncryption())
    return cert.public_bytes(serialization.Encoding.PEM), key_pem


@pytest.mark.parametrize(("text", "code"), [
    ("sandbox:\n  ca_certificates: [/etc/ssl/certs/corp.pem]\n", "CA_CERT_OUTSIDE_PROJECT"),
    ("sandbox:\n  ca_certificates: [../corp.pem]\n", "CA_CERT_OUTSIDE_PROJECT"),
    ("sandbox:\n  network: {mode: allowlist, upstream_proxy: 'http://u:p@proxy.canal.test:3128'}\n",
     "UPSTREAM_PROXY_CREDENTIALS_INLINE"),
    ("image:\n  index_url: http://index.canal.test/simple/\n", "MIRROR_NOT_HTTPS"),
    ("image:\n  npm_registry: ftp://npm.canal.test/\n", "MIRROR_NOT_HTTPS"),
    ("sandbox:\n  network: {mode: none, upstream_proxy: 'https://proxy.canal.test:3128'}\n",
     "CONFIG_INVALID"),
    ("sandbox:\n  network: {mode: bridge, upstream_proxy: 'http://proxy.canal.test:3128'}\n",
     "CONFIG_INVALID"),
    ("image:\n  index_url: 'https://index.canal.test/$HOME/'\n", "CONFIG_INVALID"),
])
def test_each_bad_setting_is_refused_with_its_own_code_naming_it(text: str, code: str) -> None:
    with pytest.raises(ConfigError) as refused:
        parse_config(text)
    assert refused.value.code == code
    assert "canal.yaml:" in refused.value.message
    assert ("sandbox." in refused.value.message) or ("image." in refused.value.message)
    assert "p@proxy" not in refused.value.message  # an inline password is not repeated back


def test_defaults_keep_the_digest_of_settings_approved_before_these_settings() -> None:
    settings = trusted_settings(CanalConfig())
    assert "ca_certificates" not in settings["sandbox"]
    assert settings["sandbox"]["network"] == "none"
    assert "image" not in settings


def test_allow_mirrors_adds_the_mirror_hosts_a_person_then_sees() -> None:
    config = parse_config("sandbox:\n  network: {mode: allowlist, allow: [docs.canal.test], "
                          "allow_mirrors: true}\nimage:\n  index_url: https://index.canal.test:8443/simple/\n"
                          "  npm_registry: https://npm.canal.test/\n")
    assert [e.label for e in config.sandbox.network.allow] == [
        "docs.canal.test", "index.canal.test:8443", "npm.canal.test:443"]
    assert trusted_settings(config)["sandbox"]["network"]["allow_mirrors"] is True


def test_a_ca_file_is_approved_by_content_and_refused_when_not_a_certificate(tmp_path: Path) -> None:
    cert, key = _ca_pem()
    (tmp_path / "certs").mkdir()
    (tmp_path / "certs" / "corp.pem").write_bytes(cert)
    (tmp_path / "canal.yaml").write_text("sandbox:\n  ca_certificates: [certs/corp.pem]\n")
    first = take_snapshot(tmp_path)
    entry = first.settings["sandbox"]["ca_certificates"][0]
    assert entry["source"] == "certs/corp.pem"
    assert "CN=Corp Root CA" in entry["certificates"][0]
    (tmp_path / "certs" / "corp.pem").write_bytes(_ca_pem("Other CA")[0])
    assert take_snapshot(tmp_path).digest != first.digest  # a swapped CA needs a person again
    broken = b"-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n"
    for data, code in ((cert + key, "CA_CERT_PRIVATE_KEY"), (b"not a certificate\n", "CA_CERT_NOT_PEM"),
                       (broken, "CA_CERT_NOT_PEM")):
        (tmp_path / "certs" / "corp.pem").write_bytes(data)
        with pytest.raises(ConfigError) as refused:
            take_snapshot(tmp_path)
        assert refused.value.code == code
        assert "sandbox.ca_certificates" in refused.value.message


def test_a_ca_file_that_is_a_symlink_out_of_the_project_is_refused(tmp_path: Path) -> None:
    outside = tmp_path / "outside.pem"
    outside.write_bytes(_ca_pem()[0])
    project = tmp_path / "project"
    project.mkdir()
    (project / "corp.pem").symlink_to(outside)
    with pytest.raises(ConfigError) as refused:
        cacerts.load(project, ["corp.pem"])
    assert refused.value.code == "CA_CERT_OUTSIDE_PROJECT"


def test_the_host_bundle_is_read_by_name(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    bundle = tmp_path / "bundle.crt"
    bundle.write_bytes(_ca_pem("A")[0] + b"# a comment line\n" + _ca_pem("B")[0])
    monkeypatch.setattr(cacerts, "host_bundle", lambda: bundle)
    [found] = cacerts.load(tmp_path, ["host"])
    assert len(found.certificates) == 2
    assert found.approved_form() == {"source": "host"}
    assert "2 certificates" in found.described()


def test_squid_sends_allowed_requests_to_the_upstream_and_looks_nothing_up() -> None:
    allow = [AllowEntry.model_validate("index.canal.test:443")]
    conf = squid_conf(allow, port=3128, sandboxes="10.0.0.0/24",
                      upstream=Upstream("proxy.canal.test", 3128, "corp user", "p@ss%word"))
    assert ("cache_peer proxy.canal.test parent 3128 0 no-query no-digest no-netdb-exchange default "
            "name=canal_upstream login=corp%20user:p%40ss%25word") in conf
    assert "never_direct allow all" in conf
    assert "http_access deny allow0_host allow0_port canal_blocked" not in conf
    plain = squid_conf(allow, port=3128, sandboxes="10.0.0.0/24")
    assert "http_access deny allow0_host allow0_port canal_blocked" in plain
    assert "cache_peer" not in plain


def test_credentials_come_from_the_environment_or_a_closed_file_outside_the_project(tmp_path: Path) -> None:
    url = "http://proxy.canal.test:3128"
    assert upstream(url, {}) == Upstream("proxy.canal.test", 3128)
    assert upstream(url, {ENV_CREDENTIALS: "u:p:q"}) == Upstream("proxy.canal.test", 3128, "u", "p:q")
    secret = tmp_path / "creds"
    secret.write_text("u:p\n")
    os.chmod(secret, 0o600)
    assert upstream(url, {ENV_CREDENTIALS_FILE: str(secret)}).password == "p"  # type: ignore[union-attr]
    with raises_code(UPSTREAM_PROXY_CREDENTIALS_UNUSABLE):
        upstream(url, {ENV_CREDENTIALS_FILE: str(secret)}, forbidden=[tmp_path])  # inside the project
    os.chmod(secret, 0o644)
    with raises_code(UPSTREAM_PROXY_CREDENTIALS_UNUSABLE):
        upstream(url, {ENV_CREDENTIALS_FILE: str(secret)})
    with raises_code(UPSTREAM_PROXY_CREDENTIALS_UNUSABLE):
        upstream(url, {ENV_CREDENTIALS: "no-colon"})
    assert "p:q" not in repr(BuildTrust(proxy="http://u:p:q@proxy.canal.test:3128"))


def test_the_build_trusts_the_ca_before_any_step_that_fetches() -> None:
    image = ProjectImage(pip=("pytest",), index_url="https://index.canal.test/simple/")
    trust = BuildTrust(certificates=(_ca_pem()[0],))
    lines = dockerfile(image, "sha256:base", [], "1000:1000", trust).splitlines()
    ca_step = lines.index('RUN ["/bin/sh", "/usr/local/lib/canal/install", "ca"]')
    env = next(i for i, line in enumerate(lines) if line.startswith("ENV "))
    pip_step = next(i for i, line in enumerate(lines) if '"pip"' in line)
    assert ca_step < env < pip_step
    assert 'PIP_CERT="/etc/ssl/certs/ca-certificates.crt"' in lines[env]
    assert 'PIP_INDEX_URL="https://index.canal.test/simple/"' in lines[env]
    text = "\n".join(lines)
    assert recipe_hash(text, [], trust.certificates) != recipe_hash(text, [], (_ca_pem()[0],))
    assert BuildTrust(proxy="http://u:p@proxy.canal.test:3128").buildargs()["HTTPS_PROXY"].endswith(":3128")


def _result(stderr: bytes, code: int) -> ExecResult:
    return ExecResult(stdout=CapturedOutput.of(b""), stderr=CapturedOutput.of(stderr), exit_code=code,
                      duration_s=0.1)


def test_a_network_failure_without_a_network_names_the_setting() -> None:
    [hint] = offline_footer(_result(b"curl: (6) Could not resolve host: index.canal.test\n", 6))
    assert "sandbox.network: none" in hint
    assert "docs/egress.md" in hint
    assert offline_footer(_result(b"ERROR: No matching distribution (from versions: none)\n", 1))
    assert offline_footer(_result(b"Could not resolve host\n", 0)) == []
    assert offline_footer(_result(b"AssertionError: 1 != 2\n", 1)) == []
