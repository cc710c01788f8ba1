"""Packages: everything under ``canal/``, plus ``images/`` shipped inside it as ``canal._images``.

The metadata lives in pyproject.toml; this file only says which folders become which packages, because
images/ stays at the repository root (Dockerfiles are read by people and build tools there) while
nothing but ``canal`` may be installed at the top level of site-packages.
"""

from setuptools import find_packages, setup

setup(
    packages=[*find_packages(include=["canal", "canal.*"]), "canal._images"],
    package_dir={"canal": "canal", "canal._images": "images"},
)
