"""Layer 2, the presenter: what a model reads after every command (see docs/presenter.md)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from canal.core.lazy import exports

if TYPE_CHECKING:
    from canal.presenter.config import PresenterConfig, StreamLimits
    from canal.presenter.footer import end_reason, format_size, render_footer
    from canal.presenter.presentation import STDERR_CLOSE, STDERR_OPEN, Presentation, present

__all__ = [
    "STDERR_CLOSE",
    "STDERR_OPEN",
    "Presentation",
    "PresenterConfig",
    "StreamLimits",
    "end_reason",
    "format_size",
    "present",
    "render_footer",
]

# each name is imported from its module when first used (canal.core.lazy)
__getattr__ = exports(__name__, {
    ".config": ("PresenterConfig", "StreamLimits"),
    ".footer": ("end_reason", "format_size", "render_footer"),
    ".presentation": ("STDERR_CLOSE", "STDERR_OPEN", "Presentation", "present"),
})
