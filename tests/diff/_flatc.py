"""``flatc --conform`` as a reference: run it, and map its one message onto our entity paths."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

from idlgen.diff import Finding, Severity

_FIELD = re.compile(
    r"(?:offsets|defaults|types|offset types) differ for field: (\S+)|field deleted: (\S+)"
)
_RENAMED = re.compile(r"field renamed to different type: (\S+) \(renamed from (\S+)\)")
_VALUE = re.compile(r"values differ for enum: (\S+)")
_UNDERLYING = re.compile(r"underlying type differ for (?:enum|union): (\S+)")


def _short_field(q: str) -> str:
    return ".".join(q.split(".")[-2:])


def flatc_message(old: Path, new: Path) -> str | None:
    """flatc's single complaint, or None when it accepts the evolution."""
    proc = subprocess.run(
        ["flatc", "--conform", str(old), str(new)], capture_output=True, text=True
    )
    if proc.returncode == 0:
        return None
    m = re.search(r"schemas don't conform: (.*)", proc.stderr + proc.stdout)
    assert m, (proc.stderr + proc.stdout)[-2000:]
    return m.group(1).strip()


def covers(msg: str, findings: list[Finding]) -> bool:
    """Is flatc's complaint among our findings? It must be breaking there, except that a
    same-width signedness change is our separate warning rule FBS-T-12."""
    serious = [f for f in findings if f.severity is Severity.BREAKING or f.rule == "FBS-T-12"]
    paths = {f.path for f in serious}
    if m := _RENAMED.search(msg):
        return _short_field(m.group(1)) in paths or _short_field(m.group(2)) in paths
    if m := _FIELD.search(msg):
        name = _short_field(m.group(1) or m.group(2))
        if any(f.rule == "FBS-K-01" and f.path == name.split(".")[0] for f in serious):
            return True  # table<->struct: every field "moves"; reported once on the type
        # flatc names a union field's hidden discriminant slot `<field>_type`.
        return name in paths or (name.endswith("_type") and name[: -len("_type")] in paths)
    if m := _VALUE.search(msg):
        return any(p.endswith("." + m.group(1)) for p in paths)
    if m := _UNDERLYING.search(msg):
        return m.group(1).rsplit(".", 1)[-1] in paths
    raise AssertionError(f"unrecognised flatc message: {msg}")
