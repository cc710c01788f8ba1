"""The per-user server's client side: the wire, where the server lives, starting it, the approval door's
address.

Standard library only (and canal.core), so a ``canal`` call costs little more than Python's own start-up; the
server itself (``canal.server``) is above the application it serves.
"""
