"""Templates: whole values keep their type, missing references are errors, argv stays argv."""

from __future__ import annotations

import pytest

from canal.workflows.errors import TemplateError
from canal.workflows.templates import (
    Context,
    parse_ref,
    refs_in,
    render_argv,
    render_body,
    render_env,
    render_value,
)

CTX = Context(
    gate={"ask": {"name": "demo app", "count": 3, "flag": True, "token": "tok-123456"}},
    results={"build": {"id": "b-1", "tags": ["x", "y"], "nested": {"n": 0}, "items": [{"k": "v"}]},
             "text": "plain output"},
    sensitive=frozenset({("ask", "token")}),
)


def test_whole_value_keeps_its_type() -> None:
    assert render_value("{{gate.ask.count}}", CTX) == 3
    assert render_value(" {{ gate.ask.flag }} ", CTX) is True
    assert render_value("{{result.build.tags}}", CTX) == ["x", "y"]
    assert render_value("{{result.build}}", CTX)["id"] == "b-1"
    assert render_value("{{result.build.items.0.k}}", CTX) == "v"


def test_interpolation_and_nesting() -> None:
    value = {"label": "{{gate.ask.name}} #{{gate.ask.count}}", "list": ["{{result.build.nested.n}}", 7]}
    assert render_value(value, CTX) == {"label": "demo app #3", "list": [0, 7]}
    assert render_value("tags={{result.build.tags}} ok={{gate.ask.flag}}", CTX) == 'tags=["x","y"] ok=true'


def test_missing_reference_is_an_error_never_empty() -> None:
    with pytest.raises(TemplateError, match="has no gate value 'nope'"):
        render_value("{{gate.ask.nope}}", CTX)
    with pytest.raises(TemplateError, match="has no result yet"):
        render_value("x {{result.other.id}}", CTX)
    with pytest.raises(TemplateError, match="no 'missing'"):
        render_value("{{result.build.missing}}", CTX)
    with pytest.raises(TemplateError, match="no '5'"):
        render_value("{{result.build.tags.5}}", CTX)


def test_argv_elements_stay_single_arguments_whatever_they_contain() -> None:
    ctx = Context(gate={"ask": {"name": "a; rm -rf / $(x) `y` 'q'"}})
    assert render_argv(["echo", "{{gate.ask.name}}", "--n={{gate.ask.name}}"], ctx) == (
        "echo", "a; rm -rf / $(x) `y` 'q'", "--n=a; rm -rf / $(x) `y` 'q'")
    assert render_argv(["x", "{{gate.ask.count}}"], CTX) == ("x", "3")
    with pytest.raises(TemplateError, match="single value"):
        render_argv(["x", "{{result.build.tags}}"], CTX)
    assert render_env({"N": "{{gate.ask.count}}"}, CTX) == {"N": "3"}


def test_bad_template_syntax() -> None:
    with pytest.raises(TemplateError, match="is not a template"):
        refs_in("{{params.x}}")
    with pytest.raises(TemplateError, match="names no field"):
        parse_ref("gate.ask")
    assert refs_in("Jinja {{ other }} is left alone", strict=False) == []
    assert [str(r) for r in refs_in("a {{gate.ask.name}} b {{result.build}}")] == [
        "{{gate.ask.name}}", "{{result.build}}"]


def test_body_masks_sensitive_values() -> None:
    assert render_body("token {{gate.ask.token}} for {{gate.ask.name}}", CTX) == "token **** for demo app"
    assert render_value("{{gate.ask.token}}", CTX) == "tok-123456"
