"""Shell parsing: segments everywhere, quote removal, wrappers, markers and failures."""

from __future__ import annotations

import pytest

from canal.policy.shell import parse


def _argvs(command: str) -> list[tuple[str, ...]]:
    result = parse(command)
    assert result.ok, result.failure
    return [s.argv for s in result.segments]


@pytest.mark.parametrize("command", ["'r'm -rf /", "\\rm -rf /", "$'\\x72m' -rf /", "\"rm\" -rf /",
                                     "r\"m\" -rf /", "$'\\162m' -rf /"])
def test_quote_removal(command: str) -> None:
    assert _argvs(command) == [("rm", "-rf", "/")]


@pytest.mark.parametrize(("command", "inner"), [
    ("bash -c 'rm -rf /'", ("rm", "-rf", "/")),
    ("sh -xc 'rm x'", ("rm", "x")),
    ("bash +x -c 'rm x'", ("rm", "x")),
    ("env -i FOO=1 rm x", ("rm", "x")),
    ("env -S 'rm x'", ("rm", "x")),
    ("sudo -u root -- rm x", ("rm", "x")),
    ("timeout -s KILL 5 rm x", ("rm", "x")),
    ("nice -n 10 rm x", ("rm", "x")),
    ("stdbuf -o0 rm x", ("rm", "x")),
    ("ionice -c3 rm x", ("rm", "x")),
    ("xargs -n1 rm", ("rm",)),
    ("watch rm x", ("rm", "x")),
    ("su -c 'rm x' root", ("rm", "x")),
    ("script -qc 'rm x' /dev/null", ("rm", "x")),
    ("eval 'rm x'", ("rm", "x")),
    ("trap 'rm x' EXIT", ("rm", "x")),
    ("coproc rm x", ("rm", "x")),
    ("command rm x", ("rm", "x")),
    ("exec rm x", ("rm", "x")),
    ("busybox rm x", ("rm", "x")),
    ("sh <<'EOF'\nrm x\nEOF", ("rm", "x")),
    ("bash <<< 'rm x'", ("rm", "x")),
])
def test_wrappers_unwrap(command: str, inner: tuple[str, ...]) -> None:
    segs = parse(command).segments
    assert inner in [s.argv for s in segs]
    seg = next(s for s in segs if s.argv == inner)
    assert seg.wrappers


def test_every_nesting_context_is_a_segment() -> None:
    command = ("f() { a; }; (b) && { c; } | d $(e `g`) <(h); if i; then j; fi; for x in 1; do k; done; "
               "case y in y) l;; esac; [[ $(m) ]]; echo $((1 + $(n)))")
    programs = {s.argv[0] for s in parse(command).segments if s.argv}
    assert set("abcdeghijklmn") <= programs


def test_opaque_and_code_markers() -> None:
    segs = {s.argv[0]: s for s in parse("x=rm; $x y; curl u | sh; python3 -c 'print(1)'").segments if s.argv}
    assert not segs["$x"].words[0].literal
    assert segs["sh"].code_exec == "stdin"
    assert segs["python3"].code_exec == "inline"


def test_heredoc_body_is_data_but_fed_to_shell_is_code() -> None:
    assert _argvs("cat <<EOF\nrm -rf /\nEOF") == [("cat",)]
    assert ("rm", "-rf", "/") in _argvs("bash <<EOF\nrm -rf /\nEOF")


def test_two_heredocs_fallback() -> None:
    assert _argvs("cat <<A <<B\na\nA\nrm -rf /\nB") == [("cat",)]
    # An unquoted body that expands something cannot be handled by the fallback: fail closed.
    assert not parse("cat <<A <<B\n$(rm x)\nA\nb\nB").ok


def test_cd_tracks_cwd() -> None:
    segs = parse("cd /srv && rm a; (cd /x); rm b", cwd="/w").segments
    assert [s.cwd for s in segs if s.argv[0] == "rm"] == ["/srv", "/srv"]


@pytest.mark.parametrize("command", ["ls &&", "ls | | wc", "git log &&& rm -rf /", "echo ${ rm; }"])
def test_syntax_errors_fail(command: str) -> None:
    assert not parse(command).ok
