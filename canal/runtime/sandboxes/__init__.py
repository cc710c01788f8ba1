"""Everything about starting a project's sandbox: its spec, its image, the warm pools, egress proxies, the
git guard.
"""
