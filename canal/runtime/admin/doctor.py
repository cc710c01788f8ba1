"""Health checks (``canal doctor``): each check says what it found and, as data, the commands that fix it."""

from __future__ import annotations

import contextlib
import os
import shutil
import stat
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from canal.core.errors import CanalError
from canal.core.next import NextAction, act
from canal.host.paths import project_key, state_dir_for, state_path_for, state_root
from canal.runtime.settings.mounts import verdicts
from canal.runtime.settings.project import CONFIG_NAME
from canal.runtime.trust.snapshot import take_snapshot
from canal.sandbox.docker.egress import EgressProxies
from canal.sandbox.docker.engine import docker_client
from canal.sandbox.docker.image import DEFAULT_IMAGE, EGRESS_IMAGE, image_present
from canal.sandbox.errors import SandboxError
from canal.sandbox.runtimes import GVISOR, REGISTER_HINT, gvisor_status

if TYPE_CHECKING:
    from canal.runtime.sandboxes.images import ImageReport


@dataclass(frozen=True)
class Check:
    name: str
    ok: bool
    detail: str
    fix: str = ""  # what to do, in words for every reader
    next: tuple[NextAction, ...] = ()  # the commands that fix it, as data (the front end words them)

    def to_json(self) -> dict[str, object]:
        return {**asdict(self), "next": [a.to_json() for a in self.next]}


def check_engine() -> Check:
    try:
        client = docker_client(timeout=10)
    except SandboxError as exc:
        return Check("engine", False, exc.message, exc.hint, exc.next)
    with contextlib.closing(client):
        version = client.version().get("Version", "?")
        runtimes = sorted((client.info().get("Runtimes") or {}).keys())
    return Check("engine", True, f"Docker {version} answers; runtimes: {', '.join(runtimes)}")


def check_image(image: str = DEFAULT_IMAGE) -> Check:
    try:
        client = docker_client(timeout=10)
    except SandboxError as exc:
        return Check("image", False, f"cannot look for {image}: no engine", exc.hint, exc.next)
    with contextlib.closing(client):
        if image_present(client, image):
            return Check("image", True, f"{image} is present")
    return Check("image", False, f"{image} is not built", next=(act("image.build"),))


def engine_runtimes() -> list[str] | None:
    try:
        client = docker_client(timeout=10)
    except SandboxError:
        return None
    with contextlib.closing(client):
        return sorted((client.info().get("Runtimes") or {}).keys())


def check_gvisor(project_dir: Path) -> Check:
    """Whether runsc is registered; a failure only when the project asks for it."""
    try:
        wanted = take_snapshot(project_dir).config.sandbox.runtime == GVISOR
    except CanalError:
        wanted = False
    runtimes = engine_runtimes()
    if runtimes is None:
        return Check("gvisor", not wanted, "cannot ask the engine for its runtimes: no engine answers",
                     "sudo scripts/ensure-docker")
    usable, detail = gvisor_status(runtimes)
    if usable:
        return Check("gvisor", True, detail)
    need = ("canal.yaml asks for sandbox.runtime: runsc" if wanted
            else "needed only for sandbox.runtime: runsc")
    return Check("gvisor", not wanted, f"{detail} ({need})", REGISTER_HINT)


def check_state_dir(project_dir: Path) -> Check:
    try:
        folder = state_dir_for(project_dir)
    except CanalError as exc:  # the state root still in the old flat layout, mixed or unclaimed
        return Check("state_dir", False, f"{exc.code}: {exc.message}", exc.hint, exc.next)
    except OSError as exc:
        return Check("state_dir", False, f"cannot create the state folder: {exc}",
                     "export CANAL_STATE_DIR=<a writable folder outside the project>")
    info = folder.stat()
    if info.st_uid != os.geteuid():
        return Check("state_dir", False, f"{folder} is owned by uid {info.st_uid}, not you",
                     f"sudo chown -R {os.geteuid()} {folder}")
    if stat.S_IMODE(info.st_mode) & 0o077:
        return Check("state_dir", False, f"{folder} is readable by others "
                     f"(mode {stat.S_IMODE(info.st_mode):o})", f"chmod 700 {folder}")
    if folder.resolve().is_relative_to(project_dir.resolve()):
        return Check("state_dir", False, f"{folder} is inside the project (a sandbox could see it)",
                     "unset CANAL_STATE_DIR or point it outside the project")
    return Check("state_dir", True, f"{folder} (mode 700, yours, outside the project; this project's "
                 f"folder under the state root {state_root()})")


def check_door() -> Check:
    """Whether an approver (another OS user) reaches this server: its own door and the shared one."""
    from canal.client.door_check import door_verdict

    try:
        ok, detail, fix, actions = door_verdict()
    except CanalError as exc:  # the runtime folder is unusable: no server at all
        return Check("door", False, exc.message, exc.hint, exc.next)
    return Check("door", ok, detail, fix, actions)


def check_bash() -> Check:
    """The policy asks the host's bash (-n, nothing runs) to confirm its parse; without it, it denies."""
    found = shutil.which("bash")
    if found is None:
        return Check("bash", False, "no bash on the host: every command with shell syntax is denied",
                     "sudo apt-get install bash")
    return Check("bash", True, f"{found} checks command syntax for the policy")


