"""``idlgen convert`` against flatc: JSON → bytes equal ``flatc -b``, bytes → JSON equal
``flatc --json --strict-json``, on flatc's golden files and on random instances of the rooted
corpus schemas; the command's exit codes, stdin/stdout and error messages."""

from __future__ import annotations

import io
import sys
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from idlgen import DecodeError
from idlgen.cli.main import main
from idlgen.data.convert import to_binary, to_json
from idlgen.data.schema import Compiled, compile_schema

from . import strategies
from .common import (
    FBS,
    TESTS,
    flatc,
    flatc_binary,
    flatc_json,
    include_dirs,
    need_flatc,
    need_shared,
    root_of,
    runtime,
)
from .test_differential import ROOTED

FEATURES = (Path(__file__).parent / "data" / "features.fbs").resolve()
MONSTER = TESTS / "monster_test.fbs"

#: flatc's golden (schema, JSON, binary) triples
GOLDEN = [
    (MONSTER, TESTS / "monsterdata_test.json", TESTS / "monsterdata_test.mon"),
    (MONSTER, TESTS / "unicode_test.json", TESTS / "unicode_test.mon"),
    (
        TESTS / "annotated_binary" / "annotated_binary.fbs",
        TESTS / "annotated_binary" / "annotated_binary.json",
        TESTS / "annotated_binary" / "annotated_binary.bin",
    ),
]
#: monster binaries other FlatBuffers implementations wrote
FOREIGN = [
    "monsterdata_python_wire.mon",
    "ts/monsterdata_javascript_wire.mon",
    "ts/unicode_test.mon",
    "FlatBuffers.Test/monsterdata_cstest.mon",
    "swift/Tests/Flatbuffers/monsterdata_test.mon",
]


@cache
def _compiled(schema: Path, root_type: str | None = None) -> Compiled:
    return compile_schema(schema, root_type=root_type, include_dirs=include_dirs(schema))


def _inc(schema: Path) -> list[str]:
    return [a for d in include_dirs(schema) for a in ("-I", str(d))]


def _run(argv: list[str], stdin: bytes = b"") -> tuple[int, bytes, str]:
    out = io.BytesIO()
    err = io.StringIO()
    old = sys.stdin, sys.stdout, sys.stderr
    win, wout = io.TextIOWrapper(io.BytesIO(stdin)), io.TextIOWrapper(out)
    sys.stdin, sys.stdout, sys.stderr = win, wout, err
    try:
        rc = main(argv)
        wout.flush()
        data = out.getvalue()
    finally:
        sys.stdin, sys.stdout, sys.stderr = old
    return rc, data, err.getvalue()


@pytest.mark.parametrize("schema,text,binary", GOLDEN, ids=lambda p: p.name)
def test_golden_both_ways(schema: Path, text: Path, binary: Path, tmp_path: Path) -> None:
    need_shared()
    out = tmp_path / "out.bin"
    rc, _, err = _run(["convert", str(schema), *_inc(schema), str(text), "-o", str(out)])
    assert rc == 0, err
    assert out.read_bytes() == binary.read_bytes()
    rc, printed, err = _run(["convert", str(schema), *_inc(schema), str(binary)])
    assert rc == 0, err
    need_flatc()
    assert printed.decode() == flatc_json(schema, {"g": binary.read_bytes()})["g"]


@pytest.mark.parametrize("name", FOREIGN)
def test_foreign_binaries_print_as_flatc(name: str) -> None:
    need_shared()
    need_flatc()
    path = TESTS / name
    if not path.exists():
        pytest.skip(f"{name} not in this corpus copy")
    data = path.read_bytes()
    c = _compiled(MONSTER)
    theirs = flatc_json(MONSTER, {"f": data})["f"]
    assert to_json(c, data, raw_binary=True) == theirs
    assert to_binary(c, theirs) == flatc_binary(MONSTER, {"f": theirs})["f"]


