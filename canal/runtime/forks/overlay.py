"""The fork's workspace: a read-only lower layer (the checkpoint, hard links to its stored files) under a
writable upper layer, joined by kernel overlayfs and bind-mounted into the fork's sandbox.

The lower layer is never written (overlayfs copies a file up before the first write), so the stored
objects it links to stay intact, and the real project is not part of the mount at all. One lower
layer serves every fork made from the same checkpoint.
"""

from __future__ import annotations

import contextlib
import errno
import os
import shutil
import subprocess
from collections.abc import Mapping
from pathlib import Path

from canal.runtime.checkpoints.objects import ObjectStore
from canal.runtime.checkpoints.scan import Entry
from canal.runtime.forks.errors import ForkUnsupported

# redirect_dir=off: renaming a lower folder fails with EXDEV and tools fall back to copy + delete, so
# the upper layer never holds redirects; metacopy=off: a chmod copies the whole file up.
OPTIONS = "redirect_dir=off,metacopy=off,index=off"


def materialize(lower: Path, entries: Mapping[str, Entry], objects: ObjectStore,
                owner: tuple[int, int]) -> None:
    """Build the lower layer for ``entries`` (once per manifest), then make it read-only by mode."""
    if lower.is_dir():
        return
    tmp = lower.with_name(lower.name + ".tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    os.chown(tmp, *owner)
    for path in sorted(entries, key=lambda p: p.count("/")):
        kind, mode, _size, _mtime, uid, gid, ref = entries[path]
        target = tmp / path
        if kind == "d":
            target.mkdir()
            os.chown(target, uid, gid)
            os.chmod(target, mode)
        elif kind == "l":
            target.symlink_to(ref)
            os.lchown(target, uid, gid)
        else:
            _link(objects.path(ref), target, uid, gid)
    os.rename(tmp, lower)


def _link(source: Path, target: Path, uid: int, gid: int) -> None:
    try:
        os.link(source, target)
    except OSError as exc:
        if exc.errno != errno.EMLINK:  # ext4 allows 65,000 links to one file (many empty files)
            raise
        shutil.copy2(source, target)
        os.chown(target, uid, gid)


def mount(lower: Path, upper: Path, work: Path, merged: Path, root_st: os.stat_result) -> None:
    """Mount the overlay at ``merged``. The upper layer's root takes the project folder's owner and mode
    before the mount: overlayfs reads the root's attributes once, when it mounts."""
    for folder in (upper, work, merged):
        folder.mkdir(parents=True, exist_ok=True)
    if os.path.ismount(merged):
        return
    os.chown(upper, root_st.st_uid, root_st.st_gid)
    os.chmod(upper, root_st.st_mode & 0o7777)
    for folder in (lower, upper, work):
        if any(c in str(folder) for c in ",:\\"):
            msg = f"The folder {folder} has a character overlayfs options cannot carry (, : or \\)."
            raise ForkUnsupported(msg, hint="set CANAL_STATE_DIR to a plain path, then fork again")
    options = f"lowerdir={lower},upperdir={upper},workdir={work},{OPTIONS}"
    done = subprocess.run(["mount", "-t", "overlay", "overlay", "-o", options, str(merged)],
                          capture_output=True, text=True, check=False)
    if done.returncode != 0:
        why = done.stderr.strip() or f"mount exited {done.returncode}"
        msg = f"Could not mount the fork's copy-on-write workspace: {why}."
        raise ForkUnsupported(msg, hint="forks need kernel overlayfs and Canal running as root on this host "
                              "(docs/checkpoints.md#forks)", details={"mount": why})


def unmount(merged: Path) -> None:
    if os.path.ismount(merged):
        subprocess.run(["umount", "-l", str(merged)], check=True, capture_output=True)


def supported() -> str | None:
    """None when this process can mount overlays, else why not."""
    if os.geteuid() != 0:
        return "copy-on-write (kernel overlayfs) needs Canal to run as root on this host"
    with contextlib.suppress(OSError):
        if "overlay" in Path("/proc/filesystems").read_text():
            return None
    return "this kernel has no overlayfs"
