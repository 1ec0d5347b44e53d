"""``idlgen diff OLD NEW``: compare two versions of a schema and report, then decide the exit.

Wiring (the main CLI owns the parser)::

    p = subparsers.add_parser("diff", help="compare two schema versions")
    idlgen.diff.cli.add_arguments(p)
    ...
    return idlgen.diff.cli.run(args, config)   # config: the [tool.idlgen] table (or {})
"""

from __future__ import annotations

import argparse
import os
import sys
import tarfile
import tempfile
from collections.abc import Callable, Collection, Mapping, Sequence
from pathlib import Path
from typing import Any

from ..diagnostics import render_all
from ..escaping import escape_text, log_json, log_text, visible_surrogates
from ..frontend import LoadResult
from .compare import compare
from .findings import Finding
from .policy import (
    FAIL_ON,
    ConfigError,
    DiffConfig,
    apply_acceptances,
    baseline_text,
    exit_code,
    hdi_version_policy,
    load_baseline,
)
from .report import FORMATS, Report, render, render_markdown
from .sources import GitError, extract_at_revision, load_paths

__all__ = ["add_arguments", "run", "diff_paths", "path_display"]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "paths",
        nargs="*",
        metavar="PATH",
        help="OLD NEW (files or directories); with --against, the work-tree path(s) to compare "
        "(default: [tool.idlgen] inputs)",
    )
    parser.add_argument("--format", choices=FORMATS, default="text", help="report format")
    parser.add_argument(
        "--template",
        type=Path,
        metavar="FILE",
        help="render the report with this Jinja template instead of --format "
        "(sandboxed; values escaped for markdown if FILE ends in .md, else for plain text)",
    )
    parser.add_argument(
        "--fail-on",
        choices=FAIL_ON,
        default="breaking",
        help="exit 1 when a finding is at or above this severity (default: breaking)",
    )
    parser.add_argument(
        "-I",
        "--include",
        dest="include",
        action="append",
        default=[],
        metavar="DIR",
        help="include/import search directory",
    )
    parser.add_argument(
        "--root",
        action="append",
        default=[],
        metavar="PREFIX:DIR",
        help="map an HDI package prefix to a directory (as hdi-gen -r)",
    )
    parser.add_argument(
        "--against",
        metavar="GIT_REF",
        help="compare the work-tree PATH(s) with the same paths at this git revision",
    )
    parser.add_argument(
        "--baseline",
        metavar="FILE",
        help="accept the findings recorded in FILE (overrides [tool.idlgen.diff] baseline)",
    )
    parser.add_argument("--config", type=Path, help="pyproject.toml to read [tool.idlgen] from")
    parser.add_argument(
        "--update-baseline",
        action="store_true",
        help="write every current finding to the baseline file and exit 0",
    )


def _config_parts(
    config: Any,
) -> tuple[Mapping[str, Any], dict[str, Path], list[Path], Path]:
    """(diff table, roots, include dirs, base dir) from an ``idlgen.config.Config`` or from the
    raw ``[tool.idlgen]`` table."""
    if isinstance(config, Mapping):
        table = config.get("diff", {})
        roots = _parse_roots([str(r) for r in config.get("roots", [])])
        includes = [Path(d) for d in config.get("include", [])]
        base = Path.cwd()
    else:
        table = getattr(config, "diff", {})
        roots = {k: Path(v) for k, v in dict(getattr(config, "roots", {})).items()}
        includes = [Path(d) for d in getattr(config, "include", ())]
        base = Path(getattr(config, "base_dir", Path.cwd()))
    if not isinstance(table, Mapping):
        raise ConfigError("[tool.idlgen.diff] must be a table")
    return table, roots, includes, base


def _config_inputs(config: Any) -> list[str]:
    """``diff --against REF`` without paths: the configured inputs, as the Action passes them."""
    inputs = [Path(p) for p in getattr(config, "inputs", ())]
    if not inputs:
        src = getattr(config, "source", None)
        where = (
            f"{src}: [tool.idlgen] has no 'inputs'"
            if src
            else (f"no pyproject.toml with a [tool.idlgen] table in {Path.cwd()} or above")
        )
        raise ConfigError(f"--against needs PATH... or configured inputs ({where})")
    cwd = Path.cwd()
    return [os.path.relpath(p, cwd) if p.is_relative_to(cwd) else str(p) for p in inputs]


