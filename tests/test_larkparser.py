"""The LALR tables shipped with idlgen are the ones Lark builds from today's grammars."""

from __future__ import annotations

import lark
import pytest


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