@pytest.mark.parametrize("schema", ROOTED, ids=lambda p: p.name)
def test_random_instances_agree_with_flatc(schema: Path) -> None:
    if schema.is_relative_to(FBS):
        need_shared()
    need_flatc()
    if not schema.exists():
        pytest.skip(f"{schema} not in this corpus copy")
    _, rt = runtime(schema)
    desc = rt["desc:" + root_of(schema)]
    c = _compiled(schema)

    @settings(
        max_examples=3,
        deadline=None,
        phases=[Phase.explicit, Phase.reuse, Phase.generate],
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )
    @given(st.lists(strategies.table(desc), min_size=8, max_size=8))
    def run(values: list[Any]) -> None:
        bins = {f"v{i}": desc.encode(v) for i, v in enumerate(values)}
        printed = flatc_json(schema, bins)
        rebuilt = flatc_binary(schema, printed)
        for k, data in bins.items():
            assert to_json(c, data) == printed[k], k
            assert to_binary(c, printed[k]) == rebuilt[k], k

    run()


def test_stdin_stdout_and_direction() -> None:
    text = '{ e: Z, name: "n", kts: [{name: "b"}, {name: "a"}] }'
    rc, data, err = _run(["convert", str(FEATURES), "-"], stdin=text.encode())
    assert rc == 0, err
    assert data == to_binary(_compiled(FEATURES), text)
    rc, printed, err = _run(["convert", str(FEATURES), "-", "--to", "json"], stdin=data)
    assert rc == 0, err
    assert printed.decode() == to_json(_compiled(FEATURES), data)
    rc, again, _ = _run(["convert", str(FEATURES), "-", "--to", "binary"], stdin=printed)
    assert rc == 0 and again == to_binary(_compiled(FEATURES), printed.decode())


@pytest.mark.parametrize(
    "argv_tail,stdin,code,message",
    [
        (["-", "--to", "binary"], b"{ nosuchfield: 1 }", 1, "unknown field: nosuchfield"),
        (["-", "--to", "binary"], b"\xff{", 1, "not UTF-8"),
        (["-", "--to", "json"], b"\x10\x00\x00\x00EXMP", 1, "idlgen: error:"),
        (["-", "--to", "json"], b"", 1, "idlgen: error:"),
        (["-", "--to", "json", "--root-type", "Nope"], b"", 2, "no table of that name"),
        (["-", "--to", "json", "--root-type", "S"], b"", 2, "no table of that name"),
        (["/no/such/file.bin"], b"", 2, "cannot read"),
    ],
)
def test_exit_codes(argv_tail: list[str], stdin: bytes, code: int, message: str) -> None:
    rc, _, err = _run(["convert", str(FEATURES), *argv_tail], stdin=stdin)
    assert rc == code
    assert message in err


def test_schema_errors_exit_2(tmp_path: Path) -> None:
    bad = tmp_path / "bad.fbs"
    bad.write_text("table T { a: nosuchtype; } root_type T;\n")
    rc, _, err = _run(["convert", str(bad), "-"], stdin=b"{}")
    assert rc == 2 and "error" in err
    rc, _, err = _run(["convert", str(tmp_path / "none.fbs"), "-"])
    assert rc == 2


def test_identifier_and_raw_binary() -> None:
    c = _compiled(FEATURES)
    data = to_binary(c, "{ e: Z }")
    wrong = data[:4] + b"NOPE" + data[8:]
    with pytest.raises(DecodeError):
        to_json(c, wrong)
    assert to_json(c, wrong, raw_binary=True) == to_json(c, data)


def test_size_prefixed() -> None:
    c = _compiled(FEATURES)
    data = to_binary(c, '{ name: "x" }', size_prefixed=True)
    assert int.from_bytes(data[:4], "little") == len(data) - 4
    assert to_json(c, data, size_prefixed=True) == to_json(c, data[4:])


def test_other_root_type_as_flatc(tmp_path: Path) -> None:
    """--root-type names any table; flatc still writes the schema's file_identifier."""
    need_flatc()
    c = compile_schema(FEATURES, root_type="A")
    text = '{ x: 5, s: "other" }'
    (tmp_path / "a.json").write_text(text)
    r = flatc("-b", "--root-type", "Ex.A", "-o", tmp_path, FEATURES, tmp_path / "a.json")
    assert r.returncode == 0, r.stderr
    theirs = (tmp_path / "a.bin").read_bytes()
    assert to_binary(c, text) == theirs
    r = flatc(
        "--json", "--strict-json", "--root-type", "Ex.A", "-o", tmp_path / "j", FEATURES,
        "--", tmp_path / "a.bin",
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    assert to_json(c, theirs) == (tmp_path / "j" / "a.json").read_text()
