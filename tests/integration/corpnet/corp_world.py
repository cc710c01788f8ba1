"""A self-contained "corporate network" for integration tests: a private CA, a package index that only
speaks HTTPS with a certificate of that CA, and an authenticating upstream HTTP proxy that is the only
way to it.

It stands in for what a developer behind a corporate proxy has: pip (and pip's build isolation) must
trust the corporate CA and go through the proxy. Nothing leaves the machine: the index is a container on
a network the test creates, the proxy listens in the test process on the host's docker0 address, and it
resolves names only from the map it is given (every other name is refused, never looked up).
"""

from __future__ import annotations

import base64
import binascii
import datetime
import gzip
import hashlib
import hmac
import html
import http
import io
import ipaddress
import re
import selectors
import socket
import socketserver
import tarfile
import threading
import time
import uuid
import zipfile
from collections.abc import Iterator, Mapping
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from types import TracebackType
from typing import Any
from urllib.parse import urlsplit

import docker
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

from tests.integration.egress.egress_world import _b64sha

SANDBOX_IMAGE = "canal/sandbox:0.1.0"
LABEL = "canal.test"
LABELS = {LABEL: "corpnet"}
INDEX_HOST = "index.canal.test"
_ZIP_TIME = (1980, 1, 1, 0, 0, 0)  # fixed timestamps: the same inputs give the same bytes


# ---- a private CA -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class TestCA:
    """A root CA of the test's own: clients trust it only when told to (PIP_CERT, --cacert)."""

    __test__ = False  # not a pytest test class, though its name starts with Test

    cert_pem: bytes
    key_pem: bytes

    def issue(self, names: list[str]) -> tuple[bytes, bytes]:
        """(certificate PEM, key PEM) of a TLS server for ``names``, valid from yesterday for 30 days."""
        ca_cert = x509.load_pem_x509_certificate(self.cert_pem)
        ca_key = serialization.load_pem_private_key(self.key_pem, password=None)
        assert isinstance(ca_key, ec.EllipticCurvePrivateKey)
        key = ec.generate_private_key(ec.SECP256R1())
        builder = (
            _cert_builder(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, names[0])]), ca_cert.subject,
                          key.public_key())
            .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
            .add_extension(_key_usage(cert_sign=False), critical=True)
            .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
            .add_extension(x509.SubjectAlternativeName([x509.DNSName(n) for n in names]), critical=False)
            .add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()),
                           critical=False)
        )
        return _pem(builder.sign(ca_key, hashes.SHA256())), _key_pem(key)


def make_ca(common_name: str = "Canal Test Root CA") -> TestCA:
    """A self-signed CA (CA=true, keyCertSign), strict enough for OpenSSL 3's X509_STRICT checks."""
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name),
                      x509.NameAttribute(NameOID.ORGANIZATION_NAME, "Canal tests")])
    cert = (
        _cert_builder(name, name, key.public_key())
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .add_extension(_key_usage(cert_sign=True), critical=True)
        .sign(key, hashes.SHA256())
    )
    return TestCA(_pem(cert), _key_pem(key))


def _cert_builder(subject: x509.Name, issuer: x509.Name,
                  public_key: ec.EllipticCurvePublicKey) -> x509.CertificateBuilder:
    now = datetime.datetime.now(datetime.UTC)
    return (
        x509.CertificateBuilder().subject_name(subject).issuer_name(issuer).public_key(public_key)
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(days=1))
        .not_valid_after(now + datetime.timedelta(days=30))
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(public_key), critical=False)
    )


def _key_usage(*, cert_sign: bool) -> x509.KeyUsage:
    return x509.KeyUsage(digital_signature=True, content_commitment=False, key_encipherment=False,
                         data_encipherment=False, key_agreement=False, key_cert_sign=cert_sign,
                         crl_sign=cert_sign, encipher_only=False, decipher_only=False)


def _pem(cert: x509.Certificate) -> bytes:
    return cert.public_bytes(serialization.Encoding.PEM)


def _key_pem(key: ec.EllipticCurvePrivateKey) -> bytes:
    return key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                             serialization.NoEncryption())


