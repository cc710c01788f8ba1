"""The one CEL environment of the process: compile, lint and evaluate rule expressions.

cel-python notes that shape this module: one runner class for the whole process (CompiledRunner breaks
custom functions, cel-python #145, and the parser cache is class-wide), so we use InterpretedRunner;
environments are not thread-safe, so evaluation holds a lock; there is no cost limit, so inputs are
capped by the parser and nested comprehensions are refused at load. Each Compiled also carries the
rule translated into Python closures (policy.cel.fastcel), which the engine tries first; the fast path needs
no lock (pure functions over plain values) and hands anything doubtful back to this interpreter.
"""

from __future__ import annotations

import posixpath
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import celpy
from celpy import celtypes
from celpy.adapter import json_to_cel
from celpy.celparser import CELParseError
from celpy.evaluation import CELEvalError, celstr
from lark import Token, Tree

from canal.policy.cel.fastcel import Fn, translate
from canal.policy.parser_cache import install_cached_parser

MACROS = frozenset({"exists", "all", "exists_one", "map", "filter"})
MAX_MACRO_NESTING = 1
_LOCK = threading.RLock()
_ENV: celpy.Environment | None = None


def _s(value: Any) -> celtypes.StringType:
    return celtypes.StringType(value)


def _join(items: Any, sep: Any = "") -> celtypes.StringType:
    return _s(str(sep).join(str(i) for i in items))


def _split(text: Any, sep: Any) -> celtypes.ListType:
    return celtypes.ListType([_s(p) for p in str(text).split(str(sep))])


FUNCTIONS: dict[str, Any] = {
    "join": _join,
    "split": _split,
    "lower": lambda t: _s(str(t).lower()),
    "lowerAscii": lambda t: _s(str(t).lower()),
    "upperAscii": lambda t: _s(str(t).upper()),
    "trim": lambda t: _s(str(t).strip()),
    "replace": lambda t, old, new: _s(str(t).replace(str(old), str(new))),
    "basename": lambda t: _s(posixpath.basename(str(t))),
}


class CelCompileError(Exception):
    def __init__(self, message: str, line: int, column: int) -> None:
        super().__init__(message)
        self.line = line
        self.column = column


@dataclass(frozen=True)
class Compiled:
    source: str
    program: Any  # celpy.Runner
    names: frozenset[str] = frozenset()  # identifiers the expression reads: the activation holds only these
    fast: Fn | None = None  # closures over plain facts (policy.cel.fastcel); None: interpreter only


def environment() -> celpy.Environment:
    global _ENV
    with _LOCK:
        if _ENV is None:
            install_cached_parser()
            _ENV = celpy.Environment(runner_class=celpy.InterpretedRunner)
        return _ENV


def _macro_nesting(tree: Tree[Any]) -> int:
    deepest = 0
    for child in tree.children:
        if isinstance(child, Tree):
            deepest = max(deepest, _macro_nesting(child))
    if tree.data == "member_dot_arg" and len(tree.children) > 1:
        name = tree.children[1]
        if isinstance(name, Token) and str(name) in MACROS:
            return deepest + 1
    return deepest


def _identifiers(tree: Tree[Any]) -> frozenset[str]:
    return frozenset(str(t.children[0]) for t in tree.iter_subtrees()
                     if t.data == "ident" and t.children and isinstance(t.children[0], Token))


def compile_expression(text: str) -> Compiled:
    """Compile once; raise CelCompileError with the 1-based line and column of the problem."""
    env = environment()
    with _LOCK:
        try:
            ast = env.compile(text)
        except CELParseError as exc:
            line = int(getattr(exc, "line", 0) or 0)
            column = int(getattr(exc, "column", 0) or 0)
            raise CelCompileError(str(exc.args[0]) if exc.args else str(exc), line, column) from None
        if _macro_nesting(ast) > MAX_MACRO_NESTING:
            msg = (
                "comprehensions (exists/all/map/filter) nested inside each other are "
                                  "refused: their cost grows with the product of list sizes"
            )
            raise CelCompileError(msg, 1, 1)
        program = env.program(ast, functions=FUNCTIONS)
        fast = translate(ast, literal_value)
    return Compiled(text, program, _identifiers(ast), fast)


def literal_value(token: Token) -> Any:
    """A literal token's value as the interpreter reads it (cel-python's ``Evaluator.literal``, with its
    own ``celstr`` for strings), as a plain Python value; None for another type. Reading the token
    itself, rather than compiling and evaluating its text alone, was half of a policy's compile time
    (a lark parse per literal: 175 in the standard profile); tests/unit/policy/test_fast_eval.py checks
    every literal of the shipped profiles and the escapes against the interpreter."""
    if token.type == "INT_LIT":
        return int(celtypes.IntType(token.value))
    if token.type in ("STRING_LIT", "MLSTRING_LIT"):
        return str(celstr(token))
    if token.type == "BOOL_LIT":
        return token.value.lower() == "true"
    return None


def compile_combined(parts: list[Compiled]) -> Compiled:
    """One program returning a list of every part's result: one evaluation (and one activation load)
    instead of one per rule, which is most of cel-python's per-call cost."""
    source = "[" + ", ".join(f"({p.source})" for p in parts) + "]"
    env = environment()
    with _LOCK:
        program = env.program(env.compile(source), functions=FUNCTIONS)
    return Compiled(source, program, frozenset().union(*(p.names for p in parts)))


def activation(facts: Mapping[str, Any], names: frozenset[str] | None = None) -> dict[str, Any]:
    return {k: json_to_cel(v) for k, v in facts.items() if names is None or k in names}


class EvalFailure(Exception):
    pass


def _run(compiled: Compiled, act: Mapping[str, Any]) -> Any:
    with _LOCK:
        try:
            result = compiled.program.evaluate(act)
        except Exception as exc:  # cel-python raises many types; all fail closed
            msg = f"{type(exc).__name__}: {exc}"
            raise EvalFailure(msg) from None
    if isinstance(result, CELEvalError):
        raise EvalFailure(str(result.args[0]) if result.args else "evaluation error")
    return result


def evaluate_many(compiled: Compiled, act: Mapping[str, Any], count: int) -> list[bool]:
    """Results of a combined program; any error or non-boolean raises EvalFailure."""
    result = _run(compiled, act)
    if not isinstance(result, celtypes.ListType) or len(result) != count:
        msg = "the combined rules did not return a list"
        raise EvalFailure(msg)
    if not all(isinstance(r, celtypes.BoolType) for r in result):
        msg = "a rule returned a non-boolean"
        raise EvalFailure(msg)
    return [bool(r) for r in result]


def evaluate(compiled: Compiled, act: Mapping[str, Any]) -> bool:
    """True or False; anything else (an error, a non-boolean) raises EvalFailure."""
    result = _run(compiled, act)
    if not isinstance(result, celtypes.BoolType):
        msg = f"the expression returned {type(result).__name__}, not a boolean"
        raise EvalFailure(msg)
    return bool(result)
