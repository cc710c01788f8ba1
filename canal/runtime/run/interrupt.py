"""Interrupts from whoever asked for the work in progress: a client's Ctrl-C or SIGTERM, a dropped
connection. Work that can be cut short (a command in a sandbox) registers a hook while it runs; the
server fires the request's ``Interrupt`` from another thread. Nothing here raises into running code."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar

Hook = Callable[[str], object]


class Interrupt:
    """Fired with a reason (``SIGINT``, ``SIGTERM``, ``the client went away``); the first reason stays.

    Every firing calls the hooks again: a second Ctrl-C, or the client leaving after the first, reaches
    a command that the first one could not (it had not started yet)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._hooks: list[Hook] = []
        self.reason: str | None = None

    def fire(self, reason: str) -> None:
        with self._lock:
            if self.reason is None:
                self.reason = reason
            hooks = list(self._hooks)
        for hook in hooks:
            hook(reason)

    @property
    def fired(self) -> bool:
        return self.reason is not None

    @contextmanager
    def hook(self, fn: Hook) -> Iterator[None]:
        """Call ``fn(reason)`` if the interrupt fires while the block runs (at once if it already did)."""
        with self._lock:
            self._hooks.append(fn)
            reason = self.reason
        if reason is not None:
            fn(reason)
        try:
            yield
        finally:
            with self._lock:
                self._hooks.remove(fn)


def signal_name(reason: str) -> str:
    """``SIGINT`` -> ``INT`` (what the sandbox reports); another reason -> "" (the client went away)."""
    return reason.removeprefix("SIG") if reason.startswith("SIG") else ""


_current: ContextVar[Interrupt | None] = ContextVar("canal_interrupt", default=None)


def current() -> Interrupt | None:
    return _current.get()


@contextmanager
def interruptible(interrupt: Interrupt) -> Iterator[Interrupt]:
    token = _current.set(interrupt)
    try:
        yield interrupt
    finally:
        _current.reset(token)


@contextmanager
def on_interrupt(fn: Hook) -> Iterator[None]:
    """Within the current request's interrupt, if there is one; a plain block otherwise."""
    interrupt = current()
    if interrupt is None:
        yield
        return
    with interrupt.hook(fn):
        yield