# ---- packages -----------------------------------------------------------------------------------------

# The build backend of canal_corp_demo: stdlib only, so that pip's isolated build environment needs
# nothing but this one wheel, fetched from the corporate index (through the proxy, trusting the CA).
BACKEND_SOURCE = r'''"""A PEP 517 build backend in one module (stdlib only), for Canal's corpnet tests."""
import base64
import hashlib
import io
import os
import tarfile
import tomllib
import zipfile


def _project():
    with open("pyproject.toml", "rb") as f:
        project = tomllib.load(f)["project"]
    return project["name"], project["version"], project["name"].replace("-", "_").lower()


def _sources(top):
    for folder, dirs, files in os.walk(top):
        dirs[:] = sorted(d for d in dirs if d != "__pycache__")
        for file in sorted(f for f in files if f.endswith(".py")):
            with open(os.path.join(folder, file), "rb") as f:
                yield os.path.join(folder, file).replace(os.sep, "/"), f.read()


def _sha(data):
    return base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()


def get_requires_for_build_wheel(config_settings=None):
    return []


def get_requires_for_build_sdist(config_settings=None):
    return []


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    name, version, top = _project()
    info = f"{top}-{version}.dist-info"
    files = dict(_sources(top))
    files[f"{info}/METADATA"] = f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n".encode()
    files[f"{info}/WHEEL"] = (b"Wheel-Version: 1.0\nGenerator: canal-corp-backend\n"
                              b"Root-Is-Purelib: true\nTag: py3-none-any\n")
    record = "".join(f"{p},sha256={_sha(d)},{len(d)}\n" for p, d in files.items())
    files[f"{info}/RECORD"] = f"{record}{info}/RECORD,,\n".encode()
    filename = f"{top}-{version}-py3-none-any.whl"
    with zipfile.ZipFile(os.path.join(wheel_directory, filename), "w") as zf:
        for path, data in files.items():
            zf.writestr(zipfile.ZipInfo(path, (1980, 1, 1, 0, 0, 0)), data)
    return filename


def build_sdist(sdist_directory, config_settings=None):
    name, version, top = _project()
    files = dict(_sources(top))
    for extra in ("pyproject.toml", "PKG-INFO"):
        if os.path.exists(extra):
            with open(extra, "rb") as f:
                files[extra] = f.read()
    filename = f"{top}-{version}.tar.gz"
    with tarfile.open(os.path.join(sdist_directory, filename), "w:gz") as tar:
        for path, data in sorted(files.items()):
            info = tarfile.TarInfo(f"{top}-{version}/{path}")
            info.size, info.mode = len(data), 0o644
            tar.addfile(info, io.BytesIO(data))
    return filename
'''

DEMO_PYPROJECT = b"""[build-system]
requires = ["canal-corp-backend"]
build-backend = "canal_corp_backend"

[project]
name = "canal-corp-demo"
version = "1.0"
"""


def backend_wheel() -> tuple[str, bytes]:
    """canal-corp-backend 1.0: the build backend that pip's build isolation must fetch from the index."""
    return _wheel("canal-corp-backend", "1.0", {"canal_corp_backend/__init__.py": BACKEND_SOURCE.encode()})


def hello_wheel() -> tuple[str, bytes]:
    """canal-corp-hello 1.0: a plain wheel, for image builds that pip-install through the proxy."""
    return _wheel("canal-corp-hello", "1.0", {"canal_corp_hello/__init__.py": b"ANSWER = 7\n"})


def demo_sdist() -> tuple[str, bytes]:
    """canal-corp-demo 1.0 as source only: installing it makes pip build it, in an isolated environment
    that must fetch canal-corp-backend from the same index (the case that forgets the CA)."""
    top = "canal_corp_demo-1.0"
    files = {f"{top}/PKG-INFO": b"Metadata-Version: 2.1\nName: canal-corp-demo\nVersion: 1.0\n",
             f"{top}/pyproject.toml": DEMO_PYPROJECT,
             f"{top}/canal_corp_demo/__init__.py": b"ANSWER = 42\n"}
    buf = io.BytesIO()
    with gzip.GzipFile(fileobj=buf, mode="wb", mtime=0, filename="") as gz:  # no name or time: same bytes
        gz.write(tar_bytes(files))
    return f"{top}.tar.gz", buf.getvalue()


