"""Random changes to a workspace, one kind each, for the randomised tests of checkpoints and forks:
each takes the workspace and a seeded ``random.Random`` and changes something, or nothing when there
is nothing of its kind to change."""

from __future__ import annotations

import os
import random
import shutil
from collections.abc import Callable
from pathlib import Path


def folders(ws: Path) -> list[Path]:
    return sorted(p for p in ws.rglob("*") if p.is_dir() and not p.is_symlink())


def files(ws: Path) -> list[Path]:
    return sorted(p for p in ws.rglob("*") if p.is_symlink() or p.is_file())


def fill(folder: Path, rng: random.Random, count: int) -> None:
    for i in range(count):
        size = rng.choice([0, 5, 40, 4000])
        (folder / f"n{rng.randrange(10_000)}-{i}.txt").write_bytes(rng.randbytes(size))


def create(ws: Path, rng: random.Random) -> None:
    folder = rng.choice([ws, *folders(ws)])
    path = folder / rng.choice(["a.txt", "b.log", "c.bin", f"x{rng.randrange(100)}"])  # *.log: gitignored
    if path.is_symlink():
        path.unlink()
    if not path.is_dir():
        path.write_bytes(rng.randbytes(rng.choice([0, 3, 100, 5000])))


def modify(ws: Path, rng: random.Random) -> None:
    choices = [p for p in files(ws) if not p.is_symlink() and p.name != ".gitignore"]
    if choices:
        path = rng.choice(choices)
        size = path.stat().st_size if rng.random() < 0.5 else rng.randrange(0, 4000)
        path.write_bytes(rng.randbytes(size))  # same size or not, new bytes


def delete(ws: Path, rng: random.Random) -> None:
    if choices := files(ws):
        rng.choice(choices).unlink()


def make_tree(ws: Path, rng: random.Random) -> None:
    top = rng.choice([ws, *folders(ws)]) / f"t{rng.randrange(1000)}"
    deep = top / "in" / "deeper"
    deep.mkdir(parents=True, exist_ok=True)
    fill(top, rng, 2)
    fill(deep, rng, 3)


def remove_tree(ws: Path, rng: random.Random) -> None:
    if choices := folders(ws):
        shutil.rmtree(rng.choice(choices))


def again(ws: Path, rng: random.Random) -> None:
    """``rm -rf d && mkdir d``: a known path, a new inode, other content."""
    if choices := folders(ws):
        folder = rng.choice(choices)
        shutil.rmtree(folder)
        folder.mkdir()
        if rng.random() < 0.7:
            fill(folder, rng, rng.randrange(1, 4))
        if rng.random() < 0.5:
            (folder / "sub").mkdir()
            fill(folder / "sub", rng, 1)


def rename_folder(ws: Path, rng: random.Random) -> None:
    if choices := folders(ws):
        folder = rng.choice(choices)
        folder.rename(folder.with_name(folder.name + "r"))


def move_file(ws: Path, rng: random.Random) -> None:
    if choices := files(ws):
        target = rng.choice([ws, *folders(ws)]) / f"m{rng.randrange(100)}"
        if not target.is_dir() or target.is_symlink():
            os.replace(rng.choice(choices), target)


def chmod(ws: Path, rng: random.Random) -> None:
    if choices := [p for p in [*files(ws), *folders(ws)] if not p.is_symlink()]:
        path = rng.choice(choices)
        path.chmod(rng.choice([0o700, 0o755]) if path.is_dir() else rng.choice([0o600, 0o644, 0o755]))


def symlink(ws: Path, rng: random.Random) -> None:
    folder = rng.choice([ws, *folders(ws)])
    link = folder / f"l{rng.randrange(4)}"
    if link.is_symlink() or link.is_file():
        link.unlink()
    elif link.is_dir():
        shutil.rmtree(link)
    link.symlink_to(rng.choice(["a.txt", "../x", "nowhere", "."]))


def swap_kind(ws: Path, rng: random.Random) -> None:
    """A file becomes a folder, or a folder a file, at the same path."""
    choices = [*files(ws), *folders(ws)]
    if not choices:
        return
    path = rng.choice(choices)
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path)
        path.write_bytes(b"a file now")
    else:
        path.unlink()
        path.mkdir()
        fill(path, rng, 1)


def privileged(ws: Path, rng: random.Random) -> None:
    """A setuid or setgid file, or a setgid folder (what a host process may make; no sandbox can)."""
    if choices := [p for p in [*files(ws), *folders(ws)] if not p.is_symlink()]:
        path = rng.choice(choices)
        path.chmod(0o2775 if path.is_dir() else rng.choice([0o4755, 0o2755, 0o6700]))


def gitignore(ws: Path, rng: random.Random) -> None:
    """Rules that leave out more, or less (a path covered before stays covered)."""
    path = rng.choice([ws, *folders(ws)]) / ".gitignore"
    if path.is_symlink():
        path.unlink()
    if not path.is_dir():
        path.write_text(rng.choice(["*.log\n", "*.bin\nsub/\n", "", "x*\n!x1\n"]))


def hard_link(ws: Path, rng: random.Random) -> None:
    if choices := [p for p in files(ws) if not p.is_symlink()]:
        target = rng.choice([ws, *folders(ws)]) / f"h{rng.randrange(1000)}"
        if not target.exists():
            os.link(rng.choice(choices), target)


CHANGES: list[Callable[[Path, random.Random], None]] = [
    create, create, modify, modify, delete, make_tree, remove_tree, again, again, rename_folder, move_file,
    chmod, symlink, swap_kind, hard_link, gitignore, privileged]
