"""How the OTLP exporter reaches its collector, against receivers on loopback: headers whose values come
from environment variables named in canal.yaml (a token never in the file, the cursor or an error), TLS
with a CA and a client certificate for https endpoints, no redirects, and proxies only when configured
(HTTP(S)_PROXY in the environment are ignored)."""

from __future__ import annotations

import datetime
import ipaddress
import ssl
from collections.abc import Iterator
from pathlib import Path

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID
from otlp_receiver import Receiver, otlp_receiver
from pydantic import ValidationError

from canal.host.audit import AuditLog
from canal.host.audit.errors import AuditExportError
from canal.host.audit.otlp import OtlpSettings
from canal.host.audit.shipper import OtlpShipper

TOKEN = "Bearer otlp-secret-6f1c2b9a"


def ship(log: AuditLog, endpoint: str, **settings: object) -> int:
    log.append("run.denied", {"command": "curl evil"})
    settings_ = OtlpSettings(endpoint=endpoint, timeout_s=3, **settings)
    return OtlpShipper(log.path, settings_, "demo-1").ship().sent


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    with otlp_receiver() as r:
        yield r


@pytest.fixture
def proxy() -> Iterator[Receiver]:
    """A second receiver standing in for a proxy: a request whose path is a whole URL went through it."""
    with otlp_receiver() as r:
        yield r


# headers ---------------------------------------------------------------------------------------------


