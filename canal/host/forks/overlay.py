"""The fork's workspace: read-only lower layers (the checkpoint: hard links to its stored files) under a
writable upper layer, joined by kernel overlayfs and bind-mounted into the fork's sandbox.

A lower layer is never written (overlayfs copies a file up before the first write), so the stored
objects it links to stay intact, and the real project is not part of the mount at all. A layer is
either whole (every entry of a checkpoint) or a delta stacked on the layer of an earlier checkpoint:
only the entries that differ, with a whiteout (a 0/0 character device, overlayfs's own mark) where a
path of the layer below is gone (layers.py decides which; overlayfs stacks several lower folders).
"""

from __future__ import annotations

import contextlib
import errno
import os
import shutil
import stat
import subprocess
from collections.abc import Mapping, Sequence
from pathlib import Path

from canal.host.checkpoints.objects import ObjectStore
from canal.host.checkpoints.restore import unprivileged
from canal.host.checkpoints.scan import Entry, Key
from canal.host.forks.errors import FORK_UNSUPPORTED

# redirect_dir=off: renaming a lower folder fails with EXDEV and tools fall back to copy + delete, so
# the upper layer never holds redirects; metacopy=off: a chmod copies the whole file up.
OPTIONS = "redirect_dir=off,metacopy=off,index=off"


