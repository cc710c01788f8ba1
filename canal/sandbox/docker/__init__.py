"""The Docker backend: run arguments (the hardening), sessions, background tasks, images, pools, egress
proxies.
"""
