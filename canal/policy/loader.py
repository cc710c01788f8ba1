"""load_policy: read profile and rule files, compile every rule once, run every inline example."""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import importlib
import os
import shutil
from collections.abc import Mapping, Sequence
from importlib import resources
from pathlib import Path
from typing import Literal

from canal.core.next import act
from canal.policy.cel.celenv import CelCompileError, compile_expression
from canal.policy.engine import CompiledRule, Policy, canonical
from canal.policy.errors import POLICY_NOT_FOUND, PolicyLoadError
from canal.policy.parser_cache import VerifiedMarks
from canal.policy.rules import PolicyFile, Positions, read_policy_file
from canal.policy.shell.syntax import SyntaxChecker, bash_n
from canal.policy.toolcalls import example_call

PROFILES = ("standard", "strict", "autonomous")
# what the policy engine runs besides its own package: an upgrade of any of them runs every example again
ENGINE_LIBRARIES = ("celpy", "lark", "tree_sitter", "tree_sitter_bash", "bracex", "wcmatch", "re2", "yaml")
FORK_NAME = "autonomous"  # what a fork's policy is called, whatever profile it derives from
MAX_EXTENDS = 4
_Spec = tuple[Path, PolicyFile, Positions]


def profile_path(name: str) -> Path:
    if name not in PROFILES:
        msg = f"no shipped profile named {name!r}; shipped: {', '.join(PROFILES)}"
        raise POLICY_NOT_FOUND(msg, next=act("policy.show"), details={"profile": name})
    return Path(str(resources.files("canal.policy").joinpath("profiles", f"{name}.yaml")))


def _compile(spec_file: PolicyFile, positions: Positions, path: Path) -> list[CompiledRule]:
    out: list[CompiledRule] = []
    for i, rule in enumerate(spec_file.rules):
        try:
            compiled = compile_expression(rule.expression)
        except CelCompileError as exc:
            line, col = positions.get(("rules", i, "expression"), (1, 1))
            msg = (
                f"{path}:{line}:{col}: rule {rule.id}: CEL does not compile "
                                  f"(expression line {exc.line}, column {exc.column}): {exc}"
            )
            raise PolicyLoadError(msg,
                                  file=str(path), rule=rule.id, line=line, column=col) from None
        out.append(CompiledRule(rule.id, rule.decision, compiled, rule.programs, rule.when, rule.scope,
                                rule.message or rule.description, str(path)))
    return out


def _read_chain(path: Path, depth: int = 0, texts: Mapping[Path, str] | None = None) -> list[_Spec]:
    if depth > MAX_EXTENDS:
        msg = f"{path}: `extends` chain is longer than {MAX_EXTENDS}"
        raise PolicyLoadError(msg, file=str(path))
    spec, positions = read_policy_file(path, (texts or {}).get(path))
    chain = _read_chain(profile_path(spec.extends), depth + 1) if spec.extends else []
    return [*chain, (path, spec, positions)]


def build_policy(paths: Sequence[Path], checker: SyntaxChecker = bash_n,
                 verified: VerifiedMarks | None = None, texts: Mapping[Path, str] | None = None, *,
                 fork: bool = False) -> Policy:
    """Policy from files in order; later files add rules, and the last file names the default.

    ``verified``: marks of the policies (rules and examples as parsed, engine code) whose inline examples
    already passed, so a new process or project does not run them again (``policy.parser_cache``). Rules
    are compiled either way.
    ``texts``: the content of files already read (and approved): used as given, the file is not read
    again (a file swapped after the approval cannot slip in). Shipped profiles are read from the package.
    ``fork``: the policy of a fork of a project with these files (``load_fork_policy``).
    """
    rules: list[CompiledRule] = []
    specs: list[_Spec] = []
    if not paths:
        msg = "no policy file given"
        raise PolicyLoadError(msg, hint="pass a policy file or a shipped profile")
    for path in paths:
        specs += [s for s in _read_chain(path, texts=texts) if s[0] not in [p for p, _, _ in specs]]
    seen: dict[str, str] = {}
    for path, spec, positions in specs:
        for rule in _compile(spec, positions, path):
            if rule.id in seen:
                line, col = positions.get(("rules", [r.id for r in spec.rules].index(rule.id)), (1, 1))
                msg = (
                    f"{path}:{line}:{col}: rule id {rule.id} is already defined in "
                                      f"{seen[rule.id]}"
                )
                raise PolicyLoadError(msg, file=str(path), rule=rule.id, line=line,
                                      column=col)
            seen[rule.id] = str(path)
            rules.append(rule)
    # The first file names the policy; the strictest declared default wins (fail closed).
    name = next(spec.name for path, spec, _ in specs if path == paths[0])
    default: Literal["allow", "confirm"] = "confirm" if any(s.default == "confirm" for _, s, _ in specs) \
        else "allow"
    # only the profile named first may waive confirmations; files added after it cannot
    confirmations = next(spec.confirmations for path, spec, _ in specs if path == paths[0])
    if fork:
        closed = {r.id for _, spec, _ in specs for r in spec.rules if r.in_fork == "deny"}
        rules = [dataclasses.replace(r, decision="deny") if r.id in closed else r for r in rules]
        name, confirmations = FORK_NAME, "none"
    # the hashes of policies that ask stay as they were
    waived = {"confirmations": confirmations} if confirmations != "ask" else {}
    digest = hashlib.sha256(canonical({
        "name": name, "default": default, **waived,
        "rules": [[r.id, r.decision, r.compiled.source, list(r.programs), list(r.when), r.scope]
                  for r in rules]}).encode()).hexdigest()
    policy = Policy(name, default, rules, "sha256:" + digest[:32], checker, confirmations=confirmations)
    mark = None if verified is None else examples_digest(specs, checker, fork=fork)
    if mark is None or verified is None or not verified.passed(mark):
        check_examples(policy, specs)
        if mark is not None and verified is not None:
            verified.remember(mark)
    return policy


