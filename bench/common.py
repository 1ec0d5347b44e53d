"""Shared helpers for benchmarks: timing and the result table."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass


@dataclass(frozen=True)
class Result:
    """One benchmark line. Times are seconds per operation; ``peer_s`` is None without a peer.

    ``ratio`` is peer / idlgen, so > 1 means idlgen is faster.
    """

    name: str
    idlgen_s: float
    peer: str = ""
    peer_s: float | None = None
    note: str = ""

    @property
    def ratio(self) -> float | None:
        return None if self.peer_s is None else self.peer_s / self.idlgen_s


def timeit(fn: Callable[[], object], *, min_time: float = 0.2, repeat: int = 5) -> float:
    """Best-of-``repeat`` seconds per call, each round running for at least ``min_time``."""
    fn()  # warm up
    n = 1
    while True:
        t0 = time.perf_counter()
        for _ in range(n):
            fn()
        dt = time.perf_counter() - t0
        if dt >= min_time / 4 or n >= 1 << 20:
            break
        n *= 4
    n = max(1, int(n * (min_time / max(dt, 1e-9))))
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        for _ in range(n):
            fn()
        best = min(best, (time.perf_counter() - t0) / n)
    return best


def _fmt(s: float | None) -> str:
    if s is None:
        return "-"
    if s >= 1:
        return f"{s:.2f} s"
    if s >= 1e-3:
        return f"{s * 1e3:.2f} ms"
    return f"{s * 1e6:.1f} µs"


def format_table(results: list[Result]) -> str:
    rows = [("benchmark", "idlgen", "peer", "peer time", "ratio (peer/idlgen)", "note")]
    for r in results:
        ratio = "-" if r.ratio is None else f"{r.ratio:.2f}x"
        rows.append((r.name, _fmt(r.idlgen_s), r.peer or "-", _fmt(r.peer_s), ratio, r.note))
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    lines = ["| " + " | ".join(c.ljust(w) for c, w in zip(row, widths)) + " |" for row in rows]
    lines.insert(1, "|" + "|".join("-" * (w + 2) for w in widths) + "|")
    return "\n".join(lines)
