"""The project's host-side stores: audit log, approvals, checkpoints, forks, trash, sealed state, keys,
redaction, files, storage.

Each store imports canal.core and the stores below it only; none knows about sandboxes, the pipeline or a
front end.
"""
