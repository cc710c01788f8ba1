"""The project's records and keys behind ``Canal``'s sub-APIs: ``audit``, ``approvals``, ``settings``
(trusted configuration), ``keys`` and ``state`` (sealed state files).

Each class offers two kinds of method. Those its Protocol names (``runtime/surface.py``) only read, and
``Canal.connect()`` offers them too: their results are models the server's wire carries. The others act
for a person a front end has verified (approving settings, deciding an approval with its proof, rotating
keys, revealing sealed values, recording a front end's own events): they exist in-process only, so
nothing a caller of the server sends can approve, decide, forge a record or loosen anything.
"""