def _wheel(name: str, version: str, modules: Mapping[str, bytes]) -> tuple[str, bytes]:
    """A pure wheel with fixed timestamps (egress_world.wheel has one fixed module and today's times)."""
    dist = name.replace("-", "_")
    info = f"{dist}-{version}.dist-info"
    files = {**modules,
             f"{info}/METADATA": f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n".encode(),
             f"{info}/WHEEL": b"Wheel-Version: 1.0\nGenerator: canal-test\nRoot-Is-Purelib: true\n"
                              b"Tag: py3-none-any\n"}
    record = "".join(f"{path},sha256={_b64sha(data)},{len(data)}\n" for path, data in files.items())
    files[f"{info}/RECORD"] = f"{record}{info}/RECORD,,\n".encode()
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        for path, data in files.items():
            entry = zipfile.ZipInfo(path, _ZIP_TIME)
            entry.external_attr, entry.compress_type = 0o644 << 16, zipfile.ZIP_DEFLATED
            zf.writestr(entry, data)
    return f"{dist}-{version}-py3-none-any.whl", buf.getvalue()


def tar_bytes(files: Mapping[str, bytes], mode: int = 0o644, *, folders: bool = True) -> bytes:
    """An uncompressed tar (for put_archive) owned by root, time 0; with entries of its folders (0755) if
    ``folders``: never for folders that exist where it is extracted, as it would reset their modes."""
    buf = io.BytesIO()
    parents = {"/".join(path.split("/")[:i]) for path in files for i in range(1, path.count("/") + 1)}
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for folder in sorted(parents) if folders else []:
            entry = tarfile.TarInfo(folder)
            entry.type, entry.mode = tarfile.DIRTYPE, 0o755
            tar.addfile(entry)
        for path, content in sorted(files.items()):
            entry = tarfile.TarInfo(path)
            entry.size, entry.mode = len(content), mode
            tar.addfile(entry, io.BytesIO(content))
    return buf.getvalue()


def normalize(name: str) -> str:
    """PEP 503's name normalization (the folder of a project under /simple/)."""
    return re.sub(r"[-_.]+", "-", name).lower()


def project_of(filename: str) -> str:
    """The normalized project name of a wheel or sdist file name."""
    stem = filename.removesuffix(".tar.gz")
    return normalize(filename.split("-")[0] if filename.endswith(".whl") else stem.rsplit("-", 1)[0])


def index_tree(packages: list[tuple[str, bytes]]) -> dict[str, bytes]:
    """The static files of a PEP 503 index: simple/index.html, simple/<project>/index.html, files/."""
    projects: dict[str, list[tuple[str, bytes]]] = {}
    for filename, data in packages:
        projects.setdefault(project_of(filename), []).append((filename, data))
    root = "".join(f'<a href="{p}/">{p}</a>\n' for p in sorted(projects))
    tree = {"simple/index.html": _page("Simple index", root)}
    for project, files in projects.items():
        links = "".join(f'<a href="../../files/{html.escape(f)}#sha256={hashlib.sha256(d).hexdigest()}">'
                        f"{html.escape(f)}</a>\n" for f, d in files)
        tree[f"simple/{project}/index.html"] = _page(f"Links for {project}", links)
        tree.update({f"files/{f}": d for f, d in files})
    return tree


def _page(title: str, body: str) -> bytes:
    page = f"<!DOCTYPE html>\n<html><head><title>{title}</title></head>\n<body>\n{body}</body></html>\n"
    return page.encode()


# ---- docker helpers -----------------------------------------------------------------------------------


def create_network(client: docker.DockerClient, name: str | None = None) -> Any:
    """A user-defined bridge of the test's own, labelled so that cleanup() finds what a failed run left."""
    return client.networks.create(name or f"canal-corpnet-{uuid.uuid4().hex[:8]}", driver="bridge",
                                  labels=LABELS)


