"""The corporate-network settings refused at load (approval) time, each with a code of its own."""

from __future__ import annotations

from collections.abc import Callable

from canal.core.errors import register
from canal.runtime.errors import ConfigError
from canal.sandbox.docker import project_image

CA_CERT_NOT_PEM = register(ConfigError, "CA_CERT_NOT_PEM", """
    A file in ``sandbox.ca_certificates`` holds no PEM certificate (or one that does not parse).
    """)

CA_CERT_PRIVATE_KEY = register(ConfigError, "CA_CERT_PRIVATE_KEY", """
    A file in ``sandbox.ca_certificates`` holds a private key: a CA list is public certificates only,
    and what it names is copied into every sandbox image.
    """)

CA_CERT_OUTSIDE_PROJECT = register(ConfigError, "CA_CERT_OUTSIDE_PROJECT", """
    A file in ``sandbox.ca_certificates`` lies outside the project (an absolute path, ``..``, or a
    symlink leading out); the host's own bundle is named ``host``.
    """)

HOST_CA_BUNDLE_NOT_FOUND = register(ConfigError, "HOST_CA_BUNDLE_NOT_FOUND", """
    ``sandbox.ca_certificates: [host]``, and this host has none of the usual system bundles.
    """)

UPSTREAM_PROXY_CREDENTIALS_INLINE = register(ConfigError, "UPSTREAM_PROXY_CREDENTIALS_INLINE", """
    ``sandbox.network.upstream_proxy`` carries ``user:password@``: canal.yaml is in the workspace the
    agent reads; credentials come from the environment or a file outside it.
    """)


# the code a validator below the application refuses a mirror with (``SettingRefused``)
MIRROR_NOT_HTTPS = register(ConfigError, project_image.MIRROR_NOT_HTTPS, """
    ``image.index_url`` or ``image.npm_registry`` is not an https URL.
    """)


# what a validator's SettingRefused code becomes when canal.yaml is loaded
CODED: dict[str, Callable[..., ConfigError]] = {cls.code: cls for cls in (
    CA_CERT_OUTSIDE_PROJECT, UPSTREAM_PROXY_CREDENTIALS_INLINE, MIRROR_NOT_HTTPS)}
