"""Breaking categories: every finding says what it breaks (WIRE, JSON, SOURCE), and
``[tool.idlgen.diff] breaking`` decides which categories' breaks are ``breaking``."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st

from idlgen.diff import Severity, compare
from idlgen.diff.findings import CATEGORIES
from idlgen.diff.policy import ConfigError, DiffConfig
from idlgen.diff.report import Report, render_json, render_markdown, render_text, sarif_dict
from idlgen.diff.rules import RULES
from idlgen.diff.sources import load_paths

ROOT = Path(__file__).resolve().parents[2]

OLD = """namespace ns;
enum Color : byte { Red, Green, Blue }
table Car { id:uint; speed:int = 10; color:Color; }
root_type Car;
"""
NEW = """namespace ns;
enum Color : byte { Red, Green, Teal }
table Car { ident:uint; speed:int = 12; color:Color; }
root_type Car;
"""


def _load(tmp_path: Path, name: str, text: str):  # type: ignore[no-untyped-def]
    p = tmp_path / name
    p.write_text(text)
    res = load_paths([p])
    assert res.ok, res.diagnostics
    return res.schema


@pytest.fixture()
def pair(tmp_path: Path):  # type: ignore[no-untyped-def]
    return _load(tmp_path, "old.fbs", OLD), _load(tmp_path, "new.fbs", NEW)


def _by(findings):  # type: ignore[no-untyped-def]
    return {(f.rule, f.path): f for f in findings}


def test_field_rename_is_a_warning_by_default_and_breaking_when_json_counts(pair) -> None:  # type: ignore[no-untyped-def]
    old, new = pair
    default = _by(compare(old, new))
    rename = default[("FBS-T-05", "Car.ident")]
    assert rename.categories == ("JSON", "SOURCE")
    assert rename.severity is Severity.WARNING
    assert default[("FBS-T-09", "Car.speed")].severity is Severity.BREAKING
    strict = _by(compare(old, new, breaking=["WIRE", "JSON"]))
    assert strict[("FBS-T-05", "Car.ident")].severity is Severity.BREAKING
    assert strict[("FBS-E-05", "Color.Teal")].severity is Severity.BREAKING
    # JSON alone: the wire change is now only a warning
    json_only = _by(compare(old, new, breaking=["JSON"]))
    assert json_only[("FBS-T-09", "Car.speed")].severity is Severity.WARNING
    assert json_only[("FBS-T-05", "Car.ident")].severity is Severity.BREAKING


def test_rule_table_severity_follows_from_its_categories() -> None:
    """The catalogue's severity is the one the default ``breaking = ["WIRE"]`` gives."""
    for r in RULES.values():
        assert set(r.categories) <= set(CATEGORIES) and len(set(r.categories)) == len(r.categories)
        assert list(r.categories) == [c for c in CATEGORIES if c in r.categories], r.id
        if "WIRE" in r.categories:
            assert r.severity is Severity.BREAKING, r.id
        elif r.categories:
            assert r.severity is Severity.WARNING, r.id
        else:
            assert r.severity is not Severity.BREAKING, r.id


subsets = st.sets(st.sampled_from(CATEGORIES)).map(lambda s: tuple(sorted(s)))


@settings(max_examples=30, deadline=None)
@given(breaking=subsets)
def test_severity_is_decided_by_the_selected_categories(breaking, tmp_path_factory) -> None:  # type: ignore[no-untyped-def]
    tmp = tmp_path_factory.mktemp("cat")
    old, new = _load(tmp, "old.fbs", OLD), _load(tmp, "new.fbs", NEW)
    base = {(f.rule, f.path, f.message): f for f in compare(old, new)}
    for f in compare(old, new, breaking=breaking):
        if set(f.categories) & set(breaking):
            assert f.severity is Severity.BREAKING
        elif f.categories:
            assert f.severity is Severity.WARNING
        else:  # breaks nothing: its own severity, whatever is selected
            assert f.severity is base[(f.rule, f.path, f.message)].severity
            assert f.severity is not Severity.BREAKING


