"""Exit 123 means a bug: fuzz build/check/parse/diff with hostile schemas, names and layouts.

Every internal error this found was fixed with a regression test next to the fix. The number
of inputs tried is printed at the end of the module (``pytest -s``).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.conftest import REPO

from ._support import SHARED_DIR, run

EXAMPLES = int(os.environ.get("IDLGEN_FUZZ_EXAMPLES", "60"))
_TOKEN = re.compile(rb"\s+|[A-Za-z_][A-Za-z0-9_.]*|0[xX][0-9a-fA-F]+|[0-9]\w*|<<|>>|.", re.S)
COUNT = {"schemas": 0, "names": 0, "layouts": 0, "packages": 0, "runs": 0}


def _seeds() -> list[Path]:
    own = sorted((REPO / "schemas").rglob("*.idl")) + sorted((REPO / "schemas").rglob("*.fbs"))
    shared = SHARED_DIR / "corpus"
    extra = sorted(shared.rglob("*.idl"))[::40] + sorted(shared.rglob("*.fbs"))[::4]
    return own + (extra if shared.exists() else [])


SEEDS = _seeds()
WORDS = [
    b"package a.v1_0;",
    b"import a.v1_0.X;",
    b"struct",
    b"union",
    b"enum",
    b"interface",
    b"table",
    b"namespace",
    b"include",
    b"root_type",
    b"attribute",
    b"{",
    b"}",
    b"(",
    b")",
    b"<",
    b">",
    b"[",
    b"]",
    b";",
    b":",
    b",",
    b"=",
    b"List<",
    b"Map<",
    b"int",
    b"String",
    b"callback",
    b"oneway",
    b"[in]",
    b"[out]",
    b"0x7fffffffffffffff",
    b"-1",
    b"1e400",
    b'"',
    b"\\",
    b"/*",
    b"*/",
    b"//",
    b"///",
    b"\x00",
    b"\xff",
    b"\xef\xbb\xbf",
    b"\r",
    b"\n",
    b"\t",
    b"\xe2\x80\xae",
    b"\xed\xa0\x80",
    b"\xf4\x90\x80\x80",
    b"A" * 300,
    b"(" * 120,
    b"[" * 120,
    b'include "../../etc/passwd";',
    b'include "/etc/hostname";',
    b"import a.v1_0.X;" * 3,
]


@st.composite
def hostile_text(draw: st.DrawFn) -> bytes:
    """A mutated real schema, or a soup of both languages' tokens and odd bytes."""
    if SEEDS and draw(st.booleans()):
        toks = _TOKEN.findall(draw(st.sampled_from(SEEDS)).read_bytes())
        for _ in range(draw(st.integers(1, 6))):
            if not toks:
                break
            i = draw(st.integers(0, len(toks) - 1))
            op = draw(st.sampled_from(["drop", "dup", "swap", "cut", "insert", "repeat"]))
            if op == "drop":
                del toks[i]
            elif op == "dup":
                toks.insert(i, toks[i])
            elif op == "swap" and i + 2 < len(toks):
                toks[i], toks[i + 2] = toks[i + 2], toks[i]
            elif op == "cut":
                toks = toks[:i]
            elif op == "insert":
                toks.insert(i, draw(st.sampled_from(WORDS)))
            else:
                toks[i:i] = [toks[i]] * draw(st.integers(2, 200))
        return b"".join(toks)
    parts = draw(st.lists(st.sampled_from(WORDS) | st.binary(max_size=8), max_size=60))
    return b" ".join(parts)


NAME_CHARS = st.characters(
    blacklist_categories=("Cs",), blacklist_characters="/\x00", min_codepoint=1
)
hostile_name = st.one_of(
    st.text(NAME_CHARS, min_size=1, max_size=40),
    st.sampled_from(
        [
            "\n",
            "a\nb",
            "\x1b[31m",
            "-I",
            "--out",
            " ",
            "é",
            "\u202e",
            "x" * 240,
            "\udcff",
            "a\udc80b",
        ]
    ),
).filter(lambda s: s not in (".", "..") and len(os.fsencode(s)) <= 240)