def docker0_address(client: docker.DockerClient) -> str:
    """The host's address on the default bridge: its IPAM gateway, else the first host of its subnet
    (engines that leave Gateway out of IPAM still give docker0 that address)."""
    for config in client.networks.get("bridge").attrs["IPAM"]["Config"] or []:
        if config.get("Gateway"):
            return str(config["Gateway"])
        subnet = ipaddress.ip_network(config.get("Subnet", "::/128"))
        if subnet.version == 4:
            return str(next(subnet.hosts()))
    msg = "the default bridge has no IPv4 gateway or subnet"
    raise RuntimeError(msg)


def run_container(client: docker.DockerClient, image: str, command: str | list[str], *,
                  network: str | None = None, files: Mapping[str, bytes] | None = None,
                  environment: Mapping[str, str] | None = None, timeout_s: int = 300) -> tuple[int, str]:
    """(exit code, stdout+stderr) of a one-off labelled container; ``files`` are put in before it starts
    (absolute paths), never bind-mounted. No network given: the default bridge, like an image build."""
    extra = {"network": network} if network else {}
    container = client.containers.create(image, command, labels=LABELS, environment=dict(environment or {}),
                                         **extra)
    try:
        for path, data in (files or {}).items():  # into its folder, which must exist (/tmp keeps 1777)
            folder, _, name = path.rpartition("/")
            container.put_archive(folder or "/", tar_bytes({name: data}, folders=False))
        container.start()
        code = int(container.wait(timeout=timeout_s)["StatusCode"])
        return code, container.logs(stdout=True, stderr=True).decode(errors="replace")
    finally:
        container.remove(force=True)


def cleanup(client: docker.DockerClient) -> None:
    """Whatever corpnet runs left: containers, then networks, labelled canal.test=corpnet (images stay:
    the pip base image is a cache)."""
    mine = {"label": f"{LABEL}=corpnet"}
    for container in client.containers.list(all=True, filters=mine):
        with suppress(docker.errors.NotFound):
            container.remove(force=True)
    for network in client.networks.list(filters=mine):
        with suppress(docker.errors.NotFound):
            network.remove()


# ---- the index ----------------------------------------------------------------------------------------

# Runs in the index container: static files over HTTPS, one "REQ <method> <path> <status>" line per
# request on stdout. The TLS handshake happens in the request's thread, so a silent client blocks no one.
INDEX_SERVER = r'''import http.server, ssl, sys

CTX = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
CTX.load_cert_chain("/srv/corp/tls/cert.pem", "/srv/corp/tls/key.pem")


class Handler(http.server.SimpleHTTPRequestHandler):
    timeout = 30

    def __init__(self, *args, **kwargs):
        super().__init__(*args, directory="/srv/corp/www", **kwargs)

    def log_request(self, code="-", size="-"):
        print(f"REQ {self.command} {self.path} {int(code) if str(code).isdigit() else code}", flush=True)


class Server(http.server.ThreadingHTTPServer):
    daemon_threads = True

    def get_request(self):
        sock, addr = self.socket.accept()
        return CTX.wrap_socket(sock, server_side=True, do_handshake_on_connect=False), addr


print("ready", flush=True)
Server(("0.0.0.0", 443), Handler).serve_forever()
'''


