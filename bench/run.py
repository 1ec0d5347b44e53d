"""Run every benchmark in bench/ and print idlgen's figure, the peer's, and the ratio.

Each ``bench/bench_*.py`` module defines ``run() -> list[Result]``. Run with
``python bench/run.py`` (all) or ``python bench/run.py parcel fbs`` (modules by suffix).
"""

from __future__ import annotations

import importlib
import pathlib
import sys

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from bench.common import Result, format_table  # noqa: E402


def main(argv: list[str]) -> int:
    names = sorted(p.stem for p in HERE.glob("bench_*.py"))
    if argv:
        names = [n for n in names if n.removeprefix("bench_") in argv]
    results: list[Result] = []
    for name in names:
        mod = importlib.import_module(f"bench.{name}")
        print(f"# {name}", file=sys.stderr, flush=True)
        results.extend(mod.run())
    print(format_table(results))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
