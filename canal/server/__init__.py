"""The per-user Canal server: a warm process behind the ``canal`` CLI (see docs/server.md).

Modules the thin client imports (``paths``, ``wire``, ``errors``) use the standard library only, so a
``canal`` call costs little more than Python's own start-up.
"""
