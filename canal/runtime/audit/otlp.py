"""Audit records as OpenTelemetry logs, sent over OTLP/HTTP with the JSON encoding.

Each record becomes one log record: the body is the line ``canal audit show`` prints, the attributes carry
the event, the actor, the record's data and its chain fields (``canal.record.seq``, ``.hash``,
``.prev_hash``, ``.digest``), and ``canal.record`` holds the log line itself, so a collector's copy can be
checked against the host's log (``canal audit verify --export``) like any export.

Hand-written on the standard library: the OpenTelemetry SDK's logs API is still experimental (``_logs``),
its OTLP/HTTP exporter brings protobuf, requests and half a dozen packages, and it batches in a thread it
owns, while Canal must know which records reached the collector (``runtime.audit.shipper`` keeps a cursor).
The JSON encoding is part of the OTLP specification (``Content-Type: application/json``).
"""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, Field, field_validator

from canal.runtime.audit.events import summarize
from canal.runtime.audit.record import Record

LOGS_PATH = "/v1/logs"
SCOPE = {"name": "canal.audit", "version": "1"}
WARN_EVENTS = ("run.denied", "run.refused", "run.interrupted", "approval.refused", "approval.denied",
               "config.refused")
SEVERITY_INFO, SEVERITY_WARN = 9, 13


class OtlpSettings(BaseModel):
    """``audit.otlp`` in canal.yaml (trusted: an agent cannot point the copy elsewhere unapproved)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    endpoint: str  # http(s)://host:4318 (logs go to /v1/logs) or the full logs URL
    events: tuple[str, ...] = ("run.", "approval.", "config.")  # event prefixes to send
    timeout_s: float = Field(default=5.0, gt=0, le=60)

    @field_validator("endpoint")
    @classmethod
    def _http_url(cls, value: str) -> str:
        parts = urlsplit(value)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            msg = "endpoint must be an http:// or https:// URL, e.g. http://127.0.0.1:4318"
            raise ValueError(msg)
        if parts.username or parts.password or parts.query or parts.fragment:
            msg = "endpoint takes no credentials, query or fragment"
            raise ValueError(msg)
        return value

    def logs_url(self) -> str:
        parts = urlsplit(self.endpoint)
        return self.endpoint.rstrip("/") + LOGS_PATH if parts.path in ("", "/") else self.endpoint

    def wants(self, event: str) -> bool:
        return event.startswith(self.events)


def logs_request(records: Sequence[tuple[Record, bytes]], project_id: str, host: str) -> dict[str, Any]:
    """The ExportLogsServiceRequest (OTLP JSON) for ``records``, each with its log line."""
    resource = {"attributes": _attributes({"service.name": "canal", "host.name": host,
                                           "canal.project_id": project_id})}
    logs = [_log_record(rec, line) for rec, line in records]
    return {"resourceLogs": [{"resource": resource, "scopeLogs": [{"scope": SCOPE, "logRecords": logs}]}]}


def post(url: str, body: Mapping[str, Any], timeout_s: float) -> None:
    """POST one request; raises ``OSError`` (with the reason) unless the collector answers 2xx."""
    data = json.dumps(body, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
    request = urllib.request.Request(url, data=data, method="POST",
                                     headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=timeout_s) as answer:
            answer.read()
    except urllib.error.HTTPError as exc:
        msg = f"the collector answered HTTP {exc.code} {exc.reason}"
        raise OSError(msg) from exc
    except urllib.error.URLError as exc:
        raise OSError(str(exc.reason)) from exc


def _log_record(rec: Record, line: bytes) -> dict[str, Any]:
    nanos = str(_unix_nanos(rec.ts))
    attributes = {"event.name": rec.event, "canal.event": rec.event, "canal.actor": rec.actor,
                  "canal.record.id": rec.id, "canal.record.seq": rec.seq, "canal.record.ts": rec.ts,
                  "canal.record.hash": rec.hash, "canal.record.prev_hash": rec.prev_hash,
                  "canal.record.digest": rec.digest, "canal.record.key_id": rec.key_id,
                  "canal.data": dict(rec.data), "canal.record": line.decode("utf-8")}
    severity, text = (SEVERITY_WARN, "WARN") if rec.event in WARN_EVENTS else (SEVERITY_INFO, "INFO")
    return {"timeUnixNano": nanos, "observedTimeUnixNano": nanos, "severityNumber": severity,
            "severityText": text,
            "body": {"stringValue": summarize(rec)}, "attributes": _attributes(attributes)}


def _unix_nanos(ts: str) -> int:
    when = datetime.fromisoformat(ts.replace("Z", "+00:00"))
    return int(when.timestamp()) * 1_000_000_000 + when.microsecond * 1000


def _attributes(values: Mapping[str, Any]) -> list[dict[str, Any]]:
    return [{"key": str(k), "value": _any_value(v)} for k, v in values.items()]


def _any_value(value: Any) -> dict[str, Any]:
    """An OTLP AnyValue (JSON mapping: 64-bit integers travel as strings)."""
    if isinstance(value, bool):
        return {"boolValue": value}
    if isinstance(value, int):
        return {"intValue": str(value)}
    if isinstance(value, float):
        return {"doubleValue": value}
    if isinstance(value, Mapping):
        return {"kvlistValue": {"values": _attributes(value)}}
    if isinstance(value, list | tuple):
        return {"arrayValue": {"values": [_any_value(v) for v in value]}}
    if value is None:
        return {}
    return {"stringValue": str(value)}
