"""Helpers: run ``canal`` in its own process against a tmp project whose state lives in tmp folders."""

from __future__ import annotations

from project_helpers import CliProject as ToolProject

__all__ = ["ToolProject"]
