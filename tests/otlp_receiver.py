"""An OTLP/HTTP logs receiver for tests: listens on 127.0.0.1, keeps every request it accepted, and can be
told to answer with an error. Requests are decoded as the OTLP JSON encoding (ExportLogsServiceRequest)."""

from __future__ import annotations

import json
import ssl
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


class Receiver:
    def __init__(self, server: ThreadingHTTPServer) -> None:
        self.server = server
        self.requests: list[dict[str, Any]] = []
        self.paths: list[str] = []
        self.content_types: list[str] = []
        self.headers: list[dict[str, str]] = []  # each accepted request's headers, names in lower case
        self.peer_certs: list[dict[str, Any] | None] = []  # the client certificate of each, over TLS
        self.status = 200  # what to answer the next requests with
        self.location = ""  # the Location header of a 3xx answer
        self.lock = threading.Lock()

    @property
    def endpoint(self) -> str:
        scheme = "https" if isinstance(self.server.socket, ssl.SSLSocket) else "http"
        return f"{scheme}://127.0.0.1:{self.server.server_address[1]}"

    def records(self) -> list[dict[str, Any]]:
        """Every log record received, its attributes decoded to plain values."""
        found = []
        with self.lock:
            requests = list(self.requests)
        for request in requests:
            for resource in request["resourceLogs"]:
                for scope in resource["scopeLogs"]:
                    for rec in scope["logRecords"]:
                        found.append({**rec, "attributes": attributes(rec["attributes"]),
                                      "resource": attributes(resource["resource"]["attributes"])})
        return found

    def wait_for(self, predicate: Any, timeout: float = 30.0) -> list[dict[str, Any]]:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            got = self.records()
            if predicate(got):
                return got
            time.sleep(0.1)
        return self.records()


def value(any_value: dict[str, Any]) -> Any:
    if "stringValue" in any_value:
        return any_value["stringValue"]
    if "intValue" in any_value:
        return int(any_value["intValue"])
    if "boolValue" in any_value:
        return any_value["boolValue"]
    if "doubleValue" in any_value:
        return any_value["doubleValue"]
    if "kvlistValue" in any_value:
        return attributes(any_value["kvlistValue"]["values"])
    if "arrayValue" in any_value:
        return [value(v) for v in any_value["arrayValue"]["values"]]
    return None


def attributes(pairs: list[dict[str, Any]]) -> dict[str, Any]:
    return {pair["key"]: value(pair["value"]) for pair in pairs}


@contextmanager
def otlp_receiver(tls: ssl.SSLContext | None = None) -> Iterator[Receiver]:
    """A receiver on 127.0.0.1; with ``tls`` (a server context) it speaks HTTPS. A request whose path is
    a whole URL is one sent to it as a proxy."""
    holder: dict[str, Receiver] = {}

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            receiver = holder["r"]
            body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
            if receiver.status != 200:
                self.send_response(receiver.status)
                if receiver.location:
                    self.send_header("Location", receiver.location)
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            with receiver.lock:
                receiver.requests.append(json.loads(body))
                receiver.paths.append(self.path)
                receiver.content_types.append(self.headers.get("Content-Type", ""))
                receiver.headers.append({k.lower(): v for k, v in self.headers.items()})
                conn = self.connection
                receiver.peer_certs.append(conn.getpeercert() if isinstance(conn, ssl.SSLSocket) else None)
            answer = b"{}"
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(answer)))
            self.end_headers()
            self.wfile.write(answer)

        def log_message(self, format: str, *args: Any) -> None:
            return

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    if tls is not None:
        server.socket = tls.wrap_socket(server.socket, server_side=True)
    holder["r"] = Receiver(server)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield holder["r"]
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)
