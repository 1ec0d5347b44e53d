"""Issue 20, point 4: ``idlgen diff --template FILE`` is confined and bounded.

Loading stays in FILE's directory and the built-in templates (no symlink, ``..`` or absolute
name leaves them); output size, value sizes, run time and (Linux) memory are bounded with a
clear error; errors say FILE:LINE.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from idlgen.diff import templating

from ._support import SECRET, run

OLD = "table T { a: int; b: int; }\nroot_type T;\n"
NEW = "table T { a: int; }\nroot_type T;\n"


@pytest.fixture()
def proj(tmp_path: Path) -> Path:
    (tmp_path / "o.fbs").write_text(OLD)
    (tmp_path / "n.fbs").write_text(NEW)
    (tmp_path / "t").mkdir()
    (tmp_path / "secret.txt").write_text(SECRET)
    return tmp_path


def _diff(proj: Path, template: str, name: str = "r.txt") -> tuple[int, str, str]:
    (proj / "t" / name).write_text(template)
    return run(
        "diff", str(proj / "o.fbs"), str(proj / "n.fbs"), "--template", str(proj / "t" / name)
    )


def test_a_working_template_and_an_include_beside_it(proj: Path) -> None:
    (proj / "t" / "part.txt").write_text("{{ report.breaking|length }} breaking\n")
    (proj / "t" / "sub").mkdir()
    (proj / "t" / "sub" / "deep.txt").write_text("deep\n")
    rc, out, err = _diff(proj, '{% include "part.txt" %}{% include "sub/deep.txt" %}')
    assert rc == 1 and out == "1 breaking\ndeep\n", err


@pytest.mark.parametrize(
    "name",
    ["link.txt", "linkdir/secret.txt", "../secret.txt", "ABS", "/etc/passwd", "fifo.txt"],
)
def test_includes_never_leave_the_directory(proj: Path, name: str) -> None:
    (proj / "t" / "link.txt").symlink_to(proj / "secret.txt")
    (proj / "t" / "linkdir").symlink_to(proj)
    os.mkfifo(proj / "t" / "fifo.txt")  # reading it would hang
    name = name.replace("ABS", str(proj / "secret.txt"))
    rc, out, err = _diff(proj, f'x\n{{% include "{name}" %}}\n')
    assert rc == 2, err
    assert SECRET not in out + err
    assert f"{proj / 't' / 'r.txt'}:2:" in err and "not found" in err, err


def test_symlink_inside_the_directory_is_fine(proj: Path) -> None:
    (proj / "t" / "real.txt").write_text("inner\n")
    (proj / "t" / "alias.txt").symlink_to(proj / "t" / "real.txt")
    rc, out, err = _diff(proj, '{% include "alias.txt" %}')
    assert rc == 1 and out == "inner\n", err


@pytest.mark.parametrize(
    "template",
    [
        '{{ "x" * 400000000 }}',
        '{{ ["x"] * 400000000 }}',
        '{{ "ab"|center(400000000) }}',
        '{{ "a".ljust(999999999) }}',
        '{{ "%0999999999d" % 1 }}',
        '{{ "{:>999999999}".format(1) }}',
        "{{ 10 ** 100000000 }}",
        '{% set ns = namespace(x="ab") %}{% for i in range(40) %}{% set ns.x = ns.x ~ ns.x %}{% endfor %}{{ ns.x }}',
        '{% set ns = namespace(x="ab") %}{% for i in range(40) %}{% set ns.x = ns.x + ns.x %}{% endfor %}',
        '{% set s = "x" * 60000 %}{{ s.replace("x", s) }}',
        '{% set s = "x" * 60000 %}{{ ([s] * 60000)|join }}',
        '{% for i in range(100000) %}{{ "y" * 10000 }}{% endfor %}',
    ],
)
def test_size_bounds(proj: Path, template: str) -> None:
    t0 = time.monotonic()
    rc, out, err = _diff(proj, template)
    assert rc == 2 and out == "", err
    assert "r.txt:" in err and ("characters" in err or "too large" in err), err
    assert time.monotonic() - t0 < 8


def test_time_bound(proj: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(templating, "MAX_SECONDS", 1.0)
    t0 = time.monotonic()
    rc, _, err = _diff(
        proj, "{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}"
    )
    assert rc == 2 and "longer than 1 s" in err and "r.txt:1:" in err, err
    assert time.monotonic() - t0 < 5


def test_memory_bound(proj: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A value that grows by sharing (no size check sees it) hits the time or memory bound."""
    monkeypatch.setattr(templating, "MAX_SECONDS", 3.0)
    rc, _, err = _diff(
        proj,
        "{% set ns = namespace(x=[1]) %}{% for i in range(40) %}"
        "{% set ns.x = [ns.x, ns.x] %}{% endfor %}{{ ns.x }}",
    )
    assert rc == 2 and ("longer than" in err or "memory" in err or "characters" in err), err


@pytest.mark.parametrize(
    ("template", "line", "what"),
    [
        ("ok\n{{ nosuch }}\n", 2, "'nosuch' is undefined"),
        ("ok\n\n{% for x in %}\n", 3, "Expected an expression"),
        ("{{ report.nope.deeper }}", 1, "nope"),
        ("{% macro m(n) %}{{ m(n+1) }}{% endmacro %}{{ m(0) }}", 1, "too deeply"),
        ("a\n{{ report.__class__ }}", 2, "unsafe"),
    ],
)
def test_errors_are_located(proj: Path, template: str, line: int, what: str) -> None:
    rc, out, err = _diff(proj, template)
    assert rc == 2 and out == "", err
    assert f"{proj / 't' / 'r.txt'}:{line}:" in err and what in err, err


def test_included_template_errors_name_the_included_file(proj: Path) -> None:
    (proj / "t" / "inc.txt").write_text("fine\n{{ missing_name }}\n")
    rc, _, err = _diff(proj, 'x\n{% include "inc.txt" %}')
    assert rc == 2 and f"{proj / 't' / 'inc.txt'}:2:" in err, err


def test_the_environment_is_documented() -> None:
    env = templating.environment("text", [])
    assert (
        env.trim_blocks and env.lstrip_blocks and env.undefined is templating.jinja2.StrictUndefined
    )
    doc = templating.__doc__ or ""
    for word in ("trim_blocks", "lstrip_blocks", "StrictUndefined", "MAX_OUTPUT", "MAX_SECONDS"):
        assert word in doc
