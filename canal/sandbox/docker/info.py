"""``SandboxInfo`` from a Docker container's inspect data."""

from __future__ import annotations

from datetime import UTC, datetime

from docker.models.containers import Container

from canal.sandbox.backend import LABEL_EXPIRES, SandboxInfo, SandboxStatus


def parse_expires(value: str | None) -> datetime | None:
    try:
        return datetime.fromtimestamp(int(value or ""), tz=UTC)
    except (ValueError, OverflowError, OSError):
        return None


def _created(raw: str | None) -> datetime | None:
    if not raw:
        return None
    try:
        # Docker writes nanoseconds; fromisoformat takes at most microseconds.
        head, _, frac = raw.rstrip("Z").partition(".")
        return datetime.fromisoformat(f"{head}.{(frac or '0')[:6]}+00:00")
    except ValueError:
        return None


def info_of(container: Container) -> SandboxInfo:
    attrs = container.attrs
    labels = dict(container.labels or {})
    try:
        status = SandboxStatus(container.status)
    except ValueError:
        status = SandboxStatus.DEAD
    return SandboxInfo(id=container.id, name=container.name, image=attrs.get("Config", {}).get("Image", ""),
                       status=status, labels=labels, image_digest=attrs.get("Image"),
                       created_at=_created(attrs.get("Created")),
                       expires_at=parse_expires(labels.get(LABEL_EXPIRES)))
