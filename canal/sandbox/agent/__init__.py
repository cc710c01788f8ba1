"""The in-container agent: a stdlib-only package, shipped into the sandbox whole
(``canal.sandbox.docker.session``).
"""
