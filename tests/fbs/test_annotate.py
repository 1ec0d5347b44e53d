"""``idlgen annotate`` against ``flatc --annotate``: every byte in exactly one region, and the
region kind of every byte flatc labels (header, vtable, table, field, vector, string, union,
padding, unknown) equal to flatc's, on flatc's golden binaries and random instances of the
rooted corpus schemas; malformed buffers (flatc's invalid_*.bin, mutations) never crash and
exit 1 with a DecodeError message."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from idlgen.data.annotate import annotate
from idlgen.data.regions import KINDS
from idlgen.data.schema import Compiled, compile_schema

from . import strategies
from .common import FBS, TESTS, include_dirs, need_flatc, need_shared, root_of, runtime
from .test_convert import _run
from .test_differential import ROOTED

FEATURES = (Path(__file__).parent / "data" / "features.fbs").resolve()
MONSTER = TESTS / "monster_test.fbs"
ANNOTATED = TESTS / "annotated_binary"

_ROW = re.compile(r"^  \+0x([0-9A-Fa-f]+) \| ([0-9A-F ]*?) *\|")
_SECTION = re.compile(r"^([a-z_0-9]+)( \(.*\))?:$")
_KIND = {
    "header": "header",
    "vtable": "vtable",
    "root_table": "table",
    "table": "table",
    "string": "string",
    "vector": "vector",
    "vector64": "vector",
    "union": "union",
    "padding": "padding",
    "unknown": "unreachable",
}


@cache
def _compiled(schema: Path) -> Compiled:
    return compile_schema(schema, include_dirs=include_dirs(schema))


def _ours(c: Compiled, data: bytes) -> tuple[list[str], list[tuple[int, str]]]:
    """Per-byte kinds; asserts every byte lies in exactly one region."""
    claims = annotate(c, data)
    kinds: list[str | None] = [None] * len(data)
    for r in claims.finish():
        assert r.kind in KINDS and r.size > 0
        for i in range(r.offset, r.offset + r.size):
            assert kinds[i] is None, f"byte {i:#x} in two regions"
            kinds[i] = r.kind
    assert None not in kinds
    return [k for k in kinds if k is not None], claims.problems


def _flatc(schema: Path, bins: dict[str, bytes], tmp: Path) -> dict[str, list[str | None]]:
    """Per-byte kinds of ``flatc --annotate`` (None: a byte flatc leaves out). flatc writes each
    ``.afb`` next to its binary, so the binaries are copied to ``tmp`` first."""
    exe = need_flatc()
    paths = []
    for name, data in bins.items():
        (tmp / f"{name}.bin").write_bytes(data)
        paths.append(str(tmp / f"{name}.bin"))
    inc = [a for d in include_dirs(schema) for a in ("-I", str(d))]
    subprocess.run(
        [exe, *inc, "--annotate", str(schema), "--", *paths],
        cwd=tmp, capture_output=True, check=True, timeout=120,
    )  # fmt: skip
    out = {}
    for name, data in bins.items():
        kinds: list[str | None] = [None] * len(data)
        section = ""
        text = (tmp / f"{name}.afb").read_bytes().decode("utf-8", "replace")
        for line in text.splitlines():
            m = _SECTION.match(line)
            if m:
                section = m.group(1)
                continue
            row = _ROW.match(line)
            if row is None:
                continue
            off, size = int(row.group(1), 16), len(row.group(2).split())
            note = line.rsplit("|", 1)[-1].strip()
            kind = _KIND.get(section, section)
            if kind in ("string", "unreachable"):
                pass
            elif "padding" in note and not note.startswith("offset"):
                kind = "padding"
            elif kind == "table" and not note.startswith("offset to vtable"):
                kind = "field"
            for i in range(off, min(off + size, len(data))):
                kinds[i] = kind
        out[name] = kinds
    return out


def _agree(theirs: list[str | None], ours: list[str]) -> list[int]:
    return [i for i, k in enumerate(theirs) if k is not None and k != ours[i]]


GOLDEN = [
    (MONSTER, TESTS / "monsterdata_test.mon"),
    (MONSTER, TESTS / "unicode_test.mon"),
    (MONSTER, TESTS / "monsterdata_python_wire.mon"),
    (ANNOTATED / "annotated_binary.fbs", ANNOTATED / "annotated_binary.bin"),
]


@pytest.mark.parametrize("schema,binary", GOLDEN, ids=lambda p: p.name)
def test_golden_binaries_as_flatc(schema: Path, binary: Path, tmp_path: Path) -> None:
    need_shared()
    data = binary.read_bytes()
    kinds, problems = _ours(_compiled(schema), data)
    assert problems == []
    assert "unreachable" not in kinds
    theirs = _flatc(schema, {"g": data}, tmp_path)["g"]
    assert _agree(theirs, kinds) == []
    assert sum(k is None for k in theirs) <= 2  # bytes flatc itself leaves unlabelled


# flatc's annotator does not follow vectors of unions with string members (features.fbs)
RANDOM = [p for p in ROOTED if p != FEATURES]


@pytest.mark.parametrize("schema", RANDOM, ids=lambda p: p.name)
def test_random_instances_as_flatc(schema: Path, tmp_path: Path) -> None:
    if schema.is_relative_to(FBS):
        need_shared()
    need_flatc()
    if not schema.exists():
        pytest.skip(f"{schema} not in this corpus copy")
    _, rt = runtime(schema)
    desc = rt["desc:" + root_of(schema)]
    c = _compiled(schema)
    values: list[Any] = []

    @settings(
        max_examples=6,
        deadline=None,
        database=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )
    @given(strategies.table(desc))
    def collect(v: Any) -> None:
        values.append(v)

    collect()
    bins = {f"v{i}": desc.encode(v) for i, v in enumerate(values)}
    theirs = _flatc(schema, bins, tmp_path)
    for k, data in bins.items():
        kinds, problems = _ours(c, data)
        assert problems == [], k
        assert _agree(theirs[k], kinds) == [], k


def _invalid() -> list[Path]:
    return sorted((ANNOTATED / "tests").glob("invalid_*.bin")) if ANNOTATED.is_dir() else []


@pytest.mark.parametrize("binary", _invalid(), ids=lambda p: p.name)
def test_flatc_invalid_binaries(binary: Path, tmp_path: Path) -> None:
    """flatc's malformed buffers: every byte labelled once, the problem reported, exit 1; the
    regions before the damage agree with flatc's where flatc labels them."""
    schema = ANNOTATED / "annotated_binary.fbs"
    data = binary.read_bytes()
    kinds, problems = _ours(_compiled(schema), data)
    assert problems
    rc, out, err = _run(["annotate", str(schema), str(binary)])
    assert rc == 1 and "idlgen: error: malformed AnnotatedBinary.Foo" in err
    assert out.decode().count("\n") > 3  # the annotation is still printed
    if shutil.which("flatc"):
        theirs = _flatc(schema, {"x": data}, tmp_path)["x"]
        first = min(o for o, _ in problems)
        assert _agree(theirs[: min(first, 8)], kinds) == []  # the header at least


