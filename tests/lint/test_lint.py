"""``idlgen lint``: each rule fires on the case it names and not on the fixed text, the
configuration and inline ignores, every output format, and the tuned defaults on the corpora."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from idlgen.cli.main import main
from idlgen.lint import RULES
from tests.conftest import HDI_CORPUS, need

HDI_HEAD = "package ohos.hdi.demo.v1_0;\n"

# (rule, bad text, good text): the rule fires on bad exactly once and never on good.
CASES: list[tuple[str, str, str]] = [
    ("HDI_INTERFACE_I_PREFIX", "interface Demo { Ping(); }", "interface IDemo { Ping(); }"),
    ("HDI_TYPE_PASCAL_CASE", "struct CM_Info { int a; };", "struct CmInfo_V1_1 { int a; };"),
    ("HDI_METHOD_PASCAL_CASE", "interface IDemo { openChannel(); }", "interface IDemo { OpenChannel_V1_2(); }"),
    ("HDI_FIELD_LOWER_CAMEL_CASE", "struct S { int streamId_; };", "struct S { int streamId; };"),
    ("HDI_PARAM_LOWER_CAMEL_CASE", "interface IDemo { Get([out] int SeqId); }", "interface IDemo { Get([out] int seqId); }"),
    ("HDI_ENUM_VALUE_UPPER_SNAKE_CASE", "enum E { Codec_Index = 0 };", "enum E { CODEC_INDEX = 0 };"),
    ("HDI_ENUM_VALUE_PREFIX", "enum E { RED = 0, BLUE = 1 };", "enum E { E_RED = 0, E_BLUE = 1 };"),
    ("HDI_CALLBACK_SUFFIX", "[callback] interface IDemoSubscriber { OnEvent(); }", "[callback] interface IDemoCallback { OnEvent(); }"),
    ("HDI_INTERFACE_NO_INTERFACE_SUFFIX", "interface IDemoInterface { Ping(); }", "interface IDemo { Ping(); }"),
    ("HDI_OUT_PARAMS_LAST", "interface IDemo { Read([out] byte[] buf, [in] int size); }", "interface IDemo { Read([in] int size, [out] byte[] buf); }"),
    ("HDI_ONEWAY_GETTER", "interface IDemo { [oneway] GetState([in] int id); }", "interface IDemo { [oneway] SetState([in] int id); }"),
    ("HDI_COMMENT_INTERFACE", "interface IDemo { Ping(); }", "/** Demo. */\ninterface IDemo { Ping(); }"),
    ("HDI_COMMENT_TYPE", "struct S { int a; };", "/** S. */\nstruct S { int a; };"),
    ("FBS_TYPE_PASCAL_CASE", "namespace N;\ntable make_tuple { a:int; }", "namespace N;\ntable MakeTuple { a:int; }"),
    ("FBS_FIELD_CASE_CONSISTENT", "namespace N;\ntable T { a_b:int; c_d:int; eF:int; }", "namespace N;\ntable T { a_b:int; c_d:int; e_f:int; }"),
    ("FBS_FIELD_LOWER_SNAKE_CASE", "namespace N;\ntable T { maxVal:int; }", "namespace N;\ntable T { max_val:int; }"),
    ("FBS_ENUM_VALUE_CASE_CONSISTENT", "namespace N;\nenum E:byte { MAX = 0, Avg = 1 }", "namespace N;\nenum E:byte { MAX = 0, AVG = 1 }"),
    ("FBS_ENUM_VALUE_PASCAL_CASE", "namespace N;\nenum E:byte { RED = 0 }", "namespace N;\nenum E:byte { Red = 0 }"),
    ("FBS_ENUM_ZERO_VALUE", "namespace N;\nenum E:byte { A = 1, B = 2 }", "namespace N;\nenum E:byte { None = 0, A = 1 }"),
    ("FBS_NAMESPACE_DEFINED", "table T { a:int; }", "namespace N;\ntable T { a:int; }"),
    ("FBS_DEPRECATED_FIELD_DOCUMENTED", "namespace N;\ntable T { a:int (deprecated); b:int; }", "namespace N;\ntable T {\n  /// replaced by b\n  a:int (deprecated);\n  b:int;\n}"),
    ("FBS_FIELD_EXPLICIT_ID", "namespace N;\ntable T { a:int; }", "namespace N;\ntable T { a:int (id: 0); }"),
    ("FBS_ROOT_TYPE_FILE_IDENTIFIER", "namespace N;\ntable T { a:int; }\nroot_type T;", "namespace N;\ntable T { a:int; }\nroot_type T;\nfile_identifier \"ABCD\";"),
    ("FBS_COMMENT_TYPE", "namespace N;\ntable T { a:int; }", "namespace N;\n/// T.\ntable T { a:int; }"),
]  # fmt: skip


def _write(tmp: Path, rule: str, text: str) -> Path:
    if rule.startswith("HDI"):
        d = tmp / "demo" / "v1_0"
        d.mkdir(parents=True)
        name = "IDemo.idl" if "interface" in text else "Types.idl"
        if "interface Demo" in text:
            name = "Demo.idl"
        for iface in ("IDemoSubscriber", "IDemoCallback", "IDemoInterface"):
            if f"interface {iface}" in text:
                name = f"{iface}.idl"
        p = d / name
        p.write_text(HDI_HEAD + text + "\n", encoding="utf-8")
        return p
    p = tmp / "s.fbs"
    p.write_text(text + "\n", encoding="utf-8")
    return p


def _lint(
    tmp: Path, path: Path, *extra: str, capsys: pytest.CaptureFixture[str]
) -> tuple[int, list[dict[str, object]]]:
    cfg = tmp / "pyproject.toml"
    if not cfg.exists():
        cfg.write_text('[tool.idlgen]\n[tool.idlgen.lint]\nuse = ["ALL"]\n', encoding="utf-8")
    capsys.readouterr()
    rc = main(["lint", str(path), "--root", f"ohos.hdi:{tmp}", "--config", str(cfg),
               "--format", "json", *extra])  # fmt: skip
    out = capsys.readouterr().out
    return rc, json.loads(out) if out.strip() else []


def test_every_rule_has_a_case() -> None:
    assert {r.id for r in RULES} - {c[0] for c in CASES} <= {
        "HDI_COMMENT_METHOD",
        "HDI_PACKAGE_LOWER_CASE",
        "HDI_PACKAGE_VERSION_SUFFIX",
    }
    for r in RULES:
        assert r.why and r.category and r.id.split("_")[0] in ("HDI", "FBS")


@pytest.mark.parametrize("rule,bad,good", CASES, ids=[c[0] for c in CASES])
def test_rule_fires_on_its_case_only(
    rule: str, bad: str, good: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for kind, text in (("bad", bad), ("good", good)):
        d = tmp_path / kind
        d.mkdir()
        rc, rows = _lint(d, _write(d, rule, text), capsys=capsys)
        hits = [r for r in rows if r.get("rule") == rule]
        assert len(hits) == (1 if kind == "bad" else 0), (kind, rows)
        if hits:
            assert rc == 1
            assert set(hits[0]) == {"rule", "category", "message", "file", "line", "col"}
            assert isinstance(hits[0]["line"], int) and hits[0]["line"] >= 1


def test_config_use_except_ignore_and_inline(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    p = _write(
        tmp_path,
        "HDI_X",
        "struct CM_Info { int streamId_; };\n// idlgen:lint:ignore HDI_TYPE_PASCAL_CASE mirrors the C API\nstruct CM_Other { int a; };",
    )
    cfg = tmp_path / "pyproject.toml"
    cfg.write_text('[tool.idlgen]\n[tool.idlgen.lint]\nuse = ["NAMING"]\n', encoding="utf-8")
    rc, rows = _lint(tmp_path, p, capsys=capsys)
    assert rc == 1
    assert sorted(r["rule"] for r in rows) == ["HDI_FIELD_LOWER_CAMEL_CASE", "HDI_TYPE_PASCAL_CASE"]
    assert "CM_Info" in str([r["message"] for r in rows if r["rule"] == "HDI_TYPE_PASCAL_CASE"])
    cfg.write_text('[tool.idlgen]\n[tool.idlgen.lint]\nexcept = ["HDI_FIELD_LOWER_CAMEL_CASE"]\n'
                   'ignore = { HDI_TYPE_PASCAL_CASE = ["demo/**"] }\n', encoding="utf-8")  # fmt: skip
    rc, rows = _lint(tmp_path, p, capsys=capsys)
    assert (rc, rows) == (0, [])


def test_unknown_rule_is_a_config_error_with_a_suggestion(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    p = _write(tmp_path, "HDI_X", "struct S { int a; };")
    (tmp_path / "pyproject.toml").write_text(
        '[tool.idlgen]\n[tool.idlgen.lint]\nuse = ["HDI_TYPE_PASCAL"]\n', encoding="utf-8"
    )
    assert (
        main(
            [
                "lint",
                str(p),
                "--root",
                f"ohos.hdi:{tmp_path}",
                "--config",
                str(tmp_path / "pyproject.toml"),
            ]
        )
        == 2
    )
    assert "did you mean 'HDI_TYPE_PASCAL_CASE'" in capsys.readouterr().err


@pytest.mark.parametrize("fmt", ["text", "github", "sarif"])
def test_formats(fmt: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    p = _write(tmp_path, "HDI_X", "struct CM_Info { int a; };")
    (tmp_path / "pyproject.toml").write_text("[tool.idlgen]\n", encoding="utf-8")
    capsys.readouterr()
    rc = main(
        [
            "lint",
            str(p),
            "--root",
            f"ohos.hdi:{tmp_path}",
            "--config",
            str(tmp_path / "pyproject.toml"),
            "--format",
            fmt,
        ]
    )
    out, err = capsys.readouterr()
    assert rc == 1
    if fmt == "text":
        assert (
            "warning[HDI_TYPE_PASCAL_CASE]: struct CM_Info should be UpperCamelCase (CmInfo)" in err
        )
        assert "^" in err and "= help:" in err
    elif fmt == "github":
        assert out.startswith("::warning file=") and "HDI_TYPE_PASCAL_CASE" in out
    else:
        log = json.loads(out)
        run = log["runs"][0]
        assert run["results"][0]["ruleId"] == "HDI_TYPE_PASCAL_CASE"
        rules = {r["id"]: r for r in run["tool"]["driver"]["rules"]}
        assert "UpperCamelCase" in rules["HDI_TYPE_PASCAL_CASE"]["shortDescription"]["text"]


def test_clean_schema_exits_0(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    p = _write(tmp_path, "HDI_X", "/** Info. */\nstruct Info { int streamId; };")
    (tmp_path / "pyproject.toml").write_text("[tool.idlgen]\n", encoding="utf-8")
    assert (
        main(
            [
                "lint",
                str(p),
                "--root",
                f"ohos.hdi:{tmp_path}",
                "--config",
                str(tmp_path / "pyproject.toml"),
            ]
        )
        == 0
    )


def test_defaults_are_tuned_on_the_hdi_corpus(capsys: pytest.CaptureFixture[str]) -> None:
    """On the 611 real HDI files the default rules flag what the corpus itself treats as the
    exception: a few hundred findings over ~17,000 names, none from opt-in rules."""
    root = need(HDI_CORPUS)
    rc = main(["lint", str(root), "--root", f"ohos.hdi:{root}", "--format", "json"])
    rows = json.loads(capsys.readouterr().out)
    assert rc == 1
    default = {r.id for r in RULES if r.default}
    assert {r["rule"] for r in rows} <= default
    assert 100 <= len(rows) <= 300
