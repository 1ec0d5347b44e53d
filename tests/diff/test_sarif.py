"""``idlgen diff --format sarif``: SARIF 2.1.0 structure, levels, locations, fingerprints."""

from __future__ import annotations

import argparse
import json
import urllib.parse
from pathlib import Path
from typing import Any

import pytest

from idlgen.diff import Finding, Severity, cli
from idlgen.diff.report import Report, sarif_dict
from idlgen.ir import Span
from idlgen.sarif import SarifLocation, SarifResult, artifact_location, sarif_log

from ._jsonschema import validate
from .test_reports import NEW_FBS, OLD_FBS

# The part of the SARIF 2.1.0 schema (sarif-schema-2.1.0.json) that GitHub code scanning
# requires, in the subset tests/diff/_jsonschema.py checks.
TEXT = {"type": "object", "required": ["text"], "properties": {"text": {"type": "string"}}}
REGION = {
    "type": "object",
    "required": ["startLine", "startColumn"],
    "properties": {
        k: {"type": "integer", "minimum": 1}
        for k in ("startLine", "startColumn", "endLine", "endColumn")
    },
    "additionalProperties": False,
}
LOCATION = {
    "type": "object",
    "properties": {
        "physicalLocation": {
            "type": "object",
            "required": ["artifactLocation", "region"],
            "properties": {
                "artifactLocation": {
                    "type": "object",
                    "required": ["uri"],
                    "properties": {"uri": {"type": "string"}, "uriBaseId": {"type": "string"}},
                    "additionalProperties": False,
                },
                "region": REGION,
            },
            "additionalProperties": False,
        },
        "logicalLocations": {
            "type": "array",
            "items": {
                "type": "object",
                "required": ["fullyQualifiedName"],
                "properties": {"fullyQualifiedName": {"type": "string"}},
            },
        },
    },
    "additionalProperties": False,
}
# A SARIF property bag (3.8): any keys, ``tags`` a list of unique strings. idlgen puts what a
# finding (and a rule by default) breaks there.
PROPERTY_BAG = {
    "type": "object",
    "properties": {
        "tags": {"type": "array", "items": {"type": "string"}, "uniqueItems": True},
        "categories": {
            "type": "array",
            "items": {"enum": ["WIRE", "JSON", "SOURCE"]},
            "uniqueItems": True,
        },
    },
}
SARIF: dict[str, Any] = {
    "type": "object",
    "required": ["version", "$schema", "runs"],
    "properties": {
        "version": {"enum": ["2.1.0"]},
        "$schema": {"type": "string", "pattern": "sarif-2\\.1\\.0"},
        "runs": {
            "type": "array",
            "items": {
                "type": "object",
                "required": ["tool", "results"],
                "properties": {
                    "tool": {
                        "type": "object",
                        "required": ["driver"],
                        "properties": {
                            "driver": {
                                "type": "object",
                                "required": ["name", "rules"],
                                "properties": {
                                    "name": {"type": "string"},
                                    "version": {"type": "string"},
                                    "rules": {
                                        "type": "array",
                                        "items": {
                                            "type": "object",
                                            "required": ["id", "shortDescription"],
                                            "properties": {
                                                "id": {"type": "string"},
                                                "shortDescription": TEXT,
                                                "properties": PROPERTY_BAG,
                                            },
                                        },
                                    },
                                },
                            }
                        },
                    },
                    "results": {
                        "type": "array",
                        "items": {
                            "type": "object",
                            "required": ["ruleId", "level", "message"],
                            "properties": {
                                "ruleId": {"type": "string"},
                                "ruleIndex": {"type": "integer", "minimum": 0},
                                "level": {"enum": ["error", "warning", "note", "none"]},
                                "message": TEXT,
                                "locations": {"type": "array", "items": LOCATION},
                                "partialFingerprints": {"type": "object"},
                                "properties": PROPERTY_BAG,
                            },
                            "additionalProperties": False,
                        },
                    },
                },
            },
        },
    },
}


def check_log(log: dict[str, Any]) -> None:
    assert validate(log, SARIF) == []
    [run] = log["runs"]
    rules = run["tool"]["driver"]["rules"]
    ids = [r["id"] for r in rules]
    assert ids == sorted(set(ids))
    for res in run["results"]:
        assert rules[res["ruleIndex"]]["id"] == res["ruleId"]