def materialize(lower: Path, entries: Mapping[str, Entry], objects: ObjectStore,
                owner: tuple[int, int], spare: tuple[Path, Mapping[str, Entry]] | None = None) -> None:
    """Build the lower layer for ``entries`` (once per manifest), then make it read-only by mode.

    ``spare``: a lower layer no fork uses and the entries it was built for; it is taken (renamed) and
    only the entries that differ are unlinked and made again, instead of linking every file anew.
    Plain strings and a descriptor of the folder, not ``Path`` objects: 20,000 entries through pathlib
    cost more than the links themselves."""
    if lower.is_dir():
        return
    tmp = lower.with_name(lower.name + ".tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    old: Mapping[str, Entry] = {}
    if spare is not None:
        with contextlib.suppress(FileNotFoundError):  # another process took it first
            os.rename(spare[0], tmp)
            old = spare[1]
    if not tmp.is_dir():
        tmp.mkdir(parents=True)
    os.chown(tmp, *owner)
    top = os.open(tmp, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        _unlink_stale(top, str(tmp), old, entries)
        _make(top, str(tmp), str(objects.root), old, entries)
    finally:
        os.close(top)
    os.rename(tmp, lower)


def _same(old: Entry, new: Entry) -> bool:
    """The lower layer holds the same thing for both: a file's object names its bytes, mode and owner
    (the mtime is the object's own); a symlink's target and owner; a folder's mode and owner."""
    return old[0] == new[0] and old[1] == new[1] and old[4:] == new[4:]


def _unlink_stale(top: int, root: str, old: Mapping[str, Entry], new: Mapping[str, Entry]) -> None:
    for path in sorted(old, key=lambda p: p.count("/"), reverse=True):  # a folder's entries first
        entry, now = old[path], new.get(path)
        if now is not None and (_same(entry, now) or entry[0] == now[0] == "d"):
            continue  # a folder that stays a folder keeps what stays in it; _make sets its mode
        if entry[0] == "d":
            shutil.rmtree(f"{root}/{path}")
        else:
            os.unlink(path, dir_fd=top)


def _make(top: int, root: str, store: str, old: Mapping[str, Entry], new: Mapping[str, Entry],
          made: set[str] | None = None) -> None:
    """Make each entry of ``new`` that ``old`` (what the folder holds already) does not have the same.
    ``made``: the folders made so far (a folder in it is only given its mode and owner again)."""
    for path in sorted(new, key=lambda p: p.count("/")):
        entry = new[path]
        was = old.get(path)
        if was is not None and _same(was, entry):
            continue
        kind, mode, _size, _mtime, uid, gid, ref = entry
        if kind == "d":
            if (was is None or was[0] != "d") and (made is None or path not in made):
                os.mkdir(path, dir_fd=top)
            if made is not None:
                made.add(path)
            os.chown(path, uid, gid, dir_fd=top)
            os.chmod(path, unprivileged(mode), dir_fd=top)
        elif kind == "l":
            os.symlink(ref, path, dir_fd=top)
            os.chown(path, uid, gid, dir_fd=top, follow_symlinks=False)
        else:
            _link(f"{store}/{ref[:2]}/{ref}", path, (top, root), uid, gid)


def delta(layer: Path, below: Mapping[str, Entry], entries: Mapping[str, Entry], objects: ObjectStore,
          owner: tuple[int, int]) -> int:
    """Build at ``layer`` (a new folder) what turns the state ``below`` (the layers under it) into
    ``entries``: each entry that differs, the folders holding them (with ``entries``' mode and owner:
    the top layer's folder is the one shown), and a whiteout for each path gone whose folder stays.
    Returns how many entries it holds."""
    put = [p for p, e in entries.items() if (was := below.get(p)) != e and (was is None or not _same(was, e))]
    gone = [p for p in below if p not in entries and _shown_in(_parent(p), entries)]
    os.mkdir(layer, 0o700)
    os.chown(layer, *owner)
    top = os.open(layer, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        made: set[str] = set()
        for path in sorted(put + gone, key=lambda p: p.count("/")):
            _folders_for(top, path, entries, made)
            if path in entries:
                _make(top, str(layer), str(objects.root), {}, {path: entries[path]}, made)
            else:
                os.mknod(path, stat.S_IFCHR | 0o000, os.makedev(0, 0), dir_fd=top)
    finally:
        os.close(top)
    return len(put) + len(gone)


def _parent(path: str) -> str:
    return path.rpartition("/")[0]


def _shown_in(folder: str, entries: Mapping[str, Entry]) -> bool:
    """Whether ``folder`` is a folder of ``entries`` (the root is): what the layers below hold in it
    shows through unless a whiteout hides it."""
    return not folder or ((e := entries.get(folder)) is not None and e[0] == "d")


def _folders_for(top: int, path: str, entries: Mapping[str, Entry], made: set[str]) -> None:
    """The folders above ``path`` in the layer, each with the mode and owner ``entries`` give it."""
    parts = path.split("/")[:-1]
    for i in range(len(parts)):
        folder = "/".join(parts[:i + 1])
        if folder not in made:
            _make(top, "", "", {}, {folder: entries[folder]}, made)


def _link(source: str, target: str, into: tuple[int, str], uid: int, gid: int) -> None:
    top, folder = into
    try:
        os.link(source, target, dst_dir_fd=top)
    except OSError as exc:
        if exc.errno != errno.EMLINK:  # ext4 allows 65,000 links to one file (many empty files)
            raise
        shutil.copy2(source, f"{folder}/{target}")
        os.chown(target, uid, gid, dir_fd=top)


def layer_keys(layer: Path) -> dict[str, Key]:
    """The scanner's stat key of each file and symlink the layer holds (not its folders, nor its
    whiteouts). On one filesystem overlayfs shows a lower file with the lower inode's own attributes and
    number, so these are the keys the fork's workspace shows for every file it has not touched."""
    keys: dict[str, Key] = {}
    stack = [("", os.open(layer, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC))]
    while stack:
        rel, fd = stack.pop()
        try:
            with os.scandir(fd) as listing:
                items = list(listing)
            for item in items:
                path = f"{rel}/{item.name}" if rel else item.name
                st = item.stat(follow_symlinks=False)
                if stat.S_ISDIR(st.st_mode):
                    stack.append((path, os.open(item.name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW
                                                | os.O_CLOEXEC, dir_fd=fd)))
                elif stat.S_ISREG(st.st_mode) or stat.S_ISLNK(st.st_mode):
                    keys[path] = (st.st_mode, st.st_size, st.st_ino, st.st_ctime_ns, st.st_mtime_ns,
                                  st.st_uid, st.st_gid)
        finally:
            os.close(fd)
    return keys


def mount(layers: Sequence[Path], upper: Path, work: Path, merged: Path, root_st: os.stat_result,
          ignored: Path | None = None) -> None:
    """Mount the overlay at ``merged``. ``layers``: the checkpoint's lower layers, top first, all in one
    folder (named relative to it, so a stack of them fits the mount options' page). The upper layer's
    root takes the project folder's owner and mode before the mount: overlayfs reads the root's
    attributes once, when it mounts. ``ignored``: a lower layer above the checkpoint's (the paths no
    checkpoint holds, forks/ignored.py: above, so that no whiteout of a layer below hides them)."""
    for folder in (upper, work, merged):
        folder.mkdir(parents=True, exist_ok=True)
    if os.path.ismount(merged):
        return
    os.chown(upper, root_st.st_uid, root_st.st_gid)
    os.chmod(upper, root_st.st_mode & 0o7777)
    home = layers[0].parent
    for folder in (upper, work, *layers, *([ignored] if ignored else [])):
        if any(c in (str(folder) if folder.parent != home else folder.name) for c in ",:\\"):
            msg = f"The folder {folder} has a character overlayfs options cannot carry (, : or \\)."
            raise FORK_UNSUPPORTED(msg, hint="set CANAL_STATE_DIR to a plain path, then fork again")
    if any(layer.parent != home for layer in layers):
        msg = "the lower layers of a fork are in one folder"
        raise ValueError(msg)
    lowers = ":".join([*([str(ignored)] if ignored is not None else []), *(layer.name for layer in layers)])
    options = f"lowerdir={lowers},upperdir={upper},workdir={work},{OPTIONS}"
    done = subprocess.run(["mount", "-t", "overlay", "overlay", "-o", options, str(merged)],
                          capture_output=True, text=True, check=False, cwd=home)
    if done.returncode != 0:
        why = done.stderr.strip() or f"mount exited {done.returncode}"
        msg = f"Could not mount the fork's copy-on-write workspace: {why}."
        raise FORK_UNSUPPORTED(msg, hint="forks need kernel overlayfs and Canal running as root on this host "
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
