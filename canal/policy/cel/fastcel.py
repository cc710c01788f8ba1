"""Fast path: a rule's CEL parse tree translated once into Python closures over the plain facts.

cel-python's interpreter walks the lark tree per evaluation (0.2-0.5 ms a rule). The closures evaluate
what the interpreter evaluates (both sides of `&&`/`||`, every macro element, the taken `?:` branch) on
the happy path only: expected operand types, keys present, indexes in range, regexes that compile (re2,
as celpy). Anything else raises ``Fallback`` and the interpreter, the authority on errors and failing
closed, decides; constructs outside the subset make ``translate`` return None (interpreter only).
tests/unit/policy/test_fast_eval.py checks fast == interpreter over every shipped rule and both corpora.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from lark import Token, Tree

from canal.policy.cel.fastops import (
    BINARY,
    FUNCTIONS,
    METHOD_ONLY,
    Fallback,
    as_bool,
    as_int,
    index,
    key,
    ranged,
)

Scope = dict[str, Any]
Fn = Callable[[Mapping[str, Any], Scope], Any]
MACROS = frozenset({"exists", "all", "exists_one", "map", "filter"})
class Unsupported(Exception):
    """The expression uses something outside the translated subset."""


def run(fn: Fn, facts: Mapping[str, Any]) -> bool | None:
    """The rule's boolean, or None when the interpreter must decide (any error, any doubt)."""
    try:
        result = fn(facts, {})
    except Exception:
        return None
    return result if type(result) is bool else None


def translate(tree: Tree[Any], literal: Callable[[Token], Any]) -> Fn | None:
    """Closures for ``tree``, or None when it uses anything outside the subset.
    ``literal`` turns a literal token into its value exactly as the interpreter does."""
    try:
        return _Translator(literal).node(tree, frozenset())
    except Unsupported:
        return None