def run_cli(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    p = argparse.ArgumentParser()
    cli.add_arguments(p)
    code = cli.run(p.parse_args(argv), {})
    return code, capsys.readouterr().out


def test_fbs_findings_as_sarif(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "sub dir").mkdir()
    (tmp_path / "old.fbs").write_text(OLD_FBS)
    (tmp_path / "sub dir" / "new#1.fbs").write_text(NEW_FBS)
    code, out = run_cli(["old.fbs", "sub dir/new#1.fbs", "--format", "sarif"], capsys)
    assert code == 1  # same exit policy as every format
    log = json.loads(out)
    check_log(log)
    _, js = run_cli(["old.fbs", "sub dir/new#1.fbs", "--format", "json"], capsys)
    findings = json.loads(js)["findings"]
    results = log["runs"][0]["results"]
    assert len(results) == len(findings)
    level = {"breaking": "error", "warning": "warning", "info": "note"}
    for res, f in zip(results, findings):
        assert res["ruleId"] == f["rule"] and res["level"] == level[f["severity"]]
        assert res["partialFingerprints"] == {"idlgenFingerprint/v1": f["fingerprint"]}
        assert res["locations"][0]["logicalLocations"] == [{"fullyQualifiedName": f["path"]}]
        phys = res["locations"][0]["physicalLocation"]
        uri = phys["artifactLocation"]["uri"]
        assert uri == "sub%20dir/new%231.fbs"  # relative to the working directory, escaped
        assert (tmp_path / urllib.parse.unquote(uri)).is_file()
        if f["new"] is not None:
            assert phys["region"]["startLine"] == f["new"]["line"]
            assert phys["region"]["startColumn"] == f["new"]["col"]
    removed = next(r for r in results if r["ruleId"] == "FBS-T-03")
    assert "(removed; was at old.fbs:7:29)" in removed["message"]["text"]
    _, again = run_cli(["old.fbs", "sub dir/new#1.fbs", "--format", "sarif"], capsys)
    assert again == out


def test_nnrt_sarif(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(Path(__file__).resolve().parents[2])
    code, out = run_cli(
        [
            "schemas/hdi/nnrt/v1_0",
            "schemas/hdi/nnrt/v2_1",
            "--format",
            "sarif",
            "--fail-on",
            "never",
        ],
        capsys,
    )
    assert code == 0
    log = json.loads(out)
    check_log(log)
    results = log["runs"][0]["results"]
    assert sum(r["level"] == "error" for r in results) == 9
    assert all(
        r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"].startswith(
            "schemas/hdi/nnrt/v2_1/"
        )
        for r in results
    )


def test_generic_writer_escapes_and_validates() -> None:
    res = [
        SarifResult(
            "X-1", "error", "a [link](1) \\ b", SarifLocation("/abs/ü x:y.idl", 3, 4, 3, 9)
        ),
        SarifResult("X-2", "note", "no location"),
        SarifResult("X-3", "warning", "bad end", SarifLocation("a.idl", 5, 6, 2, 1)),
    ]
    log = sarif_log("tool", "1.0", {"X-2": "two", "X-1": "one", "X-3": "three"}, res)
    check_log(log)
    r0, r1, r2 = log["runs"][0]["results"]
    assert r0["message"]["text"] == "a \\[link\\](1) \\\\ b"
    assert "locations" not in r1 and r1["ruleIndex"] == 1
    assert r2["locations"][0]["physicalLocation"]["region"] == {"startLine": 5, "startColumn": 6}
    uri = r0["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
    # outside the working directory: an absolute file URI, percent-encoded
    assert uri == "file:///abs/%C3%BC%20x%3Ay.idl"
    assert artifact_location("a b/c:d#e%.idl")["uri"] == "a%20b/c%3Ad%23e%25.idl"


def test_report_without_locations() -> None:
    r = Report("a", "b", [Finding("HDI-Y-01", Severity.INFO, "T", "added")])
    log = sarif_dict(r)
    check_log(log)
    [res] = log["runs"][0]["results"]
    assert res["locations"] == [{"logicalLocations": [{"fullyQualifiedName": "T"}]}]
    r2 = Report("a", "b", [Finding("HDI-Y-01", Severity.INFO, "T", "x", new=Span("f", 1, 1, 1, 2))])
    assert sarif_dict(r2)["runs"][0]["results"][0]["level"] == "note"
