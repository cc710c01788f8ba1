"""``canal policy``: check, explain, test, lint and show command policies."""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import click

from canal.cli.shared import App, command_text, echo_json, pass_app
from canal.core.errors import ExitCode
from canal.policy import PROFILES, Decision, Policy, build_policy, load_policy
from canal.policy.loader import profile_path
from canal.policy.outside import WORKSPACE
from canal.policy.rules import read_policy_file

_EXIT = {"allow": 0, "confirm": ExitCode.CONFIRMATION_REQUIRED, "deny": ExitCode.POLICY_DENIED}


@dataclass(frozen=True)
class _Chosen:
    policy: Policy
    label: str  # what to call it
    workspace: str  # where the workspace is mounted: the project's sandbox.workdir, or the default


def _load(app: App, profile: str, files: tuple[Path, ...]) -> _Chosen:
    """The policy to decide with: exactly the one ``canal run`` uses in this project (canal.yaml's
    profile and rule files, as approved, and its workspace folder), unless --profile or --policy asks
    for another."""
    if not profile and not files:
        config = app.canal.config
        name = " + ".join([config.policy.profile, *(str(f) for f in config.policy.files)])
        return _Chosen(app.canal.policy, f"this project's ({name})", config.sandbox.workdir)
    if files and profile == "":
        return _Chosen(build_policy(list(files)), "the files given (not this project's policy)", WORKSPACE)
    asked = f"{profile} (asked for; not this project's policy)"
    return _Chosen(load_policy(profile or "standard", files), asked, WORKSPACE)


def _policy_options(fn: Any) -> Any:
    fn = click.option("--policy", "files", multiple=True, type=click.Path(exists=True, dir_okay=False,
                      path_type=Path), help="A policy file (alone, or added to --profile). Repeatable.")(fn)
    fn = click.option("--profile", default="",
                      help=f"Decide with a shipped profile ({', '.join(PROFILES)}) instead of this project's "
                      "policy.")(fn)
    fn = click.option("--cwd", default=None,
                      help="The session's working directory (canal run decides with the session's real "
                           "one; a refusal's hint gives it). Default: the workspace folder (/workspace, "
                           "or canal.yaml's sandbox.workdir).")(fn)
    fn = click.option("--session-env", "session_env", multiple=True, metavar="NAME[=VALUE]",
                      help="An exported variable the session changed (PATH with its value), as canal run "
                           "decides with them. Repeatable.")(fn)
    return click.option("--unattended", is_flag=True,
                        help="Decide as an unattended run (confirm -> deny); default: as canal.yaml "
                             "says.")(fn)


def _line(d: Decision) -> str:
    rules = ",".join(d.rule_ids) or "-"
    return f"{d.action.upper()} [{d.source}] rules={rules} segments={d.segments}"


def _render(d: Decision, label: str, cwd: str, env: dict[str, str]) -> None:
    click.echo(_line(d))
    for reason in d.reasons:
        click.echo(f"  reason: {reason}")
    if d.segment and d.action != "allow":
        click.echo(f"  segment: {d.segment}")
    for target in d.targets:
        click.echo(f"  target: {target}")
    click.echo(f"  cwd: {cwd}")
    if env:
        click.echo(f"  session: {' '.join(f'{k}={v}' if v else k for k, v in sorted(env.items()))}")
    click.echo(f"  policy: {label} {d.policy_hash}")


def _session_env(given: tuple[str, ...]) -> dict[str, str]:
    """``NAME[=VALUE]`` options as the policy takes the session's changed variables."""
    return dict((name, value) for name, _, value in (item.partition("=") for item in given))


@click.group("policy")
def policy_group() -> None:
    """Decide, explain and test command policies (CEL rules over parsed shell commands)."""


@policy_group.command("check")
@_policy_options
@click.option("--json", "as_json", is_flag=True, help="Print the decision as JSON.")
@click.option("--stdin", "from_stdin", is_flag=True,
              help="Read one JSON-encoded command string per line; write one JSON decision per line.")
@click.argument("command", nargs=-1)
@pass_app
def check(app: App, profile: str, files: tuple[Path, ...], cwd: str | None, session_env: tuple[str, ...],
          unattended: bool, as_json: bool, from_stdin: bool, command: tuple[str, ...]) -> None:
    """Decide allow | confirm | deny for COMMAND with the policy canal run uses here (canal.yaml's
    profile and rule files). Exit 0 allow, 120 confirm, 121 deny. COMMAND's words mean what they mean
    to canal run: one is a command line, several an exact argv.

    Example: canal policy check -- rm -rf build/
    """
    chosen = _load(app, profile, files)
    unattended = unattended or _project_unattended(app, profile, files)
    env = _session_env(session_env)
    cwd = cwd or chosen.workspace
    if from_stdin:
        _check_stream(chosen, cwd, unattended, env)
        return
    if not command:
        msg = "give a command after --, e.g. canal policy check -- git status"
        raise click.UsageError(msg)
    decision = chosen.policy.decide(command_text(command), cwd=cwd, unattended=unattended, env=env,
                                    workspace=chosen.workspace)
    if as_json:
        echo_json({**decision.to_json(), "cwd": cwd, "session_env": env})
    else:
        _render(decision, chosen.label, cwd, env)
    sys.exit(_EXIT[decision.action])


def _project_unattended(app: App, profile: str, files: tuple[Path, ...]) -> bool:
    return not profile and not files and app.canal.unattended


