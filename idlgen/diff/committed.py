"""Diff reports committed next to the generated code (``[tool.idlgen.diff] reports``).

``idlgen build`` writes them under ``<out>/reports/`` and ``idlgen check`` compares them like any
generated file, so a schema change that alters a report shows up as stale output.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from ..diagnostics import Diagnostics
from ..frontend import LoadResult
from .cli import diff_paths, path_display
from .findings import DEFAULT_BREAKING
from .policy import ConfigError, DiffConfig, ReportPair, apply_acceptances
from .report import Report, render_json, render_markdown

__all__ = ["render_committed_reports", "build_reports", "REPORTS_DIR"]

REPORTS_DIR = "reports"


def render_committed_reports(
    pairs: Sequence[Mapping[str, str] | ReportPair],
    roots: Mapping[str, Path] | None = None,
    include_dirs: Sequence[Path] = (),
    *,
    base_dir: Path | None = None,
    config: DiffConfig | None = None,
) -> dict[str, str]:
    """``{"<name>.md": markdown, "<name>.json": json}`` for each ``{name, old, new}`` pair.

    ``old``/``new`` are relative to ``base_dir`` (default: the working directory) and every path
    in the output is relative to it too, so the content is the same on every machine.
    Suppressions from ``config`` apply (listed in the report's suppressed section).
    Raises ``ValueError`` when a side has schema errors.
    """
    base = (base_dir or Path.cwd()).resolve()
    display = path_display(base)
    out: dict[str, str] = {}
    for p in pairs:
        if isinstance(p, ReportPair):
            name, old, new = p.name, p.old, p.new
        else:
            name, old, new = p["name"], p["old"], p["new"]
        lo, ln, findings, pol = diff_paths(
            [base / old],
            [base / new],
            roots=roots,
            include_dirs=include_dirs,
            policy=config.policy if config else "auto",
            breaking=config.breaking if config else DEFAULT_BREAKING,
        )
        if not (lo.ok and ln.ok):
            raise ValueError(f"diff report {name!r}: schema errors in {old} or {new}")
        active, suppressed = apply_acceptances(findings, config.suppress if config else ())
        report = Report(str(base / old), str(base / new), active, suppressed, pol, display)
        out[f"{name}.md"] = render_markdown(report, full=True)
        out[f"{name}.json"] = render_json(report)
    return out


def build_reports(cfg: Any, load: LoadResult, diags: Diagnostics) -> dict[str, str]:
    """The ``idlgen build``/``check`` hook: files (relative to the output root) to write."""
    del load  # the pairs are loaded on their own: each side is a different version
    try:
        dcfg = DiffConfig.from_mapping(getattr(cfg, "diff", {}))
        files = render_committed_reports(
            dcfg.reports,
            dict(getattr(cfg, "roots", {})),
            list(getattr(cfg, "include", ())),
            base_dir=Path(getattr(cfg, "base_dir", Path.cwd())),
            config=dcfg,
        )
    except (ConfigError, ValueError) as e:
        diags.error("IDL-DIFF", f"committed diff reports: {e}")
        return {}
    return {f"{REPORTS_DIR}/{k}": v for k, v in files.items()}