def check_mounts(project_dir: Path) -> Check:
    """Each mount canal.yaml asks for, allowed or refused, and why (refused ones stop every sandbox)."""
    try:
        config = take_snapshot(project_dir).config
    except CanalError as exc:
        return Check("mounts", False, f"canal.yaml cannot be read: {exc.message}", exc.hint, exc.next)
    found = verdicts(config.sandbox.mounts, project_dir, config.mount_roots, state_path_for(project_dir))
    if not found:
        return Check("mounts", True, "no extra mounts (the project at /workspace only)")
    lines = [f"{'allowed' if v.allowed else 'REFUSED'} {v.mount.source} -> {v.mount.target}"
             f"{' (ro)' if v.mount.read_only else ' (rw)'}: {v.reason}" for v in found]
    ok = all(v.allowed for v in found)
    if ok:
        return Check("mounts", ok, "; ".join(lines))
    return Check("mounts", ok, "; ".join(lines), "remove the refused mount from canal.yaml, or mount a "
                 "folder inside the project or a mount_roots folder", (act("config.approve"),))


def check_config(project_dir: Path) -> Check:
    """canal.yaml (and its policy files) parse, and whether a person approved them."""
    from canal.runtime.services import Services  # lazy: the key store is read only for this check

    try:
        status = Services(project_dir).trust.status()
    except CanalError as exc:
        return Check("config", False, exc.message, exc.hint, exc.next)
    where = project_dir / CONFIG_NAME
    if status.state == "defaults":
        return Check("config", True, f"no {CONFIG_NAME}: the default settings apply (canal init writes one)")
    if status.state == "unapproved":
        names = ", ".join(c.setting for c in status.loosened)
        return Check("config", False, f"{where} is not approved yet (it loosens: {names}); nothing runs "
                     "until a person approves it", next=(act("config.approve", project=str(project_dir)),))
    how = "approved" if status.state == "approved" else "changed, only tightening: it applies"
    return Check("config", True, f"{where} is valid and {how}")


def check_egress(project_dir: Path) -> Check:
    """For ``network: allowlist``: the proxy image is built, and the project's proxies are running."""
    try:
        network = take_snapshot(project_dir).config.sandbox.network
    except CanalError as exc:
        return Check("egress", False, f"canal.yaml cannot be read: {exc.message}", exc.hint, exc.next)
    if network.mode != "allowlist":
        return Check("egress", True, f"no egress proxy needed (sandbox.network: {network.mode})")
    try:
        client = docker_client(timeout=10)
    except SandboxError as exc:
        return Check("egress", False, "cannot look for the egress proxy: no engine", exc.hint, exc.next)
    with contextlib.closing(client):
        if not image_present(client, EGRESS_IMAGE):
            return Check("egress", False, f"{EGRESS_IMAGE} (the egress proxy) is not built; an allowlist "
                         "sandbox cannot start without it", next=(act("image.build", egress=True),))
        try:
            states = EgressProxies(client, f"canal-{project_key(project_dir)}").states()
        except SandboxError as exc:
            return Check("egress", False, f"cannot list the egress proxies: {exc.message}", exc.hint,
                         exc.next)
    entries = ", ".join(e.label for e in network.allow) or "nothing"
    broken = [p for p in states if not p.running]
    shown = "; ".join(f"{p.name} {p.status}, {p.sandboxes} sandbox(es)" for p in states) or \
        "no proxy yet (one starts with the first allowlist sandbox)"
    if broken:
        return Check("egress", False, f"allows {entries}; {shown}: the sandboxes behind a stopped proxy "
                     "have no way out", "remove and start those sandboxes again, or remove broken proxies",
                     (act("gc"),))
    return Check("egress", True, f"allows {entries}; {shown}")


def check_project_image(project_dir: Path) -> Check:
    """The image the project's sandboxes start from, and what it has (canal.yaml ``image:`` included)."""
    from canal.runtime.sandboxes.images import image_report  # lazy: reads the approved settings
    from canal.runtime.services import Services

    try:
        report = image_report(Services(project_dir))
    except CanalError as exc:
        return Check("image", False, exc.message, exc.hint)
    has = image_contents(report)
    if report.image_id is None:  # not a fault: the first command builds it
        return Check("image", True, f"{report.tag} is not built yet: the first command builds it (or build "
                     f"it ahead); it will have {has}", next=(act("image.build"),))
    short = report.image_id.removeprefix("sha256:")[:12]
    if report.running is not None and report.running != report.image_id:
        return Check("image", False, f"the default sandbox still runs an older image, not {report.tag} "
                     f"({short}), which has {has}",
                     next=(act("down", note="the next command starts it from the new image"),))
    return Check("image", True, f"{report.tag} ({short}) has {has}")


def image_contents(report: ImageReport) -> str:
    """What an image report says the image has, in one line."""
    parts = [report.base + (f" (Debian: {' '.join(report.base_packages)})" if report.base_packages else "")]
    added = report.added or {}
    if added.get("preset"):
        parts.append(f"preset {added['preset']} ({' '.join(added['preset_packages'])})")
    for kind in ("apt", "pip", "npm"):
        if added.get(kind):
            parts.append(f"{kind} {' '.join(added[kind])}")
    if added.get("files"):
        parts.append(f"files {', '.join(added['files'])}")
    return " + ".join(parts)


MACHINE_CHECKS: tuple[Callable[[], Check], ...] = (check_bash, check_engine, check_door)
PROJECT_CHECKS: tuple[Callable[[Path], Check], ...] = (check_config, check_project_image, check_state_dir,
                                                        check_mounts, check_gvisor, check_egress)


def run_checks(project_dir: Path | None) -> list[Check]:
    """The machine's checks, then the project's (none when no project was found)."""
    checks = [check() for check in MACHINE_CHECKS]
    if project_dir is not None:
        checks += [check(project_dir) for check in PROJECT_CHECKS]
    else:
        checks.append(check_image())
    return checks
