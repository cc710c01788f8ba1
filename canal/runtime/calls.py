"""The public API's calls as data: each method of ``runtime.surface`` is an operation (``run``,
``files.edit``, ``tasks.wait``) whose arguments and result cross the server's wire as JSON, each value
checked against the type its signature gives (pydantic), so the server and the remote client share one
definition of every call instead of hand-kept argument lists. Bytes travel as base64; a ``RunResult``
keeps its ``text`` (the presenter's view), which its own JSON leaves out.
"""

from __future__ import annotations

import inspect
import json
import typing
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from typing import Any

from pydantic import ConfigDict, PydanticUserError, TypeAdapter, ValidationError

from canal.core.errors import CanalError
from canal.runtime import surface
from canal.runtime.errors import API_CALL_INVALID

LOCAL_ONLY = frozenset({"close"})  # nothing is held between calls: the remote client's close is its own
_BYTES = ConfigDict(ser_json_bytes="base64", val_json_bytes="base64")
_WIRE = {"wire": True}


def _adapter(annotation: Any) -> TypeAdapter[Any]:
    try:
        return TypeAdapter(annotation, config=_BYTES)
    except PydanticUserError:  # a model or dataclass carries its own config
        return TypeAdapter(annotation)


@dataclass(frozen=True)
class Operation:
    name: str  # "run", "files.edit"
    api: str | None  # the sub-API it belongs to ("files"), None for Canal's own methods
    method: str
    signature: inspect.Signature  # without ``self``
    params: Mapping[str, TypeAdapter[Any]]
    result: TypeAdapter[Any]

    def dump_args(self, arguments: Mapping[str, Any]) -> dict[str, Any]:
        """The arguments as JSON, each checked against its parameter first: a wrong value is refused
        here, on the caller's side, as the server would refuse it."""
        sent = {}
        for name, value in arguments.items():
            adapter = self.params[name]
            try:
                checked = adapter.validate_python(value)
            except ValidationError as exc:
                raise self._refused(name, value, exc) from exc
            sent[name] = json.loads(adapter.dump_json(checked, context=_WIRE))
        return sent

    def _refused(self, name: str, value: Any, exc: ValidationError) -> CanalError:
        msg = f"{self.name}(): argument {name!r}: {exc.errors()[0]['msg']} (given {str(value)[:80]!r})"
        return API_CALL_INVALID(msg, details={"call": self.name, "argument": name})

    def load_args(self, raw: Mapping[str, Any]) -> dict[str, Any]:
        """The arguments a caller sent, each validated against its parameter; an unknown name, a value
        of the wrong type or a missing required argument is refused before anything runs."""
        unknown = sorted(set(raw) - set(self.params))
        if unknown:
            msg = f"{self.name}() takes no argument {unknown[0]!r}"
            raise API_CALL_INVALID(msg, details={"call": self.name, "argument": unknown[0]})
        values = {}
        for name, value in raw.items():
            try:
                values[name] = self.params[name].validate_json(json.dumps(value))
            except ValidationError as exc:
                raise self._refused(name, value, exc) from exc
        try:
            self.signature.bind(**values)
        except TypeError as exc:
            msg = f"{self.name}(): {exc}"
            raise API_CALL_INVALID(msg, details={"call": self.name}) from exc
        return values

    def dump_result(self, value: Any) -> Any:
        return json.loads(self.result.dump_json(value, context=_WIRE))

    def load_result(self, raw: Any) -> Any:
        return self.result.validate_json(json.dumps(raw))


def _operations_of(protocol: type[Any], api: str | None) -> dict[str, Operation]:
    found = {}
    for method, function in inspect.getmembers(protocol, inspect.isfunction):
        if method.startswith("_") or method in LOCAL_ONLY:
            continue
        hints = typing.get_type_hints(function, vars(surface))
        signature = inspect.signature(function)
        signature = signature.replace(parameters=list(signature.parameters.values())[1:])
        name = method if api is None else f"{api}.{method}"
        found[name] = Operation(name, api, method, signature,
                                {p: _adapter(hints[p]) for p in signature.parameters},
                                _adapter(hints["return"]))
    return found


@cache
def operations() -> dict[str, Operation]:
    """Every call the server serves, by name."""
    found = _operations_of(surface.CanalAPI, None)
    for api, protocol in surface.SUB_APIS.items():
        found.update(_operations_of(protocol, api))
    return found


def operation(name: str) -> Operation:
    op = operations().get(name)
    if op is None:
        msg = f"the API has no call {name!r}"
        raise API_CALL_INVALID(msg, hint="The calls are those of canal.runtime.surface; a client of another "
                             "build than the server's would send others.", details={"call": name})
    return op


def serve(canal: surface.CanalAPI, name: str, raw: Mapping[str, Any]) -> Any:
    """Run one call on ``canal`` and return its result as JSON."""
    op = operation(name)
    kwargs = op.load_args(raw)
    target = canal if op.api is None else getattr(canal, op.api)
    return op.dump_result(getattr(target, op.method)(**kwargs))