def _check_stream(chosen: _Chosen, cwd: str, unattended: bool, env: dict[str, str]) -> None:
    for raw in sys.stdin:
        if not raw.strip():
            continue
        try:
            text = json.loads(raw)
        except json.JSONDecodeError:
            text = None
        if not isinstance(text, str):
            click.echo(json.dumps({"decision": "deny", "rules": [], "segments": 0,
                                   "reason": "input line is not a JSON string"}))
            continue
        d = chosen.policy.decide(text, cwd=cwd, unattended=unattended, env=env, workspace=chosen.workspace)
        click.echo(json.dumps({"decision": d.action, "rules": list(d.rule_ids), "reason": d.reason,
                               "segments": d.segments, "source": d.source}))


@policy_group.command("explain")
@_policy_options
@click.option("--json", "as_json", is_flag=True, help="Print decision, segments and facts as JSON.")
@click.argument("command", nargs=-1, required=True)
@pass_app
def explain(app: App, profile: str, files: tuple[Path, ...], cwd: str | None, session_env: tuple[str, ...],
            unattended: bool, as_json: bool, command: tuple[str, ...]) -> None:
    """Show every segment of COMMAND, its facts, and which rules matched (the policy canal run uses).

    Example: canal policy explain -- sudo rm -rf /tmp/x
    """
    chosen = _load(app, profile, files)
    unattended = unattended or _project_unattended(app, profile, files)
    env = _session_env(session_env)
    cwd = cwd or chosen.workspace
    decision, reports = chosen.policy.explain(command_text(command), cwd=cwd, unattended=unattended, env=env,
                                              workspace=chosen.workspace)
    if as_json:
        echo_json({"decision": decision.to_json(), "segments": [
            {"facts": r.facts, "matched": list(r.matched), "errors": list(r.errors), "action": r.action}
            for r in reports]})
        return
    _render(decision, chosen.label, cwd, env)
    for i, r in enumerate(reports, 1):
        f = r.facts
        click.echo(f"segment {i}: {r.action.upper()} matched={','.join(r.matched) or '-'}  {f['text']}")
        for key in ("program", "path", "trusted_path", "flags", "long_flags", "positionals", "paths",
                    "redirects", "assignments", "wrappers", "context", "opaque", "opaque_name",
                    "code_exec", "dynamic_args", "cwd"):
            click.echo(f"    {key}: {json.dumps(f[key])}")
        for err in r.errors:
            click.echo(f"    error: {err}")


@policy_group.command("test")
@click.argument("files", nargs=-1, required=True,
                type=click.Path(exists=True, dir_okay=False, path_type=Path))
def test_cmd(files: tuple[Path, ...]) -> None:
    """Load each policy file (running every rule's match / not_match examples) and report.

    Example: canal policy test policy/profiles/standard.yaml
    """
    for path in files:
        policy = build_policy([path])
        rules = read_policy_file(path)[0].rules
        count = sum(len(r.examples.match) + len(r.examples.not_match) for r in rules)
        click.echo(f"ok {path}: {len(policy.rules)} rules, {count} examples passed, hash {policy.hash}")


@policy_group.command("lint")
@click.argument("file", type=click.Path(exists=True, dir_okay=False, path_type=Path))
def lint(file: Path) -> None:
    """Validate a policy file: schema, CEL compilation and examples. Same checks as loading.

    Example: canal policy lint my-rules.yaml
    """
    policy = build_policy([file])
    missing = [r.id for r in read_policy_file(file)[0].rules if not r.examples.match]
    click.echo(f"ok {file}: {len(policy.rules)} rules")
    for rule_id in missing:
        click.echo(f"warning: rule {rule_id} has no match examples", err=True)


@policy_group.command("show")
@click.option("--profile", default="", help="Show the rules of one profile.")
@click.option("--json", "as_json", is_flag=True, help="Print as JSON.")
@pass_app
def show(app: App, profile: str, as_json: bool) -> None:
    """Say which policy this project's commands are decided by (and its hash); list the shipped
    profiles, or the rules of one profile.

    Example: canal policy show --profile strict
    """
    project = app.canal.policy
    settings = app.canal.config.policy
    mine = {"profile": settings.profile, "files": [str(f) for f in settings.files], "hash": project.hash}
    names = [profile] if profile else list(PROFILES)
    data: list[dict[str, Any]] = []
    for name in names:
        policy = load_policy(name)
        spec, _ = read_policy_file(profile_path(name))
        data.append({"profile": name, "default": policy.default, "hash": policy.hash,
                     "description": spec.description, "file": str(profile_path(name)),
                     "rules": [{"id": r.id, "decision": r.decision, "programs": list(r.programs),
                                "message": r.message} for r in policy.rules]})
    if as_json:
        echo_json({"status": "ok", "project": mine, "profiles": data})
        return
    click.echo(f"this project: {' + '.join([settings.profile, *mine['files']])}, hash {project.hash} "
               "(what canal run and canal policy check decide with)")
    for p in data:
        click.echo(f"{p['profile']} (default {p['default']}, {len(p['rules'])} rules): {p['description']}")
        if profile:
            for r in p["rules"]:
                click.echo(f"  {r['decision']:<7} {r['id']:<26} {r['message']}")



def register(cli: click.Group) -> None:
    cli.add_command(policy_group)