_LANGUAGES = {".idl": "HDI", ".fbs": "FlatBuffers"}
_LANGUAGE_SCAN = 10_000  # directory entries looked at per side to tell its language


def _languages(path: Path) -> set[str]:
    if not path.is_dir():
        lang = _LANGUAGES.get(path.suffix)
        return {lang} if lang else set()
    found: set[str] = set()
    seen = 0
    for _dirpath, _dirs, names in os.walk(path):
        for n in names:
            lang = _LANGUAGES.get(os.path.splitext(n)[1])
            if lang:
                found.add(lang)
            seen += 1
        if seen > _LANGUAGE_SCAN or len(found) > 1:
            break
    return found


def _same_language(old: str, new: str) -> None:
    """Comparing an HDI schema with a FlatBuffers one is a usage error, not a report of
    everything deleted and added."""
    lo, ln = _languages(Path(old)), _languages(Path(new))
    if len(lo) == 1 and len(ln) == 1 and lo != ln:
        raise ConfigError(
            f"cannot compare schemas of two languages: {old} is {lo.pop()}, {new} is {ln.pop()}"
        )


def _parse_roots(items: Sequence[str]) -> dict[str, Path]:
    roots: dict[str, Path] = {}
    for item in items:
        prefix, sep, d = item.partition(":")
        if not sep or not prefix or not d:
            raise ConfigError(f"--root expects PREFIX:DIR, got {item!r}")
        roots[prefix] = Path(d)
    return roots


def path_display(
    base: Path, tmp: Path | None = None, ref: str | None = None
) -> Callable[[str], str]:
    """File names for reports: relative to ``base`` (``REF:path`` for files of a revision)."""
    cwd = Path.cwd()

    def show(p: str) -> str:
        path = Path(p)
        if not path.is_absolute():
            path = cwd / path
        path = Path(os.path.normpath(path))
        if tmp is not None and path.is_relative_to(tmp):
            return visible_surrogates(f"{ref}:{path.relative_to(tmp).as_posix()}")
        return visible_surrogates(Path(os.path.relpath(path, base)).as_posix())

    return show


def _report_diags(res: LoadResult, label: str) -> bool:
    if res.diagnostics:
        text = render_all(res.diagnostics, res.sources)
        if text:
            print(log_text(text), file=sys.stderr)
    if not res.ok:
        print(f"idlgen diff: {escape_text(label)} has schema errors", file=sys.stderr)
    return res.ok


def diff_paths(
    old: Sequence[Path],
    new: Sequence[Path],
    *,
    roots: Mapping[str, Path] | None = None,
    old_roots: Mapping[str, Path] | None = None,
    include_dirs: Sequence[Path] = (),
    old_include_dirs: Sequence[Path] | None = None,
    policy: str = "auto",
    breaking: Collection[str] = ("WIRE",),
) -> tuple[LoadResult, LoadResult, list[Finding], Any]:
    """Load both sides and compare; returns (old, new, findings incl. policy violations, policy)."""
    lo = load_paths(
        old,
        roots=old_roots if old_roots is not None else roots,
        include_dirs=include_dirs if old_include_dirs is None else old_include_dirs,
    )
    ln = load_paths(new, roots=roots, include_dirs=include_dirs)
    findings = compare(lo.schema, ln.schema, breaking=breaking)
    pol = hdi_version_policy(lo.schema, ln.schema, findings) if policy == "auto" else None
    if pol is not None:
        findings = findings + list(pol.findings)
    return lo, ln, findings, pol


