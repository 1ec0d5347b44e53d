"""``[tool.idlgen]`` in pyproject.toml, merged with command-line flags into one frozen Config."""

from __future__ import annotations

import difflib
import os
import re

import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .errors import ConfigError

__all__ = ["Config", "ConfigError", "find_pyproject", "load_config", "parse_root"]


@dataclass(frozen=True)
class Config:
    """Effective settings; paths are absolute."""

    inputs: tuple[Path, ...] = ()
    out: Path | None = None
    roots: Mapping[str, Path] = field(default_factory=dict)
    include: tuple[Path, ...] = ()
    line_length: int = 100
    # Directory the config came from (or the working directory): header paths are relative
    # to it, so output does not depend on where the tool runs.
    base_dir: Path = field(default_factory=Path.cwd)
    # The raw [tool.idlgen.diff] table (rules, suppressions, committed reports).
    diff: Mapping[str, Any] = field(default_factory=dict)
    # The raw [tool.idlgen.lint] table (use, except, ignore; checked by idlgen.lint).
    lint: Mapping[str, Any] = field(default_factory=dict)
    # HDI packages that get NNRt kernel stubs and binding checks (``kernels``, ``--kernels``);
    # None: NNRt's own packages (``ohos.hdi.nnrt.vN_M`` declaring ``enum NodeType``).
    kernels: frozenset[str] | None = None
    source: Path | None = None
    # Whether ``source`` holds a [tool.idlgen] table (an explicit --config may not).
    table_found: bool = False


def find_pyproject(start: Path) -> Path | None:
    """The nearest pyproject.toml with a [tool.idlgen] table, searching upward."""
    for d in [start, *start.parents]:
        p = d / "pyproject.toml"
        if p.is_file():
            # A broken file is an error, never skipped: going on to a parent directory's
            # config would build with settings the user did not write.
            data = _read_toml(p)
            tool = data.get("tool", {})
            if isinstance(tool, dict) and "idlgen" in tool:
                return p
    return None


_TOML_POS = re.compile(r"\s*\(at line (\d+), column (\d+)\)$")


def _read_toml(path: Path) -> dict[str, Any]:
    """The parsed file; an unreadable file or invalid TOML is a ConfigError at ``path:line:col``."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ConfigError(f"config file not found: {path}") from None
    except UnicodeDecodeError as e:
        raise ConfigError(f"{path}: invalid TOML: not UTF-8 (byte {e.start})") from None
    except OSError as e:
        raise ConfigError(f"{path}: cannot read: {e.strerror or e}") from None
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        msg = str(e)
        m = _TOML_POS.search(msg)
        if m:
            where = f"{path}:{m.group(1)}:{m.group(2)}"
        else:  # "(at end of document)"
            last = text.rsplit("\n", 1)[-1]
            where = f"{path}:{text.count(chr(10)) + 1}:{len(last) + 1}"
        msg = _TOML_POS.sub("", msg).replace(" (at end of document)", " at the end of the file")
        raise ConfigError(f"{where}: invalid TOML: {msg}") from None


def _did_you_mean(word: str, known: Any) -> str:
    close = difflib.get_close_matches(word, sorted(known), n=1, cutoff=0.6)
    return f" (did you mean '{close[0]}'?)" if close else ""


def parse_root(spec: str, base: Path) -> tuple[str, Path]:
    prefix, sep, directory = spec.partition(":")
    if not sep or not prefix or not directory:
        raise ConfigError(f"invalid root '{spec}': expected PREFIX:DIR, e.g. ohos.hdi:schemas/hdi")
    return prefix, (base / directory).resolve()


def _strings(table: Mapping[str, Any], key: str, where: Path) -> list[str]:
    v = table.get(key, [])
    if isinstance(v, str):
        v = [v]
    if not isinstance(v, list) or not all(isinstance(x, str) for x in v):
        raise ConfigError(f"{where}: [tool.idlgen] {key} must be a string or a list of strings")
    return v


def load_config(
    config_path: Path | None,
    *,
    inputs: Sequence[str] = (),
    out: str | None = None,
    roots: Sequence[str] = (),
    include: Sequence[str] = (),
    cwd: Path | None = None,
    kernels: Sequence[str] = (),
) -> Config:
    """Read the config (explicit path, or the nearest pyproject.toml) and apply flags."""
    cwd = (cwd or Path.cwd()).resolve()
    table: Mapping[str, Any] = {}
    found = False
    base = cwd
    path = config_path.resolve() if config_path else find_pyproject(cwd)
    if path is not None:
        data = _read_toml(path)
        tool = data.get("tool", {})
        found = isinstance(tool, dict) and "idlgen" in tool
        table = tool.get("idlgen", {}) if isinstance(tool, dict) else {}
        if not isinstance(table, dict):
            raise ConfigError(f"{path}: [tool.idlgen] must be a table")
        base = path.parent
        known = {"inputs", "out", "roots", "include", "line-length", "diff", "kernels", "lint"}
        unknown = sorted(set(table) - known)
        if unknown:
            raise ConfigError(
                f"{path}: unknown [tool.idlgen] key(s): "
                + ", ".join(f"'{k}'{_did_you_mean(k, known)}" for k in unknown)
                + f"; known: {', '.join(sorted(known))}"
            )
    cfg_inputs = [(base / p).resolve() for p in _strings(table, "inputs", base)]
    cfg_roots = dict(parse_root(s, base) for s in _strings(table, "roots", base))
    cfg_include = [(base / p).resolve() for p in _strings(table, "include", base)]
    # Not resolved: the build refuses an output directory that is itself a symlink.
    cfg_out = _abspath(base / table["out"]) if isinstance(table.get("out"), str) else None
    line_length = table.get("line-length", 100)
    if not isinstance(line_length, int) or line_length < 40:
        raise ConfigError(f"{base}: [tool.idlgen] line-length must be an integer >= 40")
    # Flags win; flag paths are relative to the working directory.
    final_inputs = [(cwd / p).resolve() for p in inputs] if inputs else cfg_inputs
    cfg_roots.update(parse_root(s, cwd) for s in roots)
    final_include = cfg_include + [(cwd / p).resolve() for p in include]
    final_out = _abspath(cwd / out) if out else cfg_out
    diff = table.get("diff", {})
    if not isinstance(diff, dict):
        raise ConfigError(f"{base}: [tool.idlgen.diff] must be a table")
    lint = table.get("lint", {})
    if not isinstance(lint, dict):
        raise ConfigError(f"{base}: [tool.idlgen.lint] must be a table")
    # kernels names packages of the configured inputs: an INPUT on the command line replaces
    # both; --kernels adds to the list.
    configured = None if inputs or "kernels" not in table else _strings(table, "kernels", base)
    final_kernels: frozenset[str] | None = (
        None if configured is None and not kernels else frozenset([*(configured or []), *kernels])
    )
    for name in sorted(final_kernels or ()):
        if not all(part.isidentifier() for part in name.split(".")):
            raise ConfigError(f"kernels: '{name}' is not a package name (like ohos.hdi.nnrt.v2_1)")
    return Config(
        kernels=final_kernels,
        inputs=tuple(final_inputs),
        out=final_out,
        roots=cfg_roots,
        include=tuple(final_include),
        line_length=line_length,
        base_dir=base,
        diff=diff,
        lint=lint,
        source=path,
        table_found=path is not None and found,
    )


def _abspath(p: Path) -> Path:
    return Path(os.path.abspath(p))
