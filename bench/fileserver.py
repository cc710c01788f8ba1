"""The HTTP file server the network benchmarks run inside a sandbox (egress proxy, port-forward): a 512-byte
``/small`` and a ``/large`` of ``sys.argv[1]`` MiB, HTTP/1.1 keep-alive, Nagle off as production servers
do (else a reused connection waits 40 ms)."""


def file_server(port: int) -> str:
    """The server's Python source, listening on ``port`` (all addresses of the sandbox)."""
    return f"""
import http.server, os, sys
os.makedirs("/tmp/srv", exist_ok=True)
open("/tmp/srv/small", "wb").write(b"x" * 512)
with open("/tmp/srv/large", "wb") as fh:
    for _ in range(int(sys.argv[1])): fh.write(b"y" * (1 << 20))
class H(http.server.SimpleHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True
    def log_message(self, *a): pass
os.chdir("/tmp/srv")
http.server.ThreadingHTTPServer(("", {port}), H).serve_forever()
"""
