"""The LALR tables idlgen ships and caches: current, independent of where they live, and never
rewritten in place."""

from __future__ import annotations

import shutil
from pathlib import Path
from types import ModuleType

import lark
import pytest

from idlgen.frontend import larkparser
from idlgen.frontend.fbs import parser as fbs_parser
from idlgen.frontend.hdi import parser as hdi_parser

MODULES = {"hdi": hdi_parser, "fbs": fbs_parser}


def _spec(name: str) -> tuple[str, str, dict[str, object]]:
    module: ModuleType = MODULES[name]
    return module.lark_spec()  # type: ignore[no-any-return]


@pytest.mark.parametrize("name", sorted(MODULES))
def test_shipped_table_is_current(name: str) -> None:
    """The committed table (for the Lark and Python the repository is developed with) was
    built from today's grammar and options; other versions use the user cache."""
    table = larkparser.shipped_table(name)
    if not table.is_file():
        pytest.skip(f"no table shipped for Lark {lark.__version__} on this Python")
    _, grammar, options = _spec(name)
    header = table.read_bytes().partition(b"\n")[0]
    assert header == larkparser.table_key(
        grammar, options
    ), f"{table.name} is stale: run python -m idlgen.tools.lalr_tables and commit it"


@pytest.mark.parametrize("name", sorted(MODULES))
def test_a_table_loads_wherever_it_is(
    name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The key names what the table was built from, not its path: an installed wheel or a
    clone elsewhere loads the shipped file as it is, without analysing the grammar (Lark's own
    cache key held the path, so every other location rebuilt and rewrote it)."""
    table = larkparser.shipped_table(name)
    if not table.is_file():
        pytest.skip("no shipped table for this Lark and Python")
    moved = tmp_path / "elsewhere" / table.name
    moved.parent.mkdir()
    shutil.copy(table, moved)
    before = moved.read_bytes()
    _, grammar, options = _spec(name)
    sample = {"hdi": "schemas/hdi/nnrt/v2_1/ModelTypes.idl", "fbs": "schemas/fbs/tflite.fbs"}
    text = (Path(__file__).resolve().parent.parent / sample[name]).read_text()
    want = lark.Lark(grammar, parser="lalr", **options).parse(text)

    def no_analysis(*args: object, **kwargs: object) -> None:
        raise AssertionError("the grammar was analysed again")

    monkeypatch.setattr(larkparser, "shipped_table", lambda _: moved)
    monkeypatch.setenv("IDLGEN_CACHE_DIR", "")
    monkeypatch.setattr(lark.Lark, "__init__", no_analysis)
    assert larkparser.lalr(grammar, name, **options).parse(text) == want
    assert moved.read_bytes() == before


def test_a_stale_table_is_ignored_and_left_alone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    grammar = 'start: "a" B\nB: "b"\n'
    shipped = tmp_path / "shipped.lalr"
    shipped.write_bytes(b"idlgen-lalr stale\nnot a pickle")
    monkeypatch.setattr(larkparser, "shipped_table", lambda name: shipped)
    monkeypatch.setenv("IDLGEN_CACHE_DIR", str(tmp_path / "cache"))
    parser = larkparser.lalr(grammar, "toy", lexer="contextual")
    assert parser.parse("ab") is not None
    assert shipped.read_bytes() == b"idlgen-lalr stale\nnot a pickle"
    cached = larkparser.user_table("toy")
    assert cached is not None and cached.is_file()
    assert cached.read_bytes().startswith(larkparser.table_key(grammar, {"lexer": "contextual"}))
    # the next start loads it (a corrupt body is rebuilt, not fatal)
    loaded = larkparser._load(cached, larkparser.table_key(grammar, {"lexer": "contextual"}))
    assert loaded is not None and loaded.parse("ab") is not None
    cached.write_bytes(cached.read_bytes()[:40])
    assert larkparser.lalr(grammar, "toy", lexer="contextual").parse("ab") is not None


def test_no_user_cache_when_disabled(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(larkparser, "shipped_table", lambda name: tmp_path / "none.lalr")
    monkeypatch.setenv("IDLGEN_CACHE_DIR", "")
    assert larkparser.user_table("toy") is None
    assert larkparser.lalr('start: "a"\n', "toy").parse("a") is not None
    assert list(tmp_path.iterdir()) == []
