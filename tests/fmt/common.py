"""Helpers for the ``fmt`` tests: formatting a tree of schemas, comparing two loads' IR."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from pathlib import Path

from idlgen.fmt import format_text
from idlgen.fmt.hdi import tokens as hdi_tokens
from idlgen.fmt.fbs import tokens as fbs_tokens
from idlgen.frontend.contract import LoadResult


def comments(text: str, language: str) -> list[str]:
    """The comments of ``text`` in order, each with its lines stripped."""
    toks = hdi_tokens(text) if language == "hdi" else fbs_tokens(text)
    return ["\n".join(ln.strip() for ln in t.text.split("\n")) for t in toks if t.comment]


def format_tree(src: Path, dest: Path, files: Sequence[Path]) -> dict[str, int]:
    """Format ``files`` (below ``src``) into the same places below ``dest`` and check, per file:
    it formats, a second run changes nothing, every comment is still there, in order. Returns
    counts (files, changed)."""
    changed = 0
    for f in files:
        text = f.read_text(encoding="utf-8")
        r = format_text(text, str(f))
        assert r.ok, f"{f}: {list(r.diagnostics)}"
        again = format_text(r.text, str(f))
        assert again.text == r.text, f"{f}: a second run changes it"
        lang = "hdi" if f.suffix == ".idl" else "fbs"
        assert comments(r.text, lang) == comments(text, lang), f"{f}: comments changed"
        out = dest / f.relative_to(src)
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(r.text, encoding="utf-8")
        changed += r.text != text
    return {"files": len(files), "changed": changed}


def same_ir(a: LoadResult, b: LoadResult, a_root: Path, b_root: Path) -> None:
    """``a`` and ``b`` hold equal IR file by file (paths aside) and the same diagnostics."""

    def by_rel(r: LoadResult, root: Path) -> dict[str, object]:
        out: dict[str, object] = {}
        for f in r.schema.files:
            rel = Path(f.path).resolve().relative_to(root.resolve()).as_posix()
            out[rel] = dataclasses.replace(f, path="")
        return out

    fa, fb = by_rel(a, a_root), by_rel(b, b_root)
    assert fa.keys() == fb.keys()
    for k in fa:
        assert fa[k] == fb[k], f"{k}: the IR differs after formatting"
    assert [(d.code, d.message) for d in a.diagnostics] == [
        (d.code, d.message.replace(str(b_root), str(a_root))) for d in b.diagnostics
    ]
