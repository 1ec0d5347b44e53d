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

User templates (``--template FILE``) run in Jinja's ``ImmutableSandboxedEnvironment`` with
``trim_blocks``, ``lstrip_blocks``, ``keep_trailing_newline`` and ``StrictUndefined`` (an
undefined name is an error, not an empty string), and:

* ``{% include %}``, ``{% import %}`` and ``{% extends %}`` load only regular files of at most
  1 MiB from FILE's own directory (below it) and from the built-in templates; a name whose real
  path leaves those directories (``..``, an absolute path, a symlink out) is not found;
* the output is at most ``MAX_OUTPUT`` characters (16 Mi) and rendering at most ``MAX_SECONDS``
  (10 s, where ``SIGALRM`` exists); ``*``, ``**``, ``%``, ``+``, ``~``, method calls and filters
  check their result size before making it, and on Linux the render runs under an address-space
  limit of ``MAX_MEMORY`` (512 MiB) more than the process had: exceeding any bound is a
  ``TemplateLimitError``;
* errors are reported as ``FILE:LINE: message`` (syntax errors and errors while rendering).
"""

from __future__ import annotations

import os
import re
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from types import TracebackType
from typing import Any

import jinja2
from jinja2.compiler import CodeGenerator, Frame
from jinja2 import nodes
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
    "TemplateLimitError",
    "MAX_OUTPUT",
    "MAX_SECONDS",
    "MAX_MEMORY",
]

TemplateError = jinja2.TemplateError
MAX_OUTPUT = 16 << 20  # characters of output (and of any one value made while rendering)
MAX_SECONDS = 10.0
MAX_MEMORY = 512 << 20  # bytes of address space a render may add (Linux)
MAX_TEMPLATE_FILE = 1 << 20


class TemplateLimitError(jinja2.TemplateError):
    """A user template exceeded a bound (output size, value size, time, memory)."""


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


class _ConfinedLoader(jinja2.BaseLoader):
    """Templates from a few directories only: a name whose real path leaves its directory
    (``..``, absolute, a symlink to elsewhere) is not found; only regular files are read."""

    def __init__(self, dirs: list[str]) -> None:
        self.dirs = [os.path.realpath(d) for d in dirs]

    def get_source(
        self, environment: jinja2.Environment, template: str
    ) -> tuple[str, str, Callable[[], bool]]:
        from ..safe_read import read_regular

        pieces = jinja2.loaders.split_template_path(template)  # refuses '..'
        for root in self.dirs:
            path = os.path.join(root, *pieces)
            real = os.path.realpath(path)
            if os.path.commonpath([real, root]) != root:
                continue  # a symlink out of the directory: never followed
            data = read_regular(Path(real), limit=MAX_TEMPLATE_FILE)
            if data is None:
                continue
            try:
                source = data.decode("utf-8")
            except UnicodeDecodeError as e:
                raise jinja2.TemplateSyntaxError(
                    f"not UTF-8 (byte {e.start})", 1, template, real
                ) from None
            mtime = os.path.getmtime(real)
            return source, real, lambda: os.path.getmtime(real) == mtime
        raise jinja2.TemplateNotFound(template)

    def list_templates(self) -> list[str]:  # pragma: no cover - not used
        return []


# widths and precisions of %-formats and format specs ('%0999999999d', '{:>999999999}')
_PERCENT_SPEC = re.compile(r"%[-+ #0*]*(\d*)(?:\.(\d*))?")
_BRACE_SPEC = re.compile(r"\{[^{}]*?:[^{}0-9]*(\d*)(?:[,_])?(?:\.(\d*))?[^{}]*\}")


def _format_widths(s: str) -> int:
    widest = 0
    for rx, mark in ((_PERCENT_SPEC, "%"), (_BRACE_SPEC, "{")):
        if mark in s:
            for groups in rx.findall(s):
                widest = max([widest, *(int(g) for g in groups if g)])
    return widest


def _check_size(n: int) -> None:
    if n > MAX_OUTPUT:
        raise TemplateLimitError(f"a value would be {n:,} characters (limit {MAX_OUTPUT:,})")


def _size(v: Any) -> int:
    return len(v) if isinstance(v, (str, bytes, list, tuple)) else 0


def _check_args(args: tuple[Any, ...], kwargs: Mapping[str, Any]) -> None:
    for a in (*args, *kwargs.values()):
        if isinstance(a, int) and not isinstance(a, bool) and abs(a) > MAX_OUTPUT:
            raise TemplateLimitError(f"argument {a:,} is too large (limit {MAX_OUTPUT:,})")
        if isinstance(a, str) and ("%" in a or "{" in a) and _format_widths(a) > MAX_OUTPUT:
            raise TemplateLimitError(f"a width or precision in {a[:40]!r} is too large")


class _BoundedSandbox(ImmutableSandboxedEnvironment):
    """The immutable sandbox, with every operation that can make a large value from small
    ones checked before it runs."""

    intercepted_binops = frozenset(["*", "**", "%", "+"])

    def call_binop(self, context: Any, operator: str, left: Any, right: Any) -> Any:
        if operator == "*":
            for seq, n in ((left, right), (right, left)):
                if isinstance(n, int) and _size(seq):
                    _check_size(_size(seq) * max(n, 0))
        elif operator == "**":
            if isinstance(left, int) and isinstance(right, int) and abs(left) > 1:
                if right > 4096:
                    raise TemplateLimitError(f"exponent {right:,} is too large")
        elif operator == "+":
            _check_size(_size(left) + _size(right))
        elif operator == "%" and isinstance(left, str):
            _check_args((left,), {})
            vals = right if isinstance(right, tuple) else (right,)
            _check_size(len(left) + sum(len(str(v)) if isinstance(v, str) else 32 for v in vals))
        return super().call_binop(context, operator, left, right)

    def call(__self, __context: Any, __obj: Any, *args: Any, **kwargs: Any) -> Any:  # noqa: N805
        _check_args(args, kwargs)
        owner = getattr(__obj, "__self__", None)
        name = getattr(__obj, "__name__", "")
        if isinstance(owner, str):
            if name == "replace" and len(args) >= 2 and isinstance(args[0], str) and args[0]:
                grow = max(len(str(args[1])) - len(args[0]), 0)
                _check_size(len(owner) + owner.count(args[0]) * grow)
            elif name == "join" and args:
                items = list(args[0]) if not isinstance(args[0], (str, bytes)) else [args[0]]
                _check_size(sum(_size(i) for i in items) + len(owner) * len(items))
                args = (items, *args[1:])
        return super().call(__context, __obj, *args, **kwargs)

    def wrap_str_format(self, value: Any) -> Any:
        """``str.format`` / ``format_map`` (the sandbox wraps them on attribute access)."""
        owner = getattr(value, "__self__", None)
        if isinstance(owner, str) and _format_widths(owner) > MAX_OUTPUT:
            raise TemplateLimitError(f"a width or precision in {owner[:40]!r} is too large")
        return super().wrap_str_format(value)

    def bounded_concat(self, values: tuple[Any, ...]) -> str:
        """``a ~ b``: the joined size is checked first."""
        parts = [v if isinstance(v, str) else str(v) for v in values]
        _check_size(sum(map(len, parts)))
        return "".join(parts)


class _BoundedCodeGenerator(CodeGenerator):
    def visit_Concat(self, node: nodes.Concat, frame: Frame) -> None:
        self.write("environment.bounded_concat((")
        for arg in node.nodes:
            self.visit(arg, frame)
            self.write(", ")
        self.write("))")


_BoundedSandbox.code_generator_class = _BoundedCodeGenerator


def _bounded_filter(fn: Callable[..., Any]) -> Callable[..., Any]:
    def filt(*args: Any, **kwargs: Any) -> Any:
        _check_args(args[1:], kwargs)
        for a in args[:2]:  # the value (after an eval-context/environment argument)
            if isinstance(a, (list, tuple)):
                _check_size(sum(_size(i) for i in a))
        out = fn(*args, **kwargs)
        if isinstance(out, str):
            _check_size(len(out))
        return out

    for attr in ("jinja_pass_arg",):
        if hasattr(fn, attr):
            setattr(filt, attr, getattr(fn, attr))
    return filt


def environment(
    context: str, search: list[Path] | None = None, *, sandboxed: bool = True
) -> jinja2.Environment:
    esc = ESCAPERS[context]

    def finalize(value: Any) -> str:
        if isinstance(value, Markup):
            return str(value)
        return esc("" if value is None else str(value))

    kind = _BoundedSandbox if sandboxed else jinja2.Environment
    dirs = [str(p) for p in (search or [])] + [_builtin_dir()]
    env = kind(
        loader=_ConfinedLoader(dirs) if sandboxed else jinja2.FileSystemLoader(dirs),
        autoescape=False,  # context escaping happens in ``finalize``; HTML autoescape would be wrong for markdown
        finalize=finalize,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )
    env.filters.update(_FILTERS)
    if sandboxed:
        for k, fn in list(env.filters.items()):
            env.filters[k] = _bounded_filter(fn)
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
    """Render a user's template file within the bounds above; raises ``jinja2.TemplateError``
    (incl. sandbox ``SecurityError`` and ``TemplateLimitError``) whose message starts with
    ``FILE:LINE:`` when the line is known, or ``OSError``."""
    from ..safe_read import read_regular

    env = environment(context_for(path), [path.parent])
    data = read_regular(path, limit=MAX_TEMPLATE_FILE)
    if data is None:
        if not path.exists():
            raise FileNotFoundError(2, "no such file", str(path))
        raise TemplateError(f"{path}: not a regular file of at most {MAX_TEMPLATE_FILE:,} bytes")
    try:
        source = data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise TemplateError(f"{path}: not UTF-8 (byte {e.start})") from None
    try:
        # compiled under the user's file name: syntax errors and tracebacks name FILE:LINE
        code = env.compile(source, name=path.name, filename=str(path))
        template = env.template_class.from_code(env, code, env.make_globals(None))
        return _render_bounded(template, values)
    except jinja2.TemplateSyntaxError as e:
        where = e.filename or str(path)
        raise TemplateError(f"{where}:{e.lineno}: {e.message}") from None
    except jinja2.TemplateNotFound as e:
        loc = _template_line(e.__traceback__, str(path)) or str(path)
        raise TemplateError(
            f"{loc}: template {e.name!r} not found in {path.parent} or the built-in templates "
            "(a name that leads outside them, by '..' or a symlink, is never loaded)"
        ) from None
    except MemoryError:
        raise TemplateLimitError(
            f"{path}: rendering needs more than {MAX_MEMORY >> 20} MiB of memory"
        ) from None
    except (TemplateError, Exception) as e:  # noqa: BLE001 - the template's error, located
        line = _template_line(e.__traceback__, str(path))
        msg = str(e) or type(e).__name__
        if isinstance(e, RecursionError):
            msg = "templates nested or recursing too deeply"
        if line and not msg.startswith(line):
            msg = f"{line}: {msg}"
        elif not line:
            msg = f"{path}: {msg}"
        raise (TemplateLimitError if isinstance(e, TemplateLimitError) else TemplateError)(
            msg
        ) from None


def _template_line(tb: TracebackType | None, default_file: str) -> str | None:
    """``FILE:LINE`` of the innermost template frame of a traceback (Jinja rewrites template
    frames to carry the template's file name and line)."""
    found = None
    while tb is not None:
        code = tb.tb_frame.f_code
        fn = code.co_filename
        if fn == "<template>":
            found = f"{default_file}:{tb.tb_lineno}"
        elif not fn.endswith(".py") and not fn.startswith("<"):  # a template's frame
            found = f"{fn}:{tb.tb_lineno}"
        tb = tb.tb_next
    return found


def _render_bounded(template: jinja2.Template, values: Mapping[str, Any]) -> str:
    out: list[str] = []
    size = 0
    deadline = time.monotonic() + MAX_SECONDS
    with _time_limit(MAX_SECONDS), _memory_limit(MAX_MEMORY):
        for chunk in template.generate(**values):
            size += len(chunk)
            if size > MAX_OUTPUT:
                raise TemplateLimitError(f"the output exceeds {MAX_OUTPUT:,} characters")
            if time.monotonic() > deadline:
                raise TemplateLimitError(f"rendering took longer than {MAX_SECONDS:g} s")
            out.append(chunk)
    return "".join(out)


@contextmanager
def _time_limit(seconds: float) -> Iterator[None]:
    """SIGALRM after ``seconds`` (main thread, POSIX); elsewhere the output loop's clock only."""
    if (
        not hasattr(signal, "setitimer")
        or threading.current_thread() is not threading.main_thread()
    ):
        yield
        return

    def expired(signum: int, frame: Any) -> None:
        raise TemplateLimitError(f"rendering took longer than {seconds:g} s")

    old = signal.signal(signal.SIGALRM, expired)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


@contextmanager
def _memory_limit(extra: int) -> Iterator[None]:
    """On Linux, an address-space limit of the current size plus ``extra`` while rendering,
    so that a template building a huge value fails with MemoryError instead of taking the
    machine; restored afterwards. Skipped where a stricter limit is already set."""
    try:
        import resource
    except ImportError:  # pragma: no cover - not POSIX
        yield
        return
    if not sys.platform.startswith("linux"):
        yield
        return
    try:
        with open("/proc/self/statm") as f:
            current = int(f.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
        soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    except (OSError, ValueError):
        yield
        return
    want = current + extra
    if soft != resource.RLIM_INFINITY and soft <= want:
        yield
        return
    try:
        resource.setrlimit(resource.RLIMIT_AS, (want, hard))
    except (ValueError, OSError):
        yield
        return
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_AS, (soft, hard))
