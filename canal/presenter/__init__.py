"""Layer 2, the presenter: what a model reads after every command (see docs/presenter.md)."""

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