def test_a_header_takes_its_value_from_the_environment_variable_canal_yaml_names(
        log: AuditLog, receiver: Receiver, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CANAL_TEST_OTLP_AUTH", TOKEN)
    monkeypatch.setenv("CANAL_TEST_OTLP_TENANT", "team-a")
    headers = {"Authorization": "CANAL_TEST_OTLP_AUTH", "X-Scope-OrgID": "CANAL_TEST_OTLP_TENANT"}
    assert ship(log, receiver.endpoint, headers=headers) == 1
    got = receiver.headers[0]
    assert (got["authorization"], got["x-scope-orgid"]) == (TOKEN, "team-a")
    assert got["content-type"] == "application/json"
    on_disk = b"".join(p.read_bytes() for p in log.path.parent.iterdir() if p.is_file())
    assert TOKEN.encode() not in on_disk  # the cursor and the log hold the variable's name at most


def test_an_unset_header_variable_sends_nothing_and_says_which_variable(
        log: AuditLog, receiver: Receiver, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CANAL_TEST_OTLP_AUTH", raising=False)
    with pytest.raises(AuditExportError, match="CANAL_TEST_OTLP_AUTH") as failed:
        ship(log, receiver.endpoint, headers={"Authorization": "CANAL_TEST_OTLP_AUTH"})
    assert failed.value.code == "AUDIT_EXPORT_FAILED"
    assert "CANAL_TEST_OTLP_AUTH" in failed.value.hint
    assert receiver.requests == []


def test_a_header_value_with_a_line_break_is_refused_without_echoing_it(
        log: AuditLog, receiver: Receiver, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CANAL_TEST_OTLP_AUTH", "x\r\nX-Injected: 1")
    with pytest.raises(AuditExportError) as failed:
        ship(log, receiver.endpoint, headers={"Authorization": "CANAL_TEST_OTLP_AUTH"})
    assert "X-Injected" not in str(failed.value)
    assert receiver.requests == []


@pytest.mark.parametrize("headers", [{"Authorization": "Bearer abc"}, {"Authorization": "lower_case"},
                                     {"Bad Header": "CANAL_X"}, {"Content-Type": "CANAL_X"},
                                     {"Host": "CANAL_X"}])
def test_headers_name_variables_never_values(headers: dict[str, str]) -> None:
    with pytest.raises(ValidationError):
        OtlpSettings(endpoint="http://127.0.0.1:4318", headers=headers)


def test_settings_with_headers_are_hashable_and_carry_no_secret() -> None:
    settings = OtlpSettings(endpoint="http://127.0.0.1:4318", headers={"Authorization": "CANAL_OTLP_AUTH"})
    assert "CANAL_OTLP_AUTH" in settings.model_dump_json()
    hash(settings)


# redirects ---------------------------------------------------------------------------------------------


def test_a_redirect_is_not_followed(log: AuditLog, receiver: Receiver,
                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """A collector answering 307 elsewhere would get the token sent on to whatever it names."""
    monkeypatch.setenv("CANAL_TEST_OTLP_AUTH", TOKEN)
    receiver.status = 307
    receiver.location = "http://127.0.0.1:9/v1/logs"
    with pytest.raises(AuditExportError, match="HTTP 307"):
        ship(log, receiver.endpoint, headers={"Authorization": "CANAL_TEST_OTLP_AUTH"})


# proxies -------------------------------------------------------------------------------------------------


def _proxy_env(monkeypatch: pytest.MonkeyPatch, url: str) -> None:
    for name in ("no_proxy", "NO_PROXY"):
        monkeypatch.delenv(name, raising=False)
    for name in ("http_proxy", "HTTP_PROXY", "https_proxy", "HTTPS_PROXY", "all_proxy", "ALL_PROXY"):
        monkeypatch.setenv(name, url)


def test_proxy_variables_in_the_environment_are_ignored(log: AuditLog, receiver: Receiver, proxy: Receiver,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    _proxy_env(monkeypatch, proxy.endpoint)
    assert ship(log, receiver.endpoint) == 1
    assert receiver.paths == ["/v1/logs"]
    assert proxy.requests == []


def test_a_configured_proxy_is_used(log: AuditLog, receiver: Receiver, proxy: Receiver,
                                    monkeypatch: pytest.MonkeyPatch) -> None:
    _proxy_env(monkeypatch, "http://127.0.0.1:9")  # the environment's proxy is still not the one used
    assert ship(log, receiver.endpoint, proxy=proxy.endpoint) == 1
    assert proxy.paths == [receiver.endpoint + "/v1/logs"]
    assert receiver.requests == []


@pytest.mark.parametrize("proxy_url", ["socks5://127.0.0.1:1080", "http://u:p@proxy:3128", "proxy:3128"])
def test_a_proxy_is_a_plain_http_url(proxy_url: str) -> None:
    with pytest.raises(ValidationError):
        OtlpSettings(endpoint="http://127.0.0.1:4318", proxy=proxy_url)


# TLS ---------------------------------------------------------------------------------------------------


def _cert(subject: str, key: ec.EllipticCurvePrivateKey, issuer: tuple[x509.Name, ec.EllipticCurvePrivateKey]
          | None = None, *, ca: bool = False, ip: str | None = None) -> x509.Certificate:
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, subject)])
    issuer_name, signer = issuer or (name, key)
    now = datetime.datetime.now(datetime.UTC)
    builder = (x509.CertificateBuilder().subject_name(name).issuer_name(issuer_name)
               .public_key(key.public_key()).serial_number(x509.random_serial_number())
               .not_valid_before(now - datetime.timedelta(minutes=5))
               .not_valid_after(now + datetime.timedelta(hours=1))
               .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True))
    if ca:
        builder = builder.add_extension(x509.KeyUsage(
            digital_signature=True, key_cert_sign=True, crl_sign=True, content_commitment=False,
            key_encipherment=False, data_encipherment=False, key_agreement=False, encipher_only=False,
            decipher_only=False), critical=True)
        ski = x509.SubjectKeyIdentifier.from_public_key(key.public_key())
        builder = builder.add_extension(ski, critical=False)
    else:
        builder = builder.add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(
            signer.public_key()), critical=False)
    if ip is not None:
        builder = builder.add_extension(x509.SubjectAlternativeName([x509.IPAddress(
            ipaddress.ip_address(ip))]), critical=False)
    return builder.sign(signer, hashes.SHA256())


def _write(path: Path, cert: x509.Certificate, key: ec.EllipticCurvePrivateKey | None = None) -> Path:
    data = cert.public_bytes(serialization.Encoding.PEM)
    if key is not None:
        data += key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                  serialization.NoEncryption())
    path.write_bytes(data)
    path.chmod(0o600)
    return path


