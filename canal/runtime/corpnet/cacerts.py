"""The CA certificates of ``sandbox.ca_certificates``: the host's system bundle by name (``host``) and PEM
files of the project, read the safe way and checked before a person approves them.

A file must hold certificates and nothing else a sandbox must not have: no private key (refused, as the
file goes into every sandbox image), at least one certificate, each parsing as X.509. What a person
approves is each file's sha256 and the subjects of its certificates; the build copies exactly those
bytes (a file changed since is refused, not built). The host's bundle is the host administrator's, so it
is approved by name and read at each build.
"""

from __future__ import annotations

import hashlib
import os
import re
import ssl
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from canal.runtime.corpnet.errors import (
    CA_CERT_NOT_PEM,
    CA_CERT_OUTSIDE_PROJECT,
    CA_CERT_PRIVATE_KEY,
    HOST_CA_BUNDLE_NOT_FOUND,
)
from canal.runtime.errors import ConfigError
from canal.runtime.settings.project import CONFIG_NAME
from canal.sandbox.spec import HOST_BUNDLE

SETTING = "sandbox.ca_certificates"
# where distributions keep the system bundle (Debian/Ubuntu, Fedora/RHEL, openSUSE, Alpine and macOS)
HOST_BUNDLES = ("/etc/ssl/certs/ca-certificates.crt", "/etc/pki/tls/certs/ca-bundle.crt",
                "/etc/ssl/ca-bundle.pem", "/etc/ssl/cert.pem")
MAX_BUNDLE = 4 * 1024 * 1024
_CERT = re.compile(rb"-----BEGIN CERTIFICATE-----\r?\n[A-Za-z0-9+/=\r\n]+?-----END CERTIFICATE-----")
_KEY = re.compile(rb"-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----")


@dataclass(frozen=True)
class CaFile:
    """One entry of the setting as read: its certificates (one PEM each) and what a person reads of it."""

    source: str  # "host", or the path relative to the project
    path: str  # where it was read
    certificates: tuple[bytes, ...]
    sha256: str
    subjects: tuple[str, ...]

    def approved_form(self) -> dict[str, object]:
        """What the approval covers: a project file by content, the host's bundle by name."""
        if self.source == HOST_BUNDLE:
            return {"source": HOST_BUNDLE}
        return {"source": self.source, "sha256": self.sha256, "certificates": list(self.subjects)}

    def described(self) -> str:
        """One line for ``canal image show`` and the image's audit record."""
        if self.source == HOST_BUNDLE:
            return f"host: {self.path} ({len(self.certificates)} certificates, sha256 {self.sha256[:16]})"
        return f"{self.source}: {'; '.join(self.subjects)} (sha256 {self.sha256[:16]})"


def host_bundle() -> Path:
    """The host's system CA bundle: the one Python's OpenSSL uses, else the first usual one found."""
    default = ssl.get_default_verify_paths().cafile
    for candidate in (default, *HOST_BUNDLES):
        if candidate and os.path.isfile(candidate):
            return Path(candidate)
    msg = (f"{SETTING} names {HOST_BUNDLE!r}, but this host has no system CA bundle in any of "
           f"{', '.join(HOST_BUNDLES)}; nothing was built or run.")
    raise HOST_CA_BUNDLE_NOT_FOUND(msg, hint=f"install the ca-certificates package, or list the CA's PEM "
                                   f"file in {SETTING} (docs/images.md)", details={"setting": SETTING})


def load(project_dir: Path, sources: Sequence[str]) -> list[CaFile]:
    """Every entry of the setting, read and checked (the first bad one raises its own code)."""
    return [_load_one(project_dir, source) for source in sources]


def _load_one(project_dir: Path, source: str) -> CaFile:
    if source == HOST_BUNDLE:
        path = host_bundle()
        with open(path, "rb") as fh:
            data = fh.read(MAX_BUNDLE + 1)
        certs, _ = parse(data, source, host=True)
        return CaFile(source, str(path), certs, hashlib.sha256(data).hexdigest(), ())
    data = _read_project_file(project_dir, source)
    certs, subjects = parse(data, source)
    return CaFile(source, source, certs, hashlib.sha256(data).hexdigest(), subjects)


def _read_project_file(project_dir: Path, source: str) -> bytes:
    from canal.runtime.trust.snapshot import read_image_file  # the same safe read as image.files

    try:
        return read_image_file(project_dir, source, setting=SETTING)
    except ConfigError as exc:
        if exc.details.get("reason") == "unsafe":
            msg = (f"{SETTING}: {source} leads outside the project (a symlink or a folder that is not one); "
                   "nothing was approved, built or run.")
            raise CA_CERT_OUTSIDE_PROJECT(msg, hint=f"put the PEM file itself inside the project, or use "
                                       f"{HOST_BUNDLE!r} for the host's bundle ({CONFIG_NAME})",
                                       details={"setting": SETTING, "file": source}) from None
        raise


def parse(data: bytes, source: str, *, host: bool = False) -> tuple[tuple[bytes, ...], tuple[str, ...]]:
    """The PEM certificates of ``data`` and their subjects; a private key or no certificate is refused."""
    where = f"{SETTING}: {source}"
    if _KEY.search(data):
        msg = (f"{where} holds a private key; a CA list is public certificates only, and it is copied into "
               "every sandbox image. Nothing was approved, built or run.")
        raise CA_CERT_PRIVATE_KEY(msg, hint="keep the key elsewhere and list a file with the CA's "
                                  "certificate (BEGIN CERTIFICATE) only",
                                  details={"setting": SETTING, "file": source})
    blocks = _CERT.findall(data)
    if host:  # the host's bundle is the administrator's, as OpenSSL reads it: taken block by block
        certs = [block + b"\n" for block in blocks]
        subjects: list[str] = []
    else:
        certs, subjects = _checked(blocks)
    if not certs:
        msg = (f"{where} is not a PEM certificate file (no BEGIN CERTIFICATE block that parses); nothing "
               "was approved, built or run.")
        raise CA_CERT_NOT_PEM(msg, hint="convert it: openssl x509 -in corp.der -inform der -out corp.pem",
                           details={"setting": SETTING, "file": source})
    return tuple(certs), tuple(subjects)


def _checked(blocks: Sequence[bytes]) -> tuple[list[bytes], list[str]]:
    """Each block as an X.509 certificate with its subject and fingerprint; none if one does not parse
    (a file a person approves is all certificates, or it is refused)."""
    # imported here: every project's settings check loads this module, few projects list CA files
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes

    certs, subjects = [], []
    with warnings.catch_warnings():  # cryptography warns of what it will refuse later: a parse is enough
        warnings.simplefilter("ignore")
        for block in blocks:
            try:
                cert = x509.load_pem_x509_certificate(block)
            except ValueError:
                return [], []
            certs.append(block + b"\n")
            fingerprint = cert.fingerprint(hashes.SHA256()).hex()[:16]
            subjects.append(f"{cert.subject.rfc4514_string()} [{fingerprint}]")
    return certs, subjects


def check_unchanged(files: Sequence[CaFile], approved: Sequence[dict[str, object]]) -> list[str]:
    """The project files whose content differs from what a person approved (empty: all as approved)."""
    wanted = {str(a.get("source")): a.get("sha256") for a in approved}
    return [f.source for f in files if f.source != HOST_BUNDLE and wanted.get(f.source) != f.sha256]
