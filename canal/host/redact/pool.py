"""Redacting a long output that is dense with findings on more than one core (in the server).

Base64 and the like are a high-entropy finding per line, ~14,000 a MiB, and each costs microseconds
of Python (its keyed id, its placeholder, its replacement): about 17 MiB/s on one core, where log
output is redacted at 150-180 MiB/s. The texts a saved output is cut into (``presenter.textclean``:
windows cut at line breaks by the bytes read alone) are independent, so a long-lived process hands
them, in order and a few ahead, to worker processes that each hold the same ``Redactor`` (the same id
key and the built-in rules): the same bytes come back. The cleaner sends a stream here only once one
of its texts was slow to redact (``textclean.dense``): log output is not worth the round trip.

Only a redactor of the built-in rules is spread: with ``CANAL_REDACT_RULES`` a worker would read the
operator's files again, and might find them changed. Only in a process that enabled it (the server:
its workers start at its first dense output, are kept, and go when it stops). The workers are spawned
(not forked from a process with threads); they get the key and the texts through their pipes, never
through a file. A worker that dies makes the cleaner redact the rest itself (``SpreadFailed``)."""

from __future__ import annotations

import os
import threading
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from typing import TYPE_CHECKING

from canal.host.ports import Spread, SpreadFailed
from canal.host.redact.redactor import Redactor

if TYPE_CHECKING:
    from concurrent.futures import Future, ProcessPoolExecutor

MAX_WORKERS = 4
AHEAD = 2  # texts per worker sent before the first one's answer is awaited

_REDACTORS: dict[bytes, Redactor] = {}  # in a worker: one per key it was given


def _redact(key: bytes, text: str) -> str:
    """(In a worker.) ``Redactor(key).redact_keep_lines(text)``, the redactor kept per key."""
    redactor = _REDACTORS.get(key)
    if redactor is None:
        redactor = _REDACTORS[key] = Redactor(key)
    return redactor.redact_keep_lines(text)


class Workers:
    """Worker processes, started at the first text sent, shared by every stream of the process."""

    def __init__(self, size: int, free: Callable[[], bool] | None = None) -> None:
        self.size = size
        self._free = free or cores_free
        self.sent = 0  # texts sent to the workers
        self._executor: ProcessPoolExecutor | None = None
        self._lock = threading.Lock()

    def spread(self, key: bytes) -> Spread:
        def ordered(texts: Iterable[str]) -> Iterator[str]:
            from concurrent.futures.process import BrokenProcessPool

            held: deque[Future[str]] = deque()
            if not self._free():
                msg = "no core is free now: redacting here costs less than sharing one"
                raise SpreadFailed(msg)
            try:
                executor = self._started()
                for text in texts:
                    held.append(executor.submit(_redact, key, text))
                    self.sent += 1
                    if len(held) >= self.size * AHEAD:
                        yield held.popleft().result()
                while held:
                    yield held.popleft().result()
            except (BrokenProcessPool, OSError, RuntimeError) as exc:
                self._drop()
                msg = f"the redaction workers stopped: {exc}"
                raise SpreadFailed(msg) from None
            finally:
                for future in held:
                    future.cancel()

        return ordered

    def close(self) -> None:
        self._drop()

    def _started(self) -> ProcessPoolExecutor:
        import multiprocessing  # in the process that sends its first text, not at its start
        from concurrent.futures import ProcessPoolExecutor

        with self._lock:
            if self._executor is None:
                spawn = multiprocessing.get_context("spawn")
                self._executor = ProcessPoolExecutor(self.size, mp_context=spawn)
            return self._executor

    def _drop(self) -> None:
        with self._lock:
            executor, self._executor = self._executor, None
        if executor is not None:
            executor.shutdown(wait=False, cancel_futures=True)


def cores_free() -> bool:
    """Whether a core other than this thread's is idle now: the kernel's count of runnable tasks
    (``/proc/loadavg``), this one among them, against the cores this process may use. On a machine
    already busy, workers would take turns with what runs there and with this thread (measured: 10%
    slower with one of two cores busy)."""
    try:
        with open("/proc/loadavg", "rb") as fh:
            runnable = int(fh.read().split()[3].split(b"/")[0])
    except (OSError, ValueError, IndexError):
        return False
    return len(os.sched_getaffinity(0)) - (runnable - 1) >= 2


_workers: Workers | None = None


def enable(size: int | None = None) -> Workers | None:
    """Spread dense outputs over ``size`` workers (default: one per core, at most ``MAX_WORKERS``);
    nothing on a single core. Returns the process's workers."""
    global _workers
    size = size if size is not None else min(os.cpu_count() or 1, MAX_WORKERS)
    if _workers is None and size >= 2:
        _workers = Workers(size)
    return _workers


def workers() -> Workers | None:
    """This process's workers, when it enabled them."""
    return _workers


def close() -> None:
    global _workers
    workers, _workers = _workers, None
    if workers is not None:
        workers.close()


def spread_for(redact: object) -> Spread | None:
    """The spread for ``redact`` when it is a ``Redactor``'s ``redact_keep_lines`` of the built-in rules
    and this process enabled workers; else None (the caller redacts every text itself)."""
    workers = _workers
    owner = getattr(redact, "__self__", None)
    if workers is None or not isinstance(owner, Redactor):
        return None
    if getattr(redact, "__func__", None) is not Redactor.redact_keep_lines:
        return None
    key = owner.spread_key()
    return workers.spread(key) if key is not None else None