@pytest.fixture(scope="module")
def pki(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """A CA, the collector's certificate for 127.0.0.1 and a client certificate, both by that CA; and a
    client certificate by another CA the collector does not trust."""
    folder = tmp_path_factory.mktemp("pki")
    ca_key, rogue_key = ec.generate_private_key(ec.SECP256R1()), ec.generate_private_key(ec.SECP256R1())
    ca, rogue = _cert("canal test CA", ca_key, ca=True), _cert("rogue CA", rogue_key, ca=True)
    server_key, client_key = ec.generate_private_key(ec.SECP256R1()), ec.generate_private_key(ec.SECP256R1())
    other_key = ec.generate_private_key(ec.SECP256R1())
    return {
        "ca": _write(folder / "ca.pem", ca),
        "server": _write(folder / "server.pem", _cert("collector", server_key, (ca.subject, ca_key),
                                                      ip="127.0.0.1"), server_key),
        "client": _write(folder / "client.pem", _cert("canal-shipper", client_key, (ca.subject, ca_key))),
        "client_key": folder / "client.key",
        "rogue_client": _write(folder / "rogue.pem", _cert("canal-shipper", other_key,
                                                           (rogue.subject, rogue_key)), other_key),
        "_keys": _write_key(folder / "client.key", client_key),
    }


def _write_key(path: Path, key: ec.EllipticCurvePrivateKey) -> Path:
    path.write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                       serialization.NoEncryption()))
    path.chmod(0o600)
    return path


@pytest.fixture
def tls_receiver(pki: dict[str, Path]) -> Iterator[Receiver]:
    """An HTTPS collector on loopback that requires a client certificate from its CA."""
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(pki["server"])
    context.load_verify_locations(pki["ca"])
    context.verify_mode = ssl.CERT_REQUIRED
    with otlp_receiver(tls=context) as r:
        yield r


def test_https_with_a_ca_and_a_client_certificate(log: AuditLog, tls_receiver: Receiver,
                                                  pki: dict[str, Path]) -> None:
    tls = {"ca_file": str(pki["ca"]), "client_cert": str(pki["client"]), "client_key": str(pki["client_key"])}
    assert tls_receiver.endpoint.startswith("https://127.0.0.1:")
    assert ship(log, tls_receiver.endpoint, tls=tls) == 1
    subject = dict(pair[0] for pair in tls_receiver.peer_certs[0]["subject"])  # type: ignore[index]
    assert subject["commonName"] == "canal-shipper"


def test_https_refuses_a_collector_its_ca_did_not_sign(log: AuditLog, tls_receiver: Receiver,
                                                       pki: dict[str, Path]) -> None:
    with pytest.raises(AuditExportError, match=r"(?i)certificate[ _]verify[ _]failed"):
        ship(log, tls_receiver.endpoint, tls={"client_cert": str(pki["client"]),
                                              "client_key": str(pki["client_key"])})
    assert tls_receiver.requests == []


@pytest.mark.parametrize("client", [None, "rogue_client"])
def test_the_collector_refuses_a_missing_or_foreign_client_certificate(
        log: AuditLog, tls_receiver: Receiver, pki: dict[str, Path], client: str | None) -> None:
    tls = {"ca_file": str(pki["ca"])} | ({"client_cert": str(pki[client])} if client else {})
    with pytest.raises(AuditExportError):
        ship(log, tls_receiver.endpoint, tls=tls)
    assert tls_receiver.requests == []


@pytest.mark.parametrize(("endpoint", "tls"), [
    ("http://127.0.0.1:4318", {"ca_file": "/etc/ssl/certs/ca-certificates.crt"}),  # TLS options need https
    ("https://127.0.0.1:4318", {"client_key": "/k.pem"}),  # a key without its certificate
    ("https://127.0.0.1:4318", {"ca_file": "relative/ca.pem"}),  # paths are absolute
    ("https://127.0.0.1:4318", {"ca_file": "/ca.pem", "verify": False}),  # no switching verification off
])
def test_tls_settings_are_checked_when_read(endpoint: str, tls: dict[str, object]) -> None:
    with pytest.raises(ValidationError):
        OtlpSettings(endpoint=endpoint, tls=tls)
