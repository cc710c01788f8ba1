"""One OTLP/HTTP request to the collector, as ``audit.otlp`` in canal.yaml says (``host.audit.otlp``).

- Headers take their values from environment variables named in the settings, read at each send: a token
  is never in canal.yaml, in the cursor file or in an error message (a missing variable is named, never a
  value). The variable must be set for the process that sends (the Canal server, for runs).
- https endpoints are always verified (the system's CAs, or ``tls.ca_file``); ``tls.client_cert`` proves
  Canal to a collector that asks for it.
- Proxies: only ``proxy`` from the settings. HTTP(S)_PROXY in the environment are ignored (urllib follows
  them by default): where the audit copy goes is trusted configuration, not the environment of whoever
  started the process.
- Redirects are not followed: a collector answering 3xx would have the headers sent on to what it names.
"""

from __future__ import annotations

import json
import os
import ssl
import urllib.error
import urllib.request
from collections.abc import Mapping
from typing import Any

from canal.host.audit.otlp import OtlpSettings


class OtlpSetupError(OSError):
    """The request could not be made as configured (a header's variable unset, a TLS file unreadable);
    ``hint`` says what to do."""

    def __init__(self, message: str, hint: str) -> None:
        super().__init__(message)
        self.hint = hint


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args: Any, **kwargs: Any) -> None:
        return None  # urllib then raises HTTPError with the 3xx answer


def post(url: str, body: Mapping[str, Any], settings: OtlpSettings) -> None:
    """POST one request; raises ``OSError`` (with the reason) unless the collector answers 2xx."""
    data = json.dumps(body, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
    request = urllib.request.Request(url, data=data, method="POST",
                                     headers={**header_values(settings), "Content-Type": "application/json"})
    try:
        with opener(settings).open(request, timeout=settings.timeout_s) as answer:
            answer.read()
    except urllib.error.HTTPError as exc:
        msg = f"the collector answered HTTP {exc.code} {exc.reason}"
        raise OSError(msg) from exc
    except urllib.error.URLError as exc:
        raise OSError(str(exc.reason)) from exc
    except ValueError as exc:  # http.client refuses a header value it cannot send; the value is not shown
        msg = "a header value from the environment cannot be sent (a line break or a control character)"
        hint = f"check the variables named in audit.otlp.headers: {_names(settings)}"
        raise OtlpSetupError(msg, hint=hint) from exc


def header_values(settings: OtlpSettings) -> dict[str, str]:
    values = {}
    for name, variable in settings.headers:
        value = os.environ.get(variable)
        if not value:
            msg = f"the OTLP header {name} takes its value from ${variable}, which is not set"
            raise OtlpSetupError(msg, hint=f"set {variable} for the process that sends (the Canal server: "
                                 "stop it, and the next command starts it with the variable), or remove "
                                 "the header from audit.otlp.headers")
        values[name] = value
    return values


def opener(settings: OtlpSettings) -> urllib.request.OpenerDirector:
    proxies = {"http": settings.proxy, "https": settings.proxy} if settings.proxy else {}
    handlers: list[urllib.request.BaseHandler] = [urllib.request.ProxyHandler(proxies), _NoRedirect()]
    if settings.endpoint.startswith("https:"):
        handlers.append(urllib.request.HTTPSHandler(context=tls_context(settings)))
    return urllib.request.build_opener(*handlers)


def tls_context(settings: OtlpSettings) -> ssl.SSLContext:
    tls = settings.tls
    try:
        context = ssl.create_default_context(cafile=tls.ca_file if tls else None)
        if tls is not None and tls.client_cert is not None:
            context.load_cert_chain(tls.client_cert, tls.client_key)
    except (OSError, ssl.SSLError) as exc:
        msg = f"the TLS files of audit.otlp.tls could not be loaded: {exc}"
        raise OtlpSetupError(msg, hint="check the paths and that they are PEM files this user can read") \
            from exc
    return context


def _names(settings: OtlpSettings) -> str:
    return ", ".join(variable for _, variable in settings.headers) or "none"
