"""Reading a settings file the agent may have tampered with: ``canal.yaml`` and policy files.

The file is opened with ``O_NOFOLLOW`` (a symlink is refused, never followed), must be a regular
file, is read up to a bound, must be UTF-8, and may not repeat a key. Errors name the file and the
line, and never quote the file's content: a swapped file must not leak a byte of what it points at.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path
from typing import Any

import yaml

from canal.runtime.errors import ConfigError

MAX_SETTINGS_BYTES = 256 * 1024
_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)


def _refuse(path: Path, what: str, hint: str, **details: object) -> ConfigError:
    return ConfigError(f"{path}: {what}; nothing was run.", hint=hint, details={"file": str(path), **details})


def read_settings_bytes(path: Path, max_bytes: int = MAX_SETTINGS_BYTES) -> bytes | None:
    """The file's bytes, or ``None`` when it does not exist. Symlinks, non-files and big files refused."""
    try:
        fd = os.open(path, _FLAGS)
    except FileNotFoundError:
        return None
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise _refuse(path, "is a symlink, and Canal never follows one for its settings",
                          f"replace the link with a regular file: rm {path}, then write it again",
                          reason="symlink") from None
        raise _refuse(path, f"cannot be opened ({exc.strerror})", f"check the file: ls -l {path}",
                      reason="unreadable") from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise _refuse(path, "is not a regular file", f"check the file: ls -l {path}", reason="not-a-file")
        if info.st_size > max_bytes:
            raise _refuse(path, f"is {info.st_size} bytes, over the {max_bytes}-byte limit for settings",
                          f"shorten {path}", reason="too-large", limit=max_bytes)
        with os.fdopen(fd, "rb", closefd=False) as fh:
            data = fh.read(max_bytes + 1)
    finally:
        os.close(fd)
    if len(data) > max_bytes:
        raise _refuse(path, f"is over the {max_bytes}-byte limit for settings", f"shorten {path}",
                      reason="too-large", limit=max_bytes)
    return data


def decode_settings(data: bytes, path: Path) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        msg = f"{path}:{line}: not UTF-8 text (byte {exc.start}); nothing was run."
        raise ConfigError(msg,
                          hint=f"save {path} as UTF-8", details={"file": str(path), "line": line,
                                                                "reason": "not-utf8"}) from None


class _UniqueKeyLoader(yaml.SafeLoader):
    """A SafeLoader that refuses a mapping repeating a key (PyYAML keeps the last one silently)."""


def _unique_mapping(loader: _UniqueKeyLoader, node: yaml.MappingNode, deep: bool = False) -> Any:
    seen: dict[Any, int] = {}
    for key_node, _ in node.value:
        key = loader.construct_object(key_node, deep=True)
        line = key_node.start_mark.line + 1
        try:
            first = seen.get(key)
            seen.setdefault(key, line)
        except TypeError:
            continue  # an unhashable key: the constructor below reports it
        if first is not None:
            raise yaml.constructor.ConstructorError(
                None, None, f"duplicate key {key!r} (first on line {first})", key_node.start_mark)
    return loader.construct_mapping(node, deep=deep)


_UniqueKeyLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _unique_mapping)


def load_yaml(text: str, path: Path | str) -> tuple[Any, yaml.Node | None]:
    """(data, composed tree) of ``text``; a syntax error or a repeated key names file and line only."""
    try:
        data = yaml.load(text, Loader=_UniqueKeyLoader)
        tree = yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark
        line = mark.line + 1 if mark is not None else 1
        problem = exc.problem or "not valid YAML"
        msg = f"{path}:{line}: {problem}; nothing was run."
        raise ConfigError(msg, hint=f"fix line {line} of {path}",
                          details={"file": str(path), "line": line, "reason": "yaml"}) from None
    except yaml.YAMLError:
        msg = f"{path}: not valid YAML; nothing was run."
        raise ConfigError(msg, hint=f"fix {path}", details={"file": str(path), "reason": "yaml"}) from None
    return data, tree
