"""Where a key that canal.yaml does not know probably belongs: the closest sibling (a typo) or the section
that has a key of that name (a key at the wrong level, as ``approval:`` for ``policy.approval:``)."""

from __future__ import annotations

import difflib
import types
import typing
from collections.abc import Iterator

from pydantic import BaseModel


def _models(annotation: object) -> Iterator[type[BaseModel]]:
    """The pydantic models an annotation holds (directly, in an Optional, a tuple or a list)."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        yield annotation
        return
    if typing.get_origin(annotation) is not None or isinstance(annotation, types.UnionType):
        for arg in typing.get_args(annotation):
            yield from _models(arg)


def _model_at(root: type[BaseModel], path: tuple[int | str, ...]) -> type[BaseModel] | None:
    model = root
    for part in path:
        if isinstance(part, int):
            continue  # an item of a list: the same model as the list's
        field = model.model_fields.get(part)
        found = next(_models(field.annotation), None) if field is not None else None
        if found is None:
            return None
        model = found
    return model


def _paths(model: type[BaseModel], prefix: str = "", depth: int = 3) -> Iterator[str]:
    for name, field in model.model_fields.items():
        path = f"{prefix}{name}"
        yield path
        if depth > 1:
            for inner in _models(field.annotation):
                yield from _paths(inner, f"{path}.", depth - 1)


def unknown_key_hint(root: type[BaseModel], loc: tuple[int | str, ...]) -> str:
    """'' or a short hint (``did you mean 'policy'?``, ``it belongs at policy.approval``)."""
    if not loc or not isinstance(loc[-1], str):
        return ""
    key, parent = loc[-1], _model_at(root, loc[:-1])
    if parent is None:
        return ""
    here = ".".join(str(p) for p in loc[:-1] if isinstance(p, str))
    elsewhere = [p for p in _paths(root) if p.rsplit(".", 1)[-1] == key and p.rsplit(".", 1)[0] != here]
    close = difflib.get_close_matches(key, list(parent.model_fields), n=1, cutoff=0.75)
    hints = [f"it belongs at {' or '.join(elsewhere[:2])}"] if elsewhere else []
    hints += [f"did you mean {close[0]!r}?"] if close else []
    return "; or ".join(hints)
