"""The commands that set Canal up and look after it: images, policy, keys, state, audit, approvals, config,
the servers.
"""
