"""Masking a run's sensitive gate values in everything the run pipeline writes or presents.

The pipeline redacts the audited command text and the presented output with ``services.redactor``
(secret patterns). A workflow also knows its exact secrets (gate fields marked ``sensitive``), which no
pattern may catch: for the duration of one step, the services' redactor masks them first.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from runtime.services import Services
from workflows.templates import MASK


def mask_text(text: str, secrets: Sequence[str]) -> str:
    for secret in sorted(secrets, key=len, reverse=True):
        if secret:
            text = text.replace(secret, MASK)
    return text


class MaskingRedactor:
    """``base`` (a ``Redactor``) after replacing each of ``secrets`` by the mask."""

    def __init__(self, base: Any, secrets: Sequence[str]) -> None:
        self.base = base
        self.secrets = tuple(secrets)

    def __call__(self, text: str) -> str:
        return str(self.base(mask_text(text, self.secrets)))

    def redact_many(self, texts: Iterable[str]) -> tuple[Callable[[str], str], dict[str, str]]:
        fn, found = self.base.redact_many([mask_text(t, self.secrets) for t in texts])
        return (lambda text: str(fn(mask_text(text, self.secrets)))), found

    def __getattr__(self, name: str) -> Any:
        return getattr(self.base, name)


@contextmanager
def masking(services: Services, secrets: Sequence[str]) -> Iterator[None]:
    """Install a ``MaskingRedactor`` as ``services.redactor`` while the block runs."""
    if not secrets:
        yield
        return
    # Build the parts that capture the redactor at construction now, so none keeps the wrapper.
    base = services.redactor
    _ = services.audit, services.approvals, services.sealed, services.trash
    services.__dict__["redactor"] = MaskingRedactor(base, secrets)
    try:
        yield
    finally:
        services.__dict__["redactor"] = base
