"""The corporate-network settings refused at load (approval) time, each with a code of its own."""

from __future__ import annotations

from canal.runtime.errors import ConfigError
from canal.sandbox.docker.project_image import MIRROR_NOT_HTTPS
from canal.sandbox.egress_upstream import INLINE
from canal.sandbox.spec import CA_OUTSIDE


class CaCertNotPem(ConfigError):
    """A file in ``sandbox.ca_certificates`` holds no PEM certificate (or one that does not parse)."""

    code = "CA_CERT_NOT_PEM"


class CaCertPrivateKey(ConfigError):
    """A file in ``sandbox.ca_certificates`` holds a private key: a CA list is public certificates only,
    and what it names is copied into every sandbox image."""

    code = "CA_CERT_PRIVATE_KEY"


class CaCertOutsideProject(ConfigError):
    """A file in ``sandbox.ca_certificates`` lies outside the project (an absolute path, ``..``, or a
    symlink leading out); the host's own bundle is named ``host``."""

    code = CA_OUTSIDE


class HostCaBundleMissing(ConfigError):
    """``sandbox.ca_certificates: [host]``, and this host has none of the usual system bundles."""

    code = "HOST_CA_BUNDLE_NOT_FOUND"


class UpstreamProxyCredentialsInline(ConfigError):
    """``sandbox.network.upstream_proxy`` carries ``user:password@``: canal.yaml is in the workspace the
    agent reads; credentials come from the environment or a file outside it."""

    code = INLINE


class MirrorNotHttps(ConfigError):
    """``image.index_url`` or ``image.npm_registry`` is not an https URL."""

    code = MIRROR_NOT_HTTPS


# what a validator's SettingRefused code becomes when canal.yaml is loaded
CODED: dict[str, type[ConfigError]] = {cls.code: cls for cls in (
    CaCertOutsideProject, UpstreamProxyCredentialsInline, MirrorNotHttps)}
