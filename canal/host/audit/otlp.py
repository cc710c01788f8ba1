"""Audit records as OpenTelemetry logs, sent over OTLP/HTTP with the JSON encoding.

Each record becomes one log record: the body is the line ``canal audit show`` prints, the attributes carry
the event, the actor, the record's data and its chain fields (``canal.record.seq``, ``.hash``,
``.prev_hash``, ``.digest``), and ``canal.record`` holds the log line itself, so a collector's copy can be
checked against the host's log (``canal audit verify --export``) like any export.

Sending (headers from environment variables, TLS, proxies) is in ``host.audit.otlp_http``.

Hand-written on the standard library: the OpenTelemetry SDK's logs API is still experimental (``_logs``),
its OTLP/HTTP exporter brings protobuf, requests and half a dozen packages, and it batches in a thread it
owns, while Canal must know which records reached the collector (``host.audit.shipper`` keeps a cursor).
The JSON encoding is part of the OTLP specification (``Content-Type: application/json``).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from datetime import datetime
from pathlib import PurePosixPath
from typing import Any
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from canal.host.audit.events import summarize
from canal.host.audit.record import Record

LOGS_PATH = "/v1/logs"
SCOPE = {"name": "canal.audit", "version": "1"}
WARN_EVENTS = ("run.denied", "run.refused", "run.interrupted", "approval.refused", "approval.denied",
               "config.refused")
SEVERITY_INFO, SEVERITY_WARN = 9, 13
HEADER_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9-]{0,63}$")
ENV_NAME = re.compile(r"^[A-Z_][A-Z0-9_]{0,127}$")
RESERVED_HEADERS = ("content-type", "content-length", "content-encoding", "host", "transfer-encoding",
                    "connection", "proxy-authorization")


def _plain_url(value: str, what: str) -> str:
    parts = urlsplit(value)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        msg = f"{what} must be an http:// or https:// URL, e.g. http://127.0.0.1:4318"
        raise ValueError(msg)
    if parts.username or parts.password or parts.query or parts.fragment:
        msg = f"{what} takes no credentials, query or fragment"
        raise ValueError(msg)
    return value


class OtlpTls(BaseModel):
    """``audit.otlp.tls``: how an https collector is checked and how Canal proves itself to it. The
    collector's certificate is always verified (the system's CAs, or ``ca_file``)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    ca_file: str | None = None  # PEM CA bundle that signed the collector's certificate
    client_cert: str | None = None  # PEM client certificate (with its key, unless client_key)
    client_key: str | None = None  # PEM private key of client_cert, unencrypted, readable by Canal only

    @field_validator("ca_file", "client_cert", "client_key")
    @classmethod
    def _absolute(cls, value: str | None) -> str | None:
        if value is not None and not PurePosixPath(value).is_absolute():
            msg = "TLS files are given by absolute path"
            raise ValueError(msg)
        return value

    @model_validator(mode="after")
    def _key_has_a_cert(self) -> OtlpTls:
        if self.client_key is not None and self.client_cert is None:
            msg = "client_key needs client_cert"
            raise ValueError(msg)
        return self


class OtlpSettings(BaseModel):
    """``audit.otlp`` in canal.yaml (trusted: an agent cannot point the copy elsewhere unapproved)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    endpoint: str  # http(s)://host:4318 (logs go to /v1/logs) or the full logs URL
    events: tuple[str, ...] = ("run.", "approval.", "config.")  # event prefixes to send
    timeout_s: float = Field(default=5.0, gt=0, le=60)
    # header name -> the environment variable holding its value (a token is never in canal.yaml)
    headers: tuple[tuple[str, str], ...] = ()
    tls: OtlpTls | None = None  # https endpoints only
    proxy: str | None = None  # an http(s) proxy URL; HTTP(S)_PROXY in the environment are ignored

    @field_validator("endpoint")
    @classmethod
    def _http_url(cls, value: str) -> str:
        return _plain_url(value, "endpoint")

    @field_validator("proxy")
    @classmethod
    def _proxy_url(cls, value: str | None) -> str | None:
        return None if value is None else _plain_url(value, "proxy")

    @field_validator("headers", mode="before")
    @classmethod
    def _header_variables(cls, value: Any) -> Any:
        if not isinstance(value, Mapping):
            return value
        for name, variable in value.items():
            if not isinstance(name, str) or not HEADER_NAME.match(name) or name.lower() in RESERVED_HEADERS:
                msg = f"headers: {name!r} is not a header Canal may set"
                raise ValueError(msg)
            if not isinstance(variable, str) or not ENV_NAME.match(variable):
                msg = (f"headers: {name} names the environment variable that holds its value "
                       "(UPPER_SNAKE, e.g. CANAL_OTLP_TOKEN), never the value itself")
                raise ValueError(msg)
        return tuple(sorted(value.items()))

    @model_validator(mode="after")
    def _tls_for_https(self) -> OtlpSettings:
        if self.tls is not None and urlsplit(self.endpoint).scheme != "https":
            msg = "tls applies to an https:// endpoint"
            raise ValueError(msg)
        return self

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
