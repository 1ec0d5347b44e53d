"""idlgen.frontend.larkparser's position propagation gives exactly Lark's own ``meta`` (differential)."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import lark
import pytest

from idlgen.frontend.larkparser import lalr
from idlgen.resources import grammar_text
from tests.conftest import HDI_CORPUS, SHARED, need

_META = ("line", "column", "end_line", "end_column", "start_pos", "end_pos")
_CONTAINER = tuple(f"container_{a}" for a in _META)


def _dump(t: Any) -> Any:
    if isinstance(t, lark.Tree):
        m = t.meta
        return (
            t.data,
            m.empty,
            tuple(getattr(m, a, None) for a in _META + _CONTAINER),
            tuple(_dump(c) for c in t.children),
        )
    return (t.type, str(t), t.line, t.column, t.end_line, t.end_column, t.start_pos, t.end_pos)


def _pair(grammar: str, **options: Any) -> tuple[lark.Lark, lark.Lark]:
    ours = lalr(grammar, "test-positions", **options)
    lark_own = lark.Lark(grammar, parser="lalr", **options)
    return ours, lark_own


@pytest.mark.parametrize(
    ("grammar", "corpus", "glob"),
    [("hdi.lark", HDI_CORPUS, "*.idl"), ("fbs.lark", SHARED / "corpus" / "fbs", "*.fbs")],
)
def test_positions_equal_larks(
    grammar: str, corpus: Path, glob: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("IDLGEN_CACHE_DIR", "")
    files = sorted(need(corpus).rglob(glob))
    sample = random.Random(5).sample(files, min(80, len(files)))
    options: dict[str, Any] = {"lexer": "contextual", "propagate_positions": True}
    if grammar == "hdi.lark":
        options["lexer_callbacks"] = {"DOC_COMMENT": lambda tok: tok}
    ours, theirs = _pair(grammar_text(grammar), maybe_placeholders=False, **options)
    checked = 0
    for f in sample:
        text = f.read_text(encoding="utf-8", errors="replace")
        try:
            want = theirs.parse(text)
        except lark.exceptions.LarkError:
            continue
        assert _dump(ours.parse(text)) == _dump(want), f
        checked += 1
    assert checked >= len(sample) // 2


@pytest.mark.parametrize("name", ["hdi", "fbs"])
def test_shipped_lalr_table_is_current(name: str) -> None:
    """The committed LALR table (for the Lark and Python the repository is developed with) is
    the one Lark builds from today's grammar: loading it must not make Lark rebuild and rewrite
    it. Other versions fall back to the user cache, so only the matching file is checked."""
    from idlgen.frontend import larkparser
    from idlgen.frontend.fbs import parser as fbs_parser
    from idlgen.frontend.hdi import parser as hdi_parser

    table = larkparser.shipped_table(name)
    if not table.is_file():
        pytest.skip(f"no table shipped for Lark {lark.__version__} on this Python")
    before = table.read_bytes()
    module = hdi_parser if name == "hdi" else fbs_parser
    module._parser.cache_clear()
    module._parser()
    assert table.read_bytes() == before, f"{table.name} is stale: commit the rewritten file"
