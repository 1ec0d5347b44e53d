"""Refresh the LALR tables shipped in ``grammars/`` for this Lark and Python.

    python -m idlgen.tools.lalr_tables

Run it after changing a grammar (``tests/test_larkparser.py`` says when a table is stale) and
commit the files it names. Lark's pickle is not byte-reproducible (object order), so refresh
only stale tables: the header line decides validity, not the bytes.
"""

from __future__ import annotations

from pathlib import Path

import lark

from ..frontend.fbs import parser as fbs_parser
from ..frontend.hdi import parser as hdi_parser
from ..frontend.larkparser import save, shipped_table, table_key

__all__ = ["write_shipped"]


def write_shipped() -> list[Path]:
    """Build and write the shipped tables of both grammars."""
    written = []
    for module in (hdi_parser, fbs_parser):
        name, grammar, options = module.lark_spec()
        path = shipped_table(name)
        save(lark.Lark(grammar, parser="lalr", **options), table_key(grammar, options), path)
        written.append(path)
    return written


if __name__ == "__main__":
    for p in write_shipped():
        print(p)