def examples_digest(specs: Sequence[_Spec], checker: SyntaxChecker, *, fork: bool) -> str:
    """What the examples' outcome depends on: every file of the chain as parsed (its rules, their
    examples, its defaults), in order; fork or not; the syntax checker; the engine's code and data."""
    qualname = getattr(checker, "__qualname__", type(checker).__qualname__)
    named = f"{getattr(checker, '__module__', '')}.{qualname}"
    sha = hashlib.sha256(f"{engine_digest()}\0{fork}\0{named}\0".encode())
    for _path, spec, _positions in specs:
        sha.update(spec.model_dump_json().encode() + b"\0")
    return sha.hexdigest()


@functools.cache
def engine_digest() -> str:
    """The policy engine's own code and data, and the libraries it runs on (each file's name, size and
    time): an upgrade runs every example again once. Once per process: a process runs what it imported."""
    root = Path(__file__).parent
    sha = hashlib.sha256()
    for path in sorted(p for p in root.rglob("*") if p.is_file() and "__pycache__" not in p.parts):
        sha.update(path.relative_to(root).as_posix().encode() + b"\0" + path.read_bytes())
    for name in ENGINE_LIBRARIES:
        try:
            origin = importlib.import_module(name).__file__
        except ImportError:
            origin = None
        entries = sorted(os.scandir(Path(origin).parent), key=lambda e: e.name) if origin else []
        for entry in entries:
            if entry.is_file():
                _stamp(sha, f"{name}/{entry.name}", entry.path)
    bash = shutil.which("bash")  # the syntax checker's second opinion
    if bash:
        _stamp(sha, "bash", os.path.realpath(bash))
    return sha.hexdigest()


def _stamp(sha: hashlib._Hash, name: str, path: str) -> None:
    info = os.stat(path)
    sha.update(f"{name}\0{info.st_size}\0{info.st_mtime_ns}\0".encode())


def check_examples(policy: Policy, specs: Sequence[_Spec]) -> None:
    """Every rule's match examples must fire it, and its not_match examples must not."""
    for path, spec, positions in specs:
        for i, rule in enumerate(spec.rules):
            for want, commands in ((True, rule.examples.match), (False, rule.examples.not_match)):
                for command in commands:
                    check = fires_tool if rule.scope == "tool" else fires
                    fired, problem = check(policy, rule.id, command)
                    if problem or fired != want:
                        line, col = positions.get(("rules", i, "examples"),
                                                  positions.get(("rules", i), (1, 1)))
                        what = problem or ("did not match" if want else "matched")
                        msg = (
                            f"{path}:{line}:{col}: rule {rule.id}: example {command!r} {what} "
                            f"(expected {'match' if want else 'not_match'})"
                        )
                        raise PolicyLoadError(
                            msg,
                            file=str(path), rule=rule.id, line=line, column=col)


def fires_tool(policy: Policy, rule_id: str, example: str) -> tuple[bool, str]:
    """(whether tool rule ``rule_id`` matches the call ``example`` describes, problem text or "")."""
    try:
        call, unattended = example_call(example)
    except ValueError as exc:
        return False, f"is not a tool call's facts ({exc})"
    matched, errors = policy.tool_matches(call, unattended=unattended)
    problem = next((e for e in errors if f"rule {rule_id} " in e), "")
    return any(r.id == rule_id for r in matched), problem


def fires(policy: Policy, rule_id: str, command: str) -> tuple[bool, str]:
    """(whether rule ``rule_id`` matches some segment of ``command``, problem text or "")."""
    _decision, reports = policy.explain(command)
    if not reports and _decision.source == "parse_failure":
        return False, f"does not parse: {_decision.reason}"
    for report in reports:
        for err in report.errors:
            if f"rule {rule_id} " in err:
                return False, err
    if any(rule_id in r.matched for r in reports):
        return True, ""
    return rule_id in _decision.rule_ids, ""


def load_policy(profile: str = "standard", files: Sequence[Path] = (),
                checker: SyntaxChecker = bash_n, verified: VerifiedMarks | None = None,
                texts: Mapping[Path, str] | None = None) -> Policy:
    """The shipped ``profile`` plus extra rule ``files`` (their content from ``texts`` when given);
    refuses to load on any failure."""
    return build_policy([profile_path(profile), *files], checker, verified, texts)


def load_fork_policy(profile: str = "standard", files: Sequence[Path] = (),
                     checker: SyntaxChecker = bash_n, verified: VerifiedMarks | None = None,
                     texts: Mapping[Path, str] | None = None) -> Policy:
    """The policy of a fork of a project that runs ``profile`` plus ``files``: the same rules, with
    every deny kept, confirmations waived (nobody is asked; the fork's workspace is a copy), and each
    rule marked ``in_fork: deny`` denying where it would have asked (strict's secret reads)."""
    return build_policy([profile_path(profile), *files], checker, verified, texts, fork=True)