def _assert_no_internal_error(rc: int, err: str) -> None:
    COUNT["runs"] += 1
    assert rc != 123 and "Traceback" not in err, err[-3000:]


def _every_command(inp: Path, work: Path) -> None:
    out = work / "out"
    for argv in (
        ["parse", str(inp)],
        ["parse", "--format", "json", str(inp)],
        ["build", str(inp), "--out", str(out), "-I", str(inp.parent)],
        ["check", str(inp), "--out", str(out), "--diff"],
    ):
        rc, _, err = run(*argv)
        _assert_no_internal_error(rc, err)


@pytest.mark.skipif(not SEEDS, reason="no seed schemas")
@settings(
    max_examples=EXAMPLES * 3,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(data=hostile_text(), suffix=st.sampled_from([".idl", ".fbs"]))
def test_hostile_schemas(
    tmp_path_factory: pytest.TempPathFactory, data: bytes, suffix: str
) -> None:
    COUNT["schemas"] += 1
    work = tmp_path_factory.mktemp("s")
    d = work / "a" / "v1_0"
    d.mkdir(parents=True)
    f = d / f"X{suffix}"
    f.write_bytes(data)
    _every_command(f, work)
    old = d / f"Old{suffix}"
    old.write_bytes(SEEDS[len(data) % len(SEEDS)].read_bytes() if SEEDS else b"")
    rc, _, err = run("diff", str(old), str(f))
    _assert_no_internal_error(rc, err)


@settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(name=hostile_name, dirname=hostile_name, suffix=st.sampled_from([".idl", ".fbs", ""]))
def test_hostile_file_names(
    tmp_path_factory: pytest.TempPathFactory, name: str, dirname: str, suffix: str
) -> None:
    COUNT["names"] += 1
    work = tmp_path_factory.mktemp("n")
    d = work / dirname
    try:
        d.mkdir(parents=True, exist_ok=True)
        f = d / (name + suffix)
        text = (
            "table T { a:int; }\n"
            if suffix == ".fbs"
            else "package a.v1_0;\nstruct S { int a; };\n"
        )
        f.write_text(text)
    except OSError:
        return  # a name this file system refuses
    _every_command(f, work)
    rc, _, err = run("build", str(d), "--out", str(work / dirname / "gen"))
    _assert_no_internal_error(rc, err)
    rc, _, err = run("diff", str(d), str(d))
    _assert_no_internal_error(rc, err)


LAYOUTS = [
    "symlink_loop",
    "dir_named_idl",
    "fifo",
    "dangling",
    "dev_zero",
    "unreadable",
    "self_import",
    "out_is_file",
    "manifest_garbage",
    "cache_garbage",
    "out_inside_input",
    "input_is_output",
]


def _layout(kind: str, root: Path) -> tuple[Path, Path]:
    """Make layout ``kind`` under ``root``; return (input, out)."""
    d = root / "idl" / "a" / "v1_0"
    d.mkdir(parents=True)
    (d / "T.idl").write_text("package a.v1_0;\nstruct S { int a; };\n")
    inp, out = root / "idl", root / "gen"
    if kind == "symlink_loop":
        (d / "loop").symlink_to(d)
        (d / "L.idl").symlink_to(d / "L.idl")  # a symlink to itself
    elif kind == "dir_named_idl":
        (d / "D.idl").mkdir()
        (root / "x.fbs").mkdir()
        inp = root / "x.fbs"
    elif kind == "fifo":
        os.mkfifo(d / "F.idl")
        os.mkfifo(root / "f.fbs")
        inp = root / "f.fbs"
    elif kind == "dangling":
        (d / "G.idl").symlink_to(root / "nowhere.idl")
    elif kind == "dev_zero":
        (d / "Z.idl").symlink_to("/dev/zero")
    elif kind == "unreadable":
        (d / "U.idl").write_text("package a.v1_0;\n")
        os.chmod(d / "U.idl", 0)
    elif kind == "self_import":
        (d / "T.idl").write_text("package a.v1_0;\nimport a.v1_0.T;\nstruct S { int a; };\n")
    elif kind == "out_is_file":
        out.write_text("x")
    elif kind == "manifest_garbage":
        out.mkdir()
        (out / ".idlgen-manifest.json").write_bytes(
            b'{"files": [1, null, {"a": 2}, "' + b"[" * 5000 + b'"]}'
        )
    elif kind == "cache_garbage":
        out.mkdir()
        (out / ".idlgen-cache.json").write_text('{"key": [], "sources": 5, "outputs": "x"}')
        (out / ".idlgen-journal.json").write_text("[" * 100_000)
    elif kind == "out_inside_input":
        out = d / "gen"
    elif kind == "input_is_output":
        out = inp
    return inp, out


@pytest.mark.parametrize("kind", LAYOUTS)
@pytest.mark.parametrize("command", ["build", "check", "parse", "diff"])
def test_hostile_layouts(tmp_path: Path, kind: str, command: str) -> None:
    """In a subprocess with a timeout: a FIFO or /dev/zero must not hang the run."""
    COUNT["layouts"] += 1
    inp, out = _layout(kind, tmp_path)
    argv = {
        "build": ["build", str(inp), "--out", str(out)],
        "check": ["check", str(inp), "--out", str(out)],
        "parse": ["parse", str(inp)],
        "diff": ["diff", str(inp), str(inp)],
    }[command]
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(REPO), env.get("PYTHONPATH", "")])
    r = subprocess.run(
        [sys.executable, "-m", "idlgen", *argv],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
        cwd=tmp_path,
    )
    _assert_no_internal_error(r.returncode, r.stderr)
    assert r.returncode in (0, 1, 2)
    if kind == "fifo" or kind == "dev_zero":
        shutil.rmtree(tmp_path / "idl", ignore_errors=True)


