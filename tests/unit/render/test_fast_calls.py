"""The bundled templates' quicker calls (``render.documents._BundledContext``) render what
Jinja2's own ``Context.call`` renders: every kind of callable a template may call, and every
bundled document of real banks."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import jinja2
import pytest

from tests.conftest import ROOT
from tests.solved import make_build, render_all
from worksheetgen.bank.load import load_banks
from worksheetgen.render import documents
from worksheetgen.render.documents import _BundledContext

CALLS = """\
{% macro box(x, y=2) -%}[{{ x }}|{{ y }}|{{ varargs }}|{{ kwargs }}]{%- endmacro %}
{% macro wrap(x) -%}<{{ caller(x) }}>{%- endmacro %}
{{ box(1) }}{{ box(1, 3) }}{{ box(1, 3, 4, z=5) }}
{% for i in items %}{{ box(i) }}{{ plain(i) }}{{ seen(i) }}{{ envd(i) }}{{ evald(i) }}
{% call(v) wrap(i) %}{{ box(v, y=loop.index) }}{{ seen(v) }}{% endcall %}
{% set inner = i * 10 %}{{ seen(inner) }}{{ loop.cycle('a', 'b') }}{% endfor %}
{{ words.upper() }}{{ ",".join(["x", "y"]) }}{{ obj(3) }}{{ "%d" | format(stop() is undefined) }}
{{ bound(2) }}{{ range(3) | list }}{{ dict(a=1) }}
"""


class Callable:
    def __call__(self, x: int) -> str:
        return f"obj{x}"


class Held:
    def __init__(self, k: int) -> None:
        self.k = k

    def times(self, x: int) -> int:
        return self.k * x


@jinja2.pass_context
def seen(context: Any, x: Any) -> str:
    # what the active context holds (a loop's variables included) and the argument
    return f"{x}:{context.get('inner', '-')}:{context.get('items')}"


@jinja2.pass_environment
def envd(env: jinja2.Environment, x: Any) -> str:
    return f"{type(env).__name__}{x}"


@jinja2.pass_eval_context
def evald(eval_ctx: Any, x: Any) -> str:
    return f"{eval_ctx.autoescape}{x}"


def stop() -> None:
    raise StopIteration


def rendered(context_class: type[jinja2.runtime.Context] | None, autoescape: bool) -> str:
    env = jinja2.Environment(autoescape=autoescape, undefined=jinja2.StrictUndefined)
    if context_class is not None:
        env.context_class = context_class
    env.globals.update(
        plain=lambda x: f"<p{x}>",
        seen=seen,
        envd=envd,
        evald=evald,
        stop=stop,
        obj=Callable(),
        bound=Held(7).times,
    )
    return env.from_string(CALLS).render(items=[1, 2, 3], words="abc")


@pytest.mark.parametrize("autoescape", [False, True])
def test_every_kind_of_call_renders_as_jinja2s_own(autoescape: bool) -> None:
    mine = rendered(_BundledContext, autoescape)
    assert mine == rendered(None, autoescape)
    # the template really called each kind (a macro with a caller inside a loop, a function
    # that asks for the context and sees the loop's variables, a StopIteration)
    assert "<[2|2|()|{}]2:-:[1, 2, 3]>" in mine and "20:20:[1, 2, 3]" in mine
    assert "obj31" in mine and "14[0, 1, 2]" in mine and f"{autoescape}1" in mine


@pytest.fixture
def jinja2s_own_calls() -> Iterator[None]:
    """The bundled environments with Jinja2's own ``Context.call``, then back."""
    envs = [documents.environment(fmt) for fmt in ("latex", "markdown", "html")]
    assert all(env.context_class is _BundledContext for env in envs)
    for env in envs:
        env.context_class = jinja2.runtime.Context
    try:
        yield
    finally:
        for env in envs:
            env.context_class = _BundledContext


BANKS = sorted((ROOT / "banks").glob("*.yaml"))


@pytest.mark.parametrize("bank", BANKS, ids=lambda p: p.stem)
def test_bundled_documents_render_as_with_jinja2s_own_calls(
    bank: Any, request: pytest.FixtureRequest
) -> None:
    builds = [make_build(load_banks([bank]), seed) for seed in (3, 11)]
    fast = [render_all(build) for build in builds]
    request.getfixturevalue("jinja2s_own_calls")
    slow = [render_all(build) for build in builds]
    assert fast == slow
    assert all(len(docs) >= 4 for docs in fast)