def run(args: argparse.Namespace, config: Any) -> int:
    """Run ``idlgen diff``; the report is written before the exit code is decided."""
    try:
        diff_table, cfg_roots, cfg_includes, base = _config_parts(config)
        cfg = DiffConfig.from_mapping(diff_table)
        roots = _parse_roots(args.root) if args.root else cfg_roots
        includes = [Path(d) for d in args.include] if args.include else cfg_includes
        baseline_file = args.baseline or (str(base / cfg.baseline) if cfg.baseline else None)
        if args.update_baseline and not baseline_file:
            raise ConfigError(
                "--update-baseline needs --baseline FILE or [tool.idlgen.diff] baseline"
            )
        if args.against is not None and not args.paths:
            args.paths = _config_inputs(config)
        if args.against is None and len(args.paths) != 2:
            raise ConfigError("expected OLD and NEW (or PATH... --against GIT_REF)")
        for p in args.paths:
            if not Path(p).exists():
                raise ConfigError(f"{p}: no such file or directory")
        if args.against is None:
            _same_language(args.paths[0], args.paths[1])
        baseline = (
            load_baseline(Path(baseline_file))
            if baseline_file and not args.update_baseline
            else frozenset()
        )
    except ConfigError as e:
        print(f"idlgen diff: error: {escape_text(str(e))}", file=sys.stderr)
        return 2

    cwd = Path.cwd()
    with tempfile.TemporaryDirectory(prefix="idlgen-diff-") as tmpname:
        tmp = Path(tmpname).resolve()
        if args.against is not None:
            new_paths = [Path(p) for p in args.paths]
            try:
                extracted = extract_at_revision(
                    args.against, new_paths + list(roots.values()) + includes, tmp, cwd
                )
            except GitError as e:
                print(
                    f"idlgen diff: error: --against {escape_text(f'{args.against}: {e}')}",
                    file=sys.stderr,
                )
                return 2
            except tarfile.TarError as e:
                # tarfile's "data" filter refuses symlinks (and hard links, devices, absolute
                # names) that would leave the extraction directory: never followed, refused.
                member = getattr(getattr(e, "tarinfo", None), "name", None)
                what = f"'{member}': {e}" if member else str(e)
                print(
                    f"idlgen diff: error: --against {escape_text(args.against)}: refusing "
                    f"{escape_text(what)} (a symlink or special file in the revision)",
                    file=sys.stderr,
                )
                return 2
            old_paths = [extracted[p] for p in new_paths if extracted[p].exists()]
            old_roots = {k: extracted[v] for k, v in roots.items()}
            old_includes = [extracted[d] for d in includes]
            old_label = visible_surrogates(f"{args.against}:{' '.join(args.paths)}")
            new_label = visible_surrogates(" ".join(args.paths))
            display = path_display(cwd, tmp, args.against)
        else:
            old_paths, new_paths = [Path(args.paths[0])], [Path(args.paths[1])]
            old_roots, old_includes = roots, includes
            old_label, new_label = map(visible_surrogates, args.paths)
            display = path_display(cwd)
        lo, ln, findings, pol = diff_paths(
            old_paths,
            new_paths,
            roots=roots,
            old_roots=old_roots,
            include_dirs=includes,
            old_include_dirs=old_includes,
            policy=cfg.policy,
            breaking=cfg.breaking,
        )
        ok = _report_diags(lo, old_label) & _report_diags(ln, new_label)
        if not ok:
            return 1
        if args.update_baseline:
            assert baseline_file is not None
            # Findings a suppression already accepts (with its reason) stay out of the baseline.
            todo, _ = apply_acceptances(findings, cfg.suppress)
            Path(baseline_file).write_text(baseline_text(todo), encoding="utf-8")
            print(
                f"idlgen diff: wrote {len(todo)} finding(s) to {escape_text(baseline_file)}",
                file=sys.stderr,
            )
            return 0
        active, suppressed = apply_acceptances(findings, cfg.suppress, baseline)
        report = Report(old_label, new_label, active, suppressed, pol, display)
        template = getattr(args, "template", None)
        if template is not None:
            try:
                text = report.render_template(template)
            except Exception as e:  # noqa: BLE001 - the user's template, not idlgen, failed
                print(
                    f"idlgen diff: error: --template {escape_text(f'{template}: {e}')}",
                    file=sys.stderr,
                )
                return 2
        else:
            text = render(report, args.format)
        if not text.isascii():  # a name that is not UTF-8 left in a message: never exit 123
            text = text.encode("utf-8", "replace").decode("utf-8")
        # A CI log: no line may read as a workflow command except --format github's own. A
        # user template's own lines are its author's (values in it are escaped for its context).
        if template is None and args.format in ("json", "sarif"):
            text = log_json(text)
        elif template is None:
            text = log_text(text, own_commands=args.format == "github")
        sys.stdout.write(text)
        sys.stdout.flush()
        summary = os.environ.get("GITHUB_STEP_SUMMARY")
        if args.format == "github" and summary:
            with open(summary, "a", encoding="utf-8") as fh:
                fh.write(render_markdown(report).encode("utf-8", "replace").decode("utf-8"))
    return exit_code(active, args.fail_on)
