"""Array subscripts bash evaluates as arithmetic run the substitutions in them (``a[$(cmd)]``).

A string is checked for them where bash evaluates it (arithmetic, ``[[ -eq ]]``, ``test -v``, ``let``,
``printf -v``, ``read``, ``unset``, ``declare``, ``wait -p``, array subscripts and ``${!x}``...), where
it is stored in a variable (any assignment, ``for``, ``read``/``mapfile``, ``printf -v``), and anywhere
in a command that evaluates a run-time value (``$((x))``, ``${!x}``, ``unset $x``...) or stores run-time
data in a variable. Elsewhere it is data: ``echo 'a[$(rm -rf /)]'`` runs nothing.
"""

from __future__ import annotations

import pytest

from canal.policy import Policy

RUN = "a[$(rm -rf /)]"  # what bash would run: rm -rf / (rm-root: deny)


@pytest.mark.parametrize("command", [
    f"echo '{RUN}'",
    f"grep -n '{RUN}' notes.txt",
    f"printf '%s\\n' '{RUN}'",
    f"echo '{RUN}' | wc -c",
    f"[ -f '{RUN}' ]",
    f"echo '{RUN}'; pwd",
    f"cd docs && echo '{RUN}'",
])
def test_a_subscript_in_plain_data_runs_nothing(standard: Policy, strict: Policy, command: str) -> None:
    assert standard.decide(command).action == "allow", standard.decide(command).to_json()
    assert strict.decide(command).action == "allow", strict.decide(command).to_json()


def test_commit_messages_and_patterns_are_data(standard: Policy) -> None:
    for command in (f"git commit -m 'fix {RUN} in the parser'", f"sed -n '/{RUN}/p' f",
                    f"echo '{RUN}' \"$HOME\"", f"echo \"$USER:\" '{RUN}'",
                    f"jq '.items' data.json > '{RUN}.json'"):
        assert standard.decide(command).action == "allow", command


@pytest.mark.parametrize("command", [
    f"(( '{RUN}' ))",
    f"echo $(( '{RUN}' ))",
    f"arr=(1); echo ${{arr['{RUN}']}}",
    f"A['{RUN}']=1",
    f"for x in '{RUN}'; do echo $((x)); done",
    f"for x in '{RUN}'; do export x; done",
    f"echo '{RUN}' | {{ read x; echo $((x)); }}",
    f"echo '{RUN}' | {{ read x; export x; }}",
    f"set -- '{RUN}'; echo $(($1))",
    f"set -- '{RUN}'; export X=\"$1\"",
    f"f() {{ echo $(($1)); }}; f '{RUN}'",
    f"x=$(echo '{RUN}'); echo $((x))",
    f"x=$(echo '{RUN}'); export x",
    f"mapfile -t a < <(echo '{RUN}'); export X=\"${{a[0]}}\"",
    f"printf -v x %s '{RUN}'; export x",
    f"x='{RUN}'; export x",
    f"declare -n r='{RUN}'; echo $r",
    f"x='{RUN}'; echo ${{!x}}",
    f"set -- '{RUN}'; unset $1",
    f"set -- '{RUN}'; test -v $1",
    f"[[ '{RUN}' -eq 0 ]]",
    f"let '{RUN}'",
    f"printf -v '{RUN}' x",
    f"read '{RUN}' < /dev/null",
    f"unset '{RUN}'",
    f"declare -i x='{RUN}'",
    f"sleep 1 & wait -n -p '{RUN}'",
    f"echo '{RUN}' > f; read x < f; echo $((x))",
    f"bash -c 'echo $(($0))' '{RUN}'",
    "unset 'a[$((rm -rf /) )]'",
    f"x='{RUN}'; echo ${{y:-$((x))}}",
])
def test_a_subscript_bash_evaluates_is_decided_as_its_command(standard: Policy, strict: Policy,
                                                             command: str) -> None:
    assert standard.decide(command).action == "deny", standard.decide(command).to_json()
    assert strict.decide(command).action == "deny", strict.decide(command).to_json()