class IndexServer:
    """A PEP 503 index at https://index.canal.test/simple/ in a container on the test's network, with a
    certificate of the test CA (so only clients that trust that CA get past the handshake)."""

    def __init__(self, client: docker.DockerClient, network: str, ca: TestCA,
                 packages: list[tuple[str, bytes]], *, image: str = SANDBOX_IMAGE,
                 name: str | None = None) -> None:
        self.client, self.network, self.ca, self.packages = client, network, ca, packages
        self.image, self.name = image, name or f"{network}-index"
        self.container: Any = None
        self.ip = ""

    def start(self, timeout_s: float = 20) -> IndexServer:
        cert, key = self.ca.issue([INDEX_HOST])
        files = {f"corp/www/{path}": data for path, data in index_tree(self.packages).items()}
        files.update({"corp/serve.py": INDEX_SERVER.encode(), "corp/tls/cert.pem": cert,
                      "corp/tls/key.pem": key})
        endpoint = self.client.api.create_endpoint_config(aliases=[INDEX_HOST])
        # port 443 as the image's unprivileged user: the sysctl is per network namespace
        self.container = self.client.containers.create(
            self.image, ["python3", "/srv/corp/serve.py"], name=self.name, labels=LABELS,
            network=self.network, networking_config={self.network: endpoint},
            sysctls={"net.ipv4.ip_unprivileged_port_start": "0"})
        self.container.put_archive("/srv", tar_bytes(files))  # /srv/corp/ and below are new
        self.container.start()
        self.container.reload()
        self.ip = str(self.container.attrs["NetworkSettings"]["Networks"][self.network]["IPAddress"])
        self._wait_listening(timeout_s)
        return self

    def _wait_listening(self, timeout_s: float) -> None:
        """Until the host (where the proxy runs) can open a TCP connection to port 443."""
        deadline = time.monotonic() + timeout_s
        while True:
            try:
                socket.create_connection((self.ip, 443), timeout=1).close()
                return
            except OSError:
                if time.monotonic() > deadline:
                    logs = self.container.logs().decode(errors="replace")
                    msg = f"index server at {self.ip}:443 did not come up; its log:\n{logs}"
                    raise RuntimeError(msg) from None
                time.sleep(0.2)

    def requests(self) -> list[str]:
        """"GET /simple/x/" for each request served so far, from the container's stdout."""
        out = self.container.logs(stdout=True, stderr=False).decode(errors="replace")
        return [" ".join(line.split()[1:3]) for line in out.splitlines() if line.startswith("REQ ")]

    def stop(self) -> None:
        if self.container is not None:
            with suppress(docker.errors.NotFound):
                self.container.remove(force=True)
            self.container = None

    def __enter__(self) -> IndexServer:
        return self.start()

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.stop()


# ---- the upstream proxy -------------------------------------------------------------------------------


@dataclass(frozen=True)
class ProxyRecord:
    """One request the proxy answered: ``status`` is its own answer (200 for a tunnel, 403, 407, ...) or,
    for a forwarded GET, the origin's."""

    method: str
    target: str
    authorized: bool
    status: int


@dataclass
class _Request:
    method: str
    target: str
    headers: dict[str, str]
    rest: bytes  # bytes the client sent after the head (the start of a TLS handshake, say)
    head_lines: list[str] = field(default_factory=list)


class _Server(socketserver.ThreadingTCPServer):
    """At most ``slots`` connections at a time; one more is closed at once rather than queued."""

    daemon_threads = True
    allow_reuse_address = True
    block_on_close = False

    def __init__(self, address: tuple[str, int], proxy: UpstreamProxy, slots: int) -> None:
        self.proxy, self.slots = proxy, threading.BoundedSemaphore(slots)
        super().__init__(address, _Handler)

    def process_request(self, request: Any, client_address: Any) -> None:
        if not self.slots.acquire(blocking=False):
            self.shutdown_request(request)
            return
        try:
            super().process_request(request, client_address)
        except BaseException:
            self.slots.release()
            raise

    def process_request_thread(self, request: Any, client_address: Any) -> None:
        try:
            super().process_request_thread(request, client_address)
        finally:
            self.slots.release()


class _Handler(socketserver.BaseRequestHandler):
    def handle(self) -> None:
        assert isinstance(self.server, _Server)
        self.server.proxy.serve(self.request)


