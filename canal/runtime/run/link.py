"""The checkpoint's link to the audit record of the command that follows it, written while that command
runs: the checkpoint itself is on disk before the command starts (``CheckpointStore.take``), the intent
record names the checkpoint, and the link (the record rewritten with the audit id) only joins the two
from the checkpoint's side, so it need not hold the command up.

One kept worker thread writes the links of every pipeline in the process (a thread started per command
cost its start: the new thread must first get the interpreter, up to a switch interval under load)."""

from __future__ import annotations

import os
import queue
import threading
from collections.abc import Callable

from canal.core.next import Say, act, say_all

_jobs: queue.SimpleQueue[Link] = queue.SimpleQueue()
_worker: tuple[int, threading.Thread] | None = None  # (the process it runs in, the thread)
_starting = threading.Lock()


def _work() -> None:
    while True:
        _jobs.get()._attach()


def _ensure_worker() -> None:
    global _worker
    with _starting:
        if _worker is None or _worker[0] != os.getpid() or not _worker[1].is_alive():
            thread = threading.Thread(target=_work, name="canal-checkpoint-link", daemon=True)
            thread.start()
            _worker = (os.getpid(), thread)


class Link:
    """``attach`` run by the worker; ``wait`` waits for it."""

    def __init__(self, attach: Callable[[], object], checkpoint_id: str) -> None:
        self._do = attach
        self._checkpoint_id = checkpoint_id
        self._error: Exception | None = None
        self._done = threading.Event()
        _ensure_worker()
        _jobs.put(self)

    def _attach(self) -> None:
        try:
            self._do()
        except Exception as exc:  # told in wait(): the command has run by then
            self._error = exc
        finally:
            self._done.set()

    def wait(self, say: Say | None = None) -> str | None:
        """Wait for the link; a notice when it could not be written (None when it was), with what to
        run next in the words of ``say`` (the front end's)."""
        self._done.wait()
        if self._error is None:
            return None
        why = getattr(self._error, "message", None) or f"{type(self._error).__name__}: {self._error}"
        lead = (f"checkpoint {self._checkpoint_id} was taken, but not linked to this command's audit record "
                f"({why}); the audit record names the checkpoint. Check the state folder's disk")
        return say_all([act("checkpoints")], say, lead=lead) if say is not None else lead