class _Translator:
    def __init__(self, literal: Callable[[Token], Any]) -> None:
        self.literal = literal

    def node(self, tree: Any, bound: frozenset[str]) -> Fn:
        if not isinstance(tree, Tree):
            raise Unsupported
        if len(tree.children) == 1 and tree.data in _PASS:
            return self.node(tree.children[0], bound)
        handler = getattr(self, f"t_{tree.data}", None)
        if handler is None:
            raise Unsupported
        result: Fn = handler(tree.children, bound)
        return result

    def t_expr(self, ch: list[Any], bound: frozenset[str]) -> Fn:
        cond, yes, no = (self.node(c, bound) for c in ch)
        return lambda f, s: yes(f, s) if as_bool(cond(f, s)) else no(f, s)

    def t_conditionalor(self, ch: list[Any], bound: frozenset[str]) -> Fn:
        a, b = (self.node(c, bound) for c in ch)
        return lambda f, s: (as_bool(a(f, s)), as_bool(b(f, s))) != (False, False)

    def t_conditionaland(self, ch: list[Any], bound: frozenset[str]) -> Fn:
        a, b = (self.node(c, bound) for c in ch)
        return lambda f, s: (as_bool(a(f, s)), as_bool(b(f, s))) == (True, True)

    def _binary(self, ch: list[Any], bound: frozenset[str]) -> Fn:
        op_tree = ch[0]
        op = BINARY.get(op_tree.data) if isinstance(op_tree, Tree) else None
        if op is None or len(op_tree.children) != 1:
            raise Unsupported
        a, b = self.node(op_tree.children[0], bound), self.node(ch[1], bound)
        return lambda f, s: op(a(f, s), b(f, s))

    t_relation = t_addition = t_multiplication = _binary

    def t_unary(self, ch: list[Any], bound: frozenset[str]) -> Fn:
        op, operand = ch[0], self.node(ch[1], bound)
        if isinstance(op, Tree) and op.data == "unary_not":
            return lambda f, s: not as_bool(operand(f, s))
        if isinstance(op, Tree) and op.data == "unary_neg":
            return lambda f, s: ranged(-as_int(operand(f, s)))
        raise Unsupported

    def t_member_dot(self, ch: list[Any], bound: frozenset[str]) -> Fn:
        obj, name = self.node(ch[0], bound), str(ch[1])
        return lambda f, s: key(obj(f, s), name)

    def t_member_index(self, ch: list[Any], bound: frozenset[str]) -> Fn:
        obj, at = self.node(ch[0], bound), self.node(ch[1], bound)
        return lambda f, s: index(obj(f, s), at(f, s))

    def t_member_dot_arg(self, ch: list[Any], bound: frozenset[str]) -> Fn:
        name = str(ch[1])
        if name in MACROS:
            return self._macro(name, ch[0], ch[2] if len(ch) > 2 else None, bound)
        func = FUNCTIONS.get(name)
        if func is None:
            raise Unsupported
        target, args = self.node(ch[0], bound), self._args(ch[2] if len(ch) > 2 else None, bound)
        return lambda f, s: func(target(f, s), *(a(f, s) for a in args))

    def t_ident_arg(self, ch: list[Any], bound: frozenset[str]) -> Fn:
        name = str(ch[0])
        func = FUNCTIONS.get(name)
        if func is None or name in METHOD_ONLY:
            raise Unsupported
        args = self._args(ch[1] if len(ch) > 1 else None, bound)
        return lambda f, s: func(*(a(f, s) for a in args))

    def t_ident(self, ch: list[Any], bound: frozenset[str]) -> Fn:
        name = str(ch[0])
        if name in bound:
            return lambda f, s: s[name]
        return lambda f, s: f[name]

    def t_paren_expr(self, ch: list[Any], bound: frozenset[str]) -> Fn:
        return self.node(ch[0], bound)

    def t_list_lit(self, ch: list[Any], bound: frozenset[str]) -> Fn:
        items = self._args(ch[0] if ch else None, bound)
        return lambda f, s: [i(f, s) for i in items]

    def t_literal(self, ch: list[Any], bound: frozenset[str]) -> Fn:
        if len(ch) != 1 or not isinstance(ch[0], Token) or ch[0].type not in _LITERALS:
            raise Unsupported
        value = self.literal(ch[0])
        if type(value) not in (bool, int, str):
            raise Unsupported
        return lambda f, s: value

    def _args(self, exprlist: Any, bound: frozenset[str]) -> list[Fn]:
        if exprlist is None:
            return []
        if not isinstance(exprlist, Tree) or exprlist.data != "exprlist":
            raise Unsupported
        return [self.node(c, bound) for c in exprlist.children]

    def _macro(self, name: str, source: Any, exprlist: Any, bound: frozenset[str]) -> Fn:
        if not isinstance(exprlist, Tree) or len(exprlist.children) != 2:
            raise Unsupported
        var = _bare_ident(exprlist.children[0])
        items, body = self.node(source, bound), self.node(exprlist.children[1], bound | {var})
        combine = _COMBINE[name]

        def macro(f: Mapping[str, Any], s: Scope) -> Any:
            values = items(f, s)
            if type(values) is not list:
                raise Fallback
            return combine(values, [body(f, {**s, var: v}) for v in values])
        return macro


_PASS = frozenset({"expr", "conditionalor", "conditionaland", "relation", "addition", "multiplication",
                   "unary", "member", "primary"})
_LITERALS = frozenset({"INT_LIT", "STRING_LIT", "MLSTRING_LIT", "BOOL_LIT"})
_COMBINE: dict[str, Callable[[list[Any], list[Any]], Any]] = {
    "exists": lambda _, r: any([as_bool(x) for x in r]),
    "all": lambda _, r: all([as_bool(x) for x in r]),
    "exists_one": lambda _, r: [as_bool(x) for x in r].count(True) == 1,
    "map": lambda _, r: r,
    "filter": lambda v, r: [x for x, keep in zip(v, r, strict=True) if as_bool(keep)],
}


def _bare_ident(tree: Any) -> str:
    while isinstance(tree, Tree) and len(tree.children) == 1 and tree.data in _PASS:
        tree = tree.children[0]
    if isinstance(tree, Tree) and tree.data == "ident" and isinstance(tree.children[0], Token):
        return str(tree.children[0])
    raise Unsupported