def test_config_breaking_key() -> None:
    assert DiffConfig.from_mapping({}).breaking == ("WIRE",)
    assert DiffConfig.from_mapping({"breaking": ["JSON", "WIRE"]}).breaking == ("WIRE", "JSON")
    assert DiffConfig.from_mapping({"breaking": []}).breaking == ()
    with pytest.raises(ConfigError, match="unknown category 'BYTES'"):
        DiffConfig.from_mapping({"breaking": ["BYTES"]})
    with pytest.raises(ConfigError, match="expected a list"):
        DiffConfig.from_mapping({"breaking": "WIRE"})


def test_every_format_shows_categories(pair) -> None:  # type: ignore[no-untyped-def]
    old, new = pair
    r = Report("old.fbs", "new.fbs", compare(old, new))
    rename = next(f for f in r.findings if f.rule == "FBS-T-05")
    text = render_text(r)
    assert re.search(r"warning\[FBS-T-05\]: Car\.ident: .* \[breaks JSON, SOURCE\]$", text, re.M)
    md = render_markdown(r)
    assert "| `FBS-T-05` | JSON, SOURCE | `Car.ident` |" in md
    data = json.loads(render_json(r))
    row = next(x for x in data["findings"] if x["rule"] == "FBS-T-05")
    assert row["categories"] == ["JSON", "SOURCE"]
    sarif = sarif_dict(r)["runs"][0]
    res = next(x for x in sarif["results"] if x["ruleId"] == "FBS-T-05")
    assert res["properties"]["categories"] == ["JSON", "SOURCE"]
    assert res["message"]["text"].endswith("\\[breaks JSON, SOURCE\\]")  # SARIF markdown
    desc = next(x for x in sarif["tool"]["driver"]["rules"] if x["id"] == "FBS-T-05")
    assert desc["properties"]["categories"] == list(rename.categories)


def test_cli_reads_breaking_from_config(pair, tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    from idlgen.diff import cli

    (tmp_path / "o.fbs").write_text(OLD.replace("speed:int = 10", "speed:int = 12"))
    (tmp_path / "n.fbs").write_text(NEW)
    parser = __import__("argparse").ArgumentParser()
    cli.add_arguments(parser)
    args = parser.parse_args([str(tmp_path / "o.fbs"), str(tmp_path / "n.fbs")])
    assert cli.run(args, {"diff": {}}) == 0  # renames only: warnings
    capsys.readouterr()
    assert cli.run(args, {"diff": {"breaking": ["WIRE", "JSON"]}}) == 1
    out = capsys.readouterr().out
    assert "breaking[FBS-T-05]: Car.ident" in out


def test_readme_rule_table_matches_the_catalogue() -> None:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    rows = re.findall(
        r"^\| `((?:HDI|FBS)-[A-Z]+-\d\d)` \| (\w+) \| (\w+) \| ([^|]+) \|", text, re.M
    )
    table = {rid: (name, sev, cats.strip()) for rid, name, sev, cats in rows}
    expected = {
        r.id: (r.name, r.severity.value, ", ".join(r.categories) or "—") for r in RULES.values()
    }
    assert table == expected


def test_default_severity_agrees_with_categories_on_nnrt() -> None:
    """On the real NNRt v1_0 → v2_1 diff, a finding is breaking exactly when it breaks WIRE."""
    hdi = ROOT / "schemas" / "hdi"
    lo = load_paths([hdi / "nnrt" / "v1_0"], roots={"ohos.hdi": hdi})
    ln = load_paths([hdi / "nnrt" / "v2_1"], roots={"ohos.hdi": hdi})
    fs = compare(lo.schema, ln.schema)
    assert fs
    for f in fs:
        assert (f.severity is Severity.BREAKING) == ("WIRE" in f.categories), f
        if f.categories and "WIRE" not in f.categories:
            assert f.severity is Severity.WARNING, f
