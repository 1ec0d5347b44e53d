"""GC tuning (``cli.gctuning``): the command line pauses the cyclic collector for a compiler
command and owes no collector pass afterwards; the library leaves the caller's collector alone."""

from __future__ import annotations

import gc
import weakref
from collections.abc import Callable
from pathlib import Path

import pytest

from idlgen.cli.gctuning import no_cyclic_gc


class _Node:
    def __init__(self) -> None:
        self.other: object = self


def test_objects_made_inside_are_not_left_young() -> None:
    """What a load allocates moves to the oldest generation on the way out: re-enabling the
    collector does not owe a young-generation scan of the whole new IR."""
    gc.collect()
    with no_cyclic_gc():
        assert not gc.isenabled()
        made = [[k] for k in range(20_000)]
    assert gc.isenabled()
    young = {id(o) for gen in (0, 1) for o in gc.get_objects(generation=gen)}
    assert not young.intersection(map(id, made))
    assert any(o is made[0] for o in gc.get_objects(generation=2))


def test_cyclic_garbage_made_inside_is_still_collected() -> None:
    with no_cyclic_gc():
        ref = weakref.ref(_Node())
    assert ref() is not None  # the cycle keeps it alive
    gc.collect()
    assert ref() is None


def test_a_disabled_collector_stays_disabled() -> None:
    gc.disable()
    try:
        with no_cyclic_gc():
            pass
        assert not gc.isenabled()
    finally:
        gc.enable()


def _unreachable_after(run: Callable[[], object]) -> int:
    """How many objects ``run`` leaves behind that only the cyclic collector can free."""
    gc.collect()
    gc.disable()
    try:
        run()
        return gc.collect()
    finally:
        gc.enable()


@pytest.mark.parametrize(
    ("name", "text"),
    [
        (
            "Types.fbs",
            "namespace a;\n"
            + "".join(
                f"table T{i} {{ a:int; b:string; c:[T{max(i - 1, 0)}]; }}\n" for i in range(300)
            ),
        ),
        (
            "Types.idl",
            "package a.v1_0;\n"
            + "".join(
                f"struct S{i} {{ int a; String b; S{max(i - 1, 0)}[] c; }};\n"
                for i in range(1, 300)
            )
            + "struct S0 { int a; };\n"
            + "interface IFoo { "
            + "".join(f"M{i}([in] S{i} s, [out] int r); " for i in range(300))
            + "}\n",
        ),
    ],
)
def test_commands_leave_no_cyclic_garbage(name: str, text: str, tmp_path: Path) -> None:
    """Nothing a build, check or diff makes is kept alive by a reference cycle (a recursive
    closure, say): freed by reference counts as soon as it is dropped, a big schema's IR and
    views cost no collector pass at exit (0.4 s for 20,000 records). What is left is a fixed
    amount (argparse, json), independent of the schema's size."""
    from idlgen.cli.main import main

    src = tmp_path / "a" / "v1_0" / name
    src.parent.mkdir(parents=True)
    src.write_text(text)
    if name.endswith(".idl"):  # an interface lives in a file of its own
        body, iface = text.split("interface IFoo")
        src.write_text(body)
        (src.parent / "IFoo.idl").write_text(
            f"package a.v1_0;\nimport a.v1_0.Types;\ninterface IFoo{iface}"
        )
        inputs = [str(src), str(src.parent / "IFoo.idl")]
    else:
        inputs = [str(src)]
    out = tmp_path / "out"
    commands = [
        ["build", *inputs, "--out", str(out), "-q"],
        ["check", *inputs, "--out", str(out), "-q"],
        ["diff", str(src), str(src)],
    ]
    for argv in commands:
        code: list[int] = []
        left = _unreachable_after(lambda: code.append(main(argv)))
        assert code == [0], argv
        assert left < 1_000, argv  # 300 records with views and codecs: well over 3,000


def _hdi(tmp_path: Path) -> Path:
    src = tmp_path / "a" / "v1_0" / "Types.idl"
    src.parent.mkdir(parents=True)
    src.write_text("package a.v1_0;\nstruct S { int a; };\n")
    return src


def test_the_library_leaves_the_callers_collector_alone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``frontend.load``, ``backend.generate`` and ``build.run_build`` neither pause the
    collector nor freeze the host process's objects nor change its thresholds."""
    from idlgen.build import run_build
    from idlgen.config import Config
    from idlgen.frontend import load

    def touched(*args: object) -> None:
        raise AssertionError("the library tuned the garbage collector")

    for name in ("disable", "freeze", "unfreeze", "set_threshold"):
        monkeypatch.setattr(gc, name, touched)
    src = _hdi(tmp_path)
    assert not load([src]).diagnostics.has_errors
    cfg = Config(inputs=(src,), out=tmp_path / "out", base_dir=tmp_path)
    _, diags = run_build(cfg)
    assert not diags.has_errors
    assert gc.isenabled()


def test_the_command_line_pauses_the_collector_while_loading(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import idlgen.frontend.hdi.loader as hdi_loader
    from idlgen.cli.main import main

    seen: list[bool] = []
    real = hdi_loader.load

    def spy(*args: object, **kwargs: object) -> object:
        seen.append(gc.isenabled())
        return real(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(hdi_loader, "load", spy)
    src = _hdi(tmp_path)
    assert main(["parse", str(src)]) == 0
    assert main(["build", str(src), "--out", str(tmp_path / "out"), "-q"]) == 0
    assert seen == [False, False]
    assert gc.isenabled()