def test_mutated_buffers_never_crash() -> None:
    need_shared()
    schema = ANNOTATED / "annotated_binary.fbs"
    good = (ANNOTATED / "annotated_binary.bin").read_bytes()
    c = _compiled(schema)

    @settings(max_examples=300, deadline=None, database=None)
    @given(
        st.lists(st.tuples(st.integers(0, len(good) - 1), st.integers(0, 255)), max_size=8),
        st.integers(0, len(good)),
    )
    def run(flips: list[tuple[int, int]], cut: int) -> None:
        data = bytearray(good)
        for i, b in flips:
            data[i] = b
        _ours(c, bytes(data[:cut]))

    run()


def test_shared_objects_bounded() -> None:
    """A vector whose 1000 offsets all point at one string: each object annotated once."""
    c = _compiled(FEATURES)
    from idlgen.data.convert import to_binary

    data = bytearray(to_binary(c, '{ strs: ["' + "x" * 40 + '"] }'))
    kinds, problems = _ours(c, bytes(data))
    assert problems == [] and "string" in kinds
    for cut in range(0, len(data)):
        _ours(c, bytes(data[:cut]))


def test_cli_text_and_json(tmp_path: Path) -> None:
    from idlgen.data.convert import to_binary

    c = _compiled(FEATURES)
    data = to_binary(c, '{ u_type: A2, u: { x: 5 }, name: "hi", ks: [{k: 1, v: 2}] }')
    b = tmp_path / "x.bin"
    b.write_bytes(data)
    rc, out, err = _run(["annotate", str(FEATURES), str(b)])
    assert rc == 0, err
    text = out.decode()
    for section in (
        "header:",
        "vtable (Ex.Root):",
        "root_table (Ex.Root):",
        "string (Ex.Root.name)",
    ):
        assert section in text
    rc, out, err = _run(["annotate", str(FEATURES), "-", "--format", "json"], stdin=data)
    assert rc == 0, err
    doc = json.loads(out)
    assert doc["size"] == len(data) and doc["errors"] == []
    assert sum(r["size"] for r in doc["regions"]) == len(data)
    assert {r["kind"] for r in doc["regions"]} <= set(KINDS)
    rc, _, err = _run(["annotate", str(FEATURES), "-"], stdin=b"\x01\x02")
    assert rc == 1 and "idlgen: error:" in err


def test_hostile_sharing_is_bounded() -> None:
    """A vector of 30,000 tables that all share one vtable claiming 65,535-byte tables: the
    walk stops at its budget (a few times the buffer size) with a problem, every byte labelled."""
    import struct
    import time

    c = _compiled(FEATURES)
    slot = next(r.slot for r in c.codec._rf if r.f.name == "kts")
    n = 1 << 18
    buf = bytearray(n)
    struct.pack_into("<I4s", buf, 0, 64, b"EXMP")
    struct.pack_into("<HH", buf, 16, 4 + 2 * (slot + 1), 8)  # the root's vtable
    struct.pack_into("<H", buf, 16 + 4 + 2 * slot, 4)
    struct.pack_into("<iI", buf, 64, 64 - 16, 128 - 68)  # root table: kts at 128
    struct.pack_into("<HH", buf, 8, 4, 0xFFFF)  # the shared KT vtable
    count = 30000
    struct.pack_into("<I", buf, 128, count)
    base = 132 + 4 * count
    for i in range(count):
        p, t = 132 + 4 * i, base + 4 * i
        struct.pack_into("<I", buf, p, t - p)
        struct.pack_into("<i", buf, t, t - 8)
    start = time.monotonic()
    kinds, problems = _ours(c, bytes(buf))
    assert time.monotonic() - start < 30
    assert problems and len(kinds) == n
