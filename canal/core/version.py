"""Canal's version: one place, read by the package and by the thin client (without importing the rest)."""

__version__ = "0.1.0"