class UpstreamProxy:
    """The corporate proxy: Basic auth required (407 otherwise), CONNECT tunnels and absolute-URI GETs to
    the names in ``hosts`` only (403 for any other: it never resolves or connects to anything else)."""

    def __init__(self, client: docker.DockerClient | None, hosts: Mapping[str, str], *, username: str,
                 password: str, bind: str | None = None, max_connections: int = 64,
                 timeout_s: float = 30.0) -> None:
        self.hosts = {name.lower(): ip for name, ip in hosts.items()}
        self.username, self.password, self.timeout_s = username, password, timeout_s
        self._expected = f"{username}:{password}".encode()
        self._records: list[ProxyRecord] = []
        self._lock = threading.Lock()
        if bind is None:
            assert client is not None, "no bind address: the docker0 address needs the client"
            bind = docker0_address(client)
        self._server = _Server((bind, 0), self, max_connections)
        address: tuple[str, int] = self._server.socket.getsockname()[:2]
        self.host, self.port = address
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.2},
                                        name="corpnet-proxy", daemon=True)
        self._thread.start()

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"

    @property
    def auth_url(self) -> str:
        """The URL with its credentials, as HTTPS_PROXY or curl --proxy take it."""
        return f"http://{self.username}:{self.password}@{self.host}:{self.port}"

    @property
    def log(self) -> list[ProxyRecord]:
        """A copy of the records so far (the proxy's threads append to the original)."""
        with self._lock:
            return list(self._records)

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)

    def __enter__(self) -> UpstreamProxy:
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()

    def serve(self, conn: socket.socket) -> None:
        """One client connection: one request (then a tunnel or one forwarded response), then closed."""
        conn.settimeout(self.timeout_s)
        try:
            request = _read_request(conn)
            if request is None:
                self._answer(conn, "?", "?", False, 400)
                return
            if not self._authorized(request.headers.get("proxy-authorization", "")):
                self._answer(conn, request.method, request.target, False, 407,
                             'Proxy-Authenticate: Basic realm="canal-test"\r\n')
                return
            self._route(conn, request)
        except OSError:
            pass  # the client went away or timed out: nothing to answer

    def _route(self, conn: socket.socket, request: _Request) -> None:
        if request.method == "CONNECT":
            host, _, port = request.target.rpartition(":")
        elif request.method in ("GET", "HEAD") and request.target.startswith("http://"):
            parts = urlsplit(request.target)
            host, port = parts.hostname or "", str(parts.port or 80)
        else:
            self._answer(conn, request.method, request.target, True, 405)
            return
        ip = self.hosts.get(host.lower())
        if ip is None or not port.isdigit() or not 0 < int(port) < 65536:
            self._answer(conn, request.method, request.target, True, 403)
            return
        try:
            upstream = socket.create_connection((ip, int(port)), timeout=self.timeout_s)
        except OSError:
            self._answer(conn, request.method, request.target, True, 502)
            return
        with upstream:
            if request.method == "CONNECT":
                self._answer(conn, "CONNECT", request.target, True, 200, close=False)
                if request.rest:
                    upstream.sendall(request.rest)
            else:
                self._forward(conn, upstream, request)
            _pipe(conn, upstream, self.timeout_s)

    def _forward(self, conn: socket.socket, upstream: socket.socket, request: _Request) -> None:
        """The GET in origin form, without the proxy's own headers; the origin's status is recorded."""
        parts = urlsplit(request.target)
        path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        keep = [line for line in request.head_lines
                if line.split(":", 1)[0].strip().lower() not in ("proxy-authorization", "proxy-connection",
                                                                "connection")]
        head = "\r\n".join([f"{request.method} {path} HTTP/1.1", *keep, "Connection: close", "", ""])
        upstream.sendall(head.encode("latin-1") + request.rest)
        first = upstream.recv(65536)
        status = first.split(b" ", 2)[1] if first.startswith(b"HTTP/") else b"502"
        self._record(request.method, request.target, True, int(status) if status.isdigit() else 502)
        conn.sendall(first)

    def _authorized(self, value: str) -> bool:
        scheme, _, credentials = value.strip().partition(" ")
        if scheme.lower() != "basic":
            return False
        try:
            given = base64.b64decode(credentials.strip(), validate=True)
        except (binascii.Error, ValueError):
            return False
        return hmac.compare_digest(given, self._expected)

    def _answer(self, conn: socket.socket, method: str, target: str, authorized: bool, status: int,
                headers: str = "", *, close: bool = True) -> None:
        self._record(method, target, authorized, status)
        phrase = "Connection Established" if status == 200 else http.HTTPStatus(status).phrase
        tail = "Content-Length: 0\r\nConnection: close\r\n" if close else ""
        conn.sendall(f"HTTP/1.1 {status} {phrase}\r\n{headers}{tail}\r\n".encode())

    def _record(self, method: str, target: str, authorized: bool, status: int) -> None:
        with self._lock:
            self._records.append(ProxyRecord(method, target, authorized, status))


