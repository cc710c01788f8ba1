"""A project's settings: finding the project, canal.yaml read and validated, the mount allowlist, ``canal
init``.
"""
