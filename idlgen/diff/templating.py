"""Jinja environments for diff report templates: built-in ones, and ``--template FILE`` in the
immutable sandbox (the built-in templates are the package's own code; the sandbox's checks on
every attribute access cost ~70 % of rendering a long text report: 0.28 -> 0.08 s for
20,000 findings).

Schema-originated strings are data: they are only ever passed to templates as values, never
compiled. Each environment belongs to one output context (``text``, ``markdown``,
``github``, ``html``): every ``{{ value }}`` is escaped for that context unless a filter already
escaped it (filters return ``markupsafe.Markup``, which the environment passes through). The
filters are the only escaping functions (:mod:`idlgen.escaping`), available in every context:

``md`` (inline markdown; optional clip length), ``md_code`` (code span), ``md_message`` (finding
message: prose with code spans), ``text`` (one visible line), ``gh_data`` / ``gh_prop``
(workflow-command message / property), ``html``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import jinja2
from jinja2.sandbox import ImmutableSandboxedEnvironment
from markupsafe import Markup, escape

from ..resources import resource_dir
from ..escaping import (
    escape_github_data,
    escape_github_prop,
    escape_md,
    escape_md_code,
    escape_md_message,
    escape_text,
)

__all__ = [
    "CONTEXTS",
    "environment",
    "render_builtin",
    "render_user",
    "context_for",
    "TemplateError",
]

TemplateError = jinja2.TemplateError


def _html(s: Any) -> str:
    return str(escape(str(s)))


ESCAPERS: Mapping[str, Callable[[str], str]] = {
    "text": escape_text,
    "markdown": escape_md,
    "github": escape_github_data,
    "html": _html,
}
CONTEXTS = tuple(ESCAPERS)


def _safe(fn: Callable[..., str]) -> Callable[..., Markup]:
    def filt(value: Any, *args: Any) -> Markup:
        if isinstance(value, Markup):
            return value
        return Markup(fn("" if value is None else str(value), *args))

    return filt


_FILTERS: Mapping[str, Callable[..., Markup]] = {
    "md": _safe(escape_md),
    "md_code": _safe(escape_md_code),
    "md_message": _safe(escape_md_message),
    "text": _safe(escape_text),
    "gh_data": _safe(escape_github_data),
    "gh_prop": _safe(escape_github_prop),
    "html": _safe(_html),
}


def environment(
    context: str, search: list[Path] | None = None, *, sandboxed: bool = True
) -> jinja2.Environment:
    esc = ESCAPERS[context]

    def finalize(value: Any) -> str:
        if isinstance(value, Markup):
            return str(value)
        return esc("" if value is None else str(value))

    kind = ImmutableSandboxedEnvironment if sandboxed else jinja2.Environment
    env = kind(
        loader=jinja2.FileSystemLoader([str(p) for p in (search or [])] + [_builtin_dir()]),
        autoescape=False,  # context escaping happens in ``finalize``; HTML autoescape would be wrong for markdown
        finalize=finalize,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )
    env.filters.update(_FILTERS)
    return env


def _builtin_dir() -> str:
    return str(resource_dir("templates") / "diff")


_ENVS: dict[str, jinja2.Environment] = {}


def render_builtin(name: str, context: str, **values: Any) -> str:
    env = _ENVS.get(context)
    if env is None:
        env = _ENVS[context] = environment(context, sandboxed=False)
    return env.get_template(name).render(**values)


def context_for(path: Path) -> str:
    """The escaping context of a user template, from its file name (``.md``/``.markdown``
    → markdown, ``.html``/``.htm`` → html, else text); a trailing ``.j2``/``.jinja`` is ignored."""
    suffixes = [s.lower() for s in path.suffixes]
    while suffixes and suffixes[-1] in (".j2", ".jinja", ".jinja2"):
        suffixes.pop()
    last = suffixes[-1] if suffixes else ""
    if last in (".md", ".markdown"):
        return "markdown"
    if last in (".html", ".htm"):
        return "html"
    return "text"


def render_user(path: Path, **values: Any) -> str:
    """Render a user's template file; raises ``jinja2.TemplateError`` (incl. sandbox
    ``SecurityError``) or ``OSError``."""
    env = environment(context_for(path), [path.parent])
    source = path.read_text(encoding="utf-8")
    return env.from_string(source).render(**values)