def _read_request(conn: socket.socket, limit: int = 65536) -> _Request | None:
    """The request head (at most ``limit`` bytes), or None if it is not one."""
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = conn.recv(4096)
        if not chunk or len(data) > limit:
            return None
        data += chunk
    head, _, rest = data.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    words = lines[0].split(" ")
    if len(words) != 3 or not words[2].startswith("HTTP/"):
        return None
    headers = {}
    for line in lines[1:]:
        name, _, value = line.partition(":")
        headers[name.strip().lower()] = value.strip()
    return _Request(words[0].upper(), words[1], headers, rest, lines[1:])


def _pipe(a: socket.socket, b: socket.socket, idle_s: float) -> None:
    """Copies both ways until both sides are done (a half-close is passed on) or ``idle_s`` of silence."""
    peer = {a: b, b: a}
    open_sides = {a, b}
    with selectors.DefaultSelector() as selector:
        for side in open_sides:
            selector.register(side, selectors.EVENT_READ, side)
        while open_sides:
            ready = selector.select(idle_s)
            if not ready:
                return
            for key, _ in ready:
                source: socket.socket = key.data
                try:
                    data = source.recv(65536)
                    if data:
                        peer[source].sendall(data)
                        continue
                except OSError:
                    return
                selector.unregister(source)
                open_sides.discard(source)
                with suppress(OSError):
                    peer[source].shutdown(socket.SHUT_WR)


# ---- an image with pip --------------------------------------------------------------------------------


def pip_base_image(client: docker.DockerClient, base: str = SANDBOX_IMAGE) -> str:
    """canal-test/corpnet-pip:<hash>: the sandbox image plus Debian's pip (the sandbox has none), built once
    per base image and recipe. The build runs on the default bridge and reaches Debian's mirror."""
    config = client.images.get(base).attrs
    user = str(config["Config"].get("User") or "")
    dockerfile = "\n".join([
        f"FROM {base}",
        "USER root",
        "RUN apt-get update && apt-get install -y --no-install-recommends python3-pip "
        "&& rm -rf /var/lib/apt/lists/*",
        *([f"USER {user}"] if user else []),
        "",
    ])
    digest = hashlib.sha256(f"{config['Id']}\n{dockerfile}".encode()).hexdigest()[:12]
    tag = f"canal-test/corpnet-pip:{digest}"
    with suppress(docker.errors.ImageNotFound):
        client.images.get(tag)
        return tag
    context = tar_bytes({"Dockerfile": dockerfile.encode()})
    errors: list[str] = []
    for chunk in client.api.build(fileobj=io.BytesIO(context), custom_context=True, tag=tag, labels=LABELS,
                                  rm=True, forcerm=True, decode=True, use_config_proxy=False):
        if "error" in chunk:
            errors.append(str(chunk["error"]))
    if errors:
        msg = f"building {tag} failed: {' '.join(errors)}"
        raise RuntimeError(msg)
    return tag


# ---- the whole world ----------------------------------------------------------------------------------


@dataclass
class CorpWorld:
    """What a test gets: the CA, the index's network, the index and the proxy that alone reaches it."""

    ca: TestCA
    network: str
    index: IndexServer
    proxy: UpstreamProxy


@contextmanager
def corp_world(client: docker.DockerClient, packages: list[tuple[str, bytes]] | None = None, *,
               username: str = "corp-user", password: str = "corp-secret") -> Iterator[CorpWorld]:
    """A fresh CA, network, index (the three packages above unless told otherwise) and proxy; all of it
    removed on exit."""
    ca = make_ca()
    network = create_network(client)
    index = IndexServer(client, network.name, ca, packages or [backend_wheel(), demo_sdist(), hello_wheel()])
    try:
        index.start()
        with UpstreamProxy(client, {INDEX_HOST: index.ip}, username=username, password=password) as proxy:
            yield CorpWorld(ca, network.name, index, proxy)
    finally:
        index.stop()
        with suppress(docker.errors.APIError):
            network.remove()
