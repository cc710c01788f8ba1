"""Helpers of the egress tests: a project whose sandbox may reach only allowed names through its egress
proxy, and a test server.

The server runs in a container on the proxy's outer network under several names (aliases): the proxy
reaches it by name, the sandbox only through the proxy. Nothing leaves the machine: every address is a
container's on networks the test creates, or a documentation prefix no route reaches.
"""

from __future__ import annotations

import base64
import hashlib
import io
import tarfile
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from canal.runtime.api import Canal
from canal.sandbox.docker.egress import LABEL_EGRESS

ALLOWED, DENIED, INDEX = "allowed.test", "denied.test", "pypi.test"
PORT = 8080
CONFIG = f"""sandbox:
  network:
    mode: allowlist
    allow: ["{ALLOWED}:{PORT}", "{INDEX}:{PORT}"]
  limits: {{memory: 512m}}
"""


@dataclass
class World:
    canal: Canal
    project: Path
    owner: str
    server_ip: str

    def run(self, command: str) -> Any:
        return self.canal.run(command, timeout_s=60)


def wheel(name: str = "tinypkg", version: str = "0.1") -> tuple[str, bytes]:
    """A minimal pure-Python wheel (zip with module, METADATA, WHEEL and a RECORD of hashes)."""
    dist = f"{name}-{version}.dist-info"
    files = {f"{name}/__init__.py": b"ANSWER = 42\n",
             f"{dist}/METADATA": f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n".encode(),
             f"{dist}/WHEEL": b"Wheel-Version: 1.0\nGenerator: canal-test\nRoot-Is-Purelib: true\n"
                              b"Tag: py3-none-any\n"}
    record = "".join(f"{path},sha256={_b64sha(data)},{len(data)}\n" for path, data in files.items())
    files[f"{dist}/RECORD"] = (record + f"{dist}/RECORD,,\n").encode()
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        for path, data in files.items():
            zf.writestr(path, data)
    return f"{name}-{version}-py3-none-any.whl", buf.getvalue()


def _b64sha(data: bytes) -> str:
    return base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()


def pip_zipapp() -> bytes:
    """The test process's own pip as one runnable zip: the sandbox image has Python but no pip."""
    import pip

    root = Path(pip.__file__).parent
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("__main__.py", "import runpy\nrunpy.run_module('pip', run_name='__main__')\n")
        for path in root.rglob("*"):
            if path.is_file() and "__pycache__" not in path.parts:
                zf.write(path, f"pip/{path.relative_to(root).as_posix()}")
    return buf.getvalue()


def site_tar() -> bytes:
    """/srv: /hostname for plain requests, and a PEP 503 index (directory listings) with one wheel."""
    name, data = wheel()
    files = {"srv/hostname": b"canal-egress-test-server\n", f"srv/simple/tinypkg/{name}": data}
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        for path, content in files.items():
            info = tarfile.TarInfo(path)
            info.size, info.mode = len(content), 0o644
            tar.addfile(info, io.BytesIO(content))
    return buf.getvalue()


def start_server(docker_client: Any, image: str, network: str, owner: str) -> Any:
    server = docker_client.containers.create(
        image, ["python3", "-m", "http.server", str(PORT), "--directory", "/srv"], user="1000:1000",
        name=f"{owner}-server", labels={"canal.test": "egress"}, network=network)
    server.put_archive("/", site_tar())
    docker_client.api.disconnect_container_from_network(server.id, network)
    docker_client.api.connect_container_to_network(server.id, network, aliases=[ALLOWED, DENIED, INDEX])
    server.start()
    server.reload()
    return server


def remove_egress(docker_client: Any, owner: str) -> None:
    """Whatever a failed test left of this project's proxies and networks (only its own labels)."""
    mine = {"label": f"{LABEL_EGRESS}={owner}"}
    for container in docker_client.containers.list(all=True, filters=mine):
        container.remove(force=True)
    for network in docker_client.networks.list(filters=mine):
        network.remove()