PACKAGES = ["camera", "nnrt", "display", "audio"]


@pytest.mark.skipif(
    not (SHARED_DIR / "corpus" / "hdi" / "drivers_interface").exists(), reason="no HDI corpus"
)
@settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(pkg=st.sampled_from(PACKAGES), pick=st.integers(0, 10**6), data=st.data())
def test_mutated_corpus_packages(
    tmp_path_factory: pytest.TempPathFactory, pkg: str, pick: int, data: st.DataObject
) -> None:
    """A real multi-file package (imports resolve) with one file mutated, built and checked."""
    COUNT["packages"] += 1
    work = tmp_path_factory.mktemp("p")
    src = SHARED_DIR / "corpus" / "hdi" / "drivers_interface" / pkg
    root = work / "hdi"
    shutil.copytree(src, root / pkg)
    files = sorted((root / pkg).rglob("*.idl"))
    victim = files[pick % len(files)]
    toks = _TOKEN.findall(victim.read_bytes())
    for _ in range(data.draw(st.integers(1, 4))):
        if not toks:
            break
        i = data.draw(st.integers(0, len(toks) - 1))
        op = data.draw(st.sampled_from(["drop", "dup", "insert", "cut"]))
        if op == "drop":
            del toks[i]
        elif op == "dup":
            toks.insert(i, toks[i])
        elif op == "insert":
            toks.insert(i, data.draw(st.sampled_from(WORDS)))
        else:
            toks = toks[:i]
    victim.write_bytes(b"".join(toks))
    out = work / "gen"
    for argv in (
        ["build", str(root / pkg), "--root", f"ohos.hdi:{root}", "--out", str(out), "-q"],
        ["check", str(root / pkg), "--root", f"ohos.hdi:{root}", "--out", str(out)],
        ["parse", str(victim), "--root", f"ohos.hdi:{root}"],
    ):
        rc, _, err = run(*argv)
        _assert_no_internal_error(rc, err)


@pytest.fixture(autouse=True, scope="module")
def _report_count() -> Iterator[None]:
    """Prints how many hostile inputs the module tried (visible with -s)."""
    yield
    print(f"\nhostile inputs tried: {COUNT}")
