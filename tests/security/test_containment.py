"""Builds write only inside --out; manifest, cache and imports never reach outside."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest

from idlgen.build import CACHE, MANIFEST
from idlgen.frontend.fbs.loader import load as load_fbs
from idlgen.frontend.hdi.loader import load as load_hdi

from ._support import SECRET, build, cache_path, drop_cache, make_project, run, snapshot


@pytest.fixture()
def proj(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    make_project(tmp_path)
    victim = tmp_path / "victim"
    victim.mkdir()
    (victim / "keep.txt").write_text(SECRET)
    return tmp_path


def _victim_intact(proj: Path) -> None:
    assert sorted(p.name for p in (proj / "victim").iterdir()) == ["keep.txt"]
    assert (proj / "victim" / "keep.txt").read_text() == SECRET


@pytest.mark.parametrize(
    "entry",
    ["../victim/keep.txt", "/ABS/victim/keep.txt", "link/keep.txt", "a/../../victim/keep.txt", ""],
)
def test_manifest_entries_outside_are_ignored(proj: Path, entry: str) -> None:
    out = proj / "gen"
    assert build(proj / "idl", out)[0] == 0
    (out / "link").symlink_to(proj / "victim")
    entry = entry.replace("/ABS", str(proj))
    manifest = json.loads((out / MANIFEST).read_text())
    manifest["files"].append(entry)
    (out / MANIFEST).write_text(json.dumps(manifest))
    drop_cache(out)
    rc, _, err = build(proj / "idl", out)
    assert rc == 0
    assert "IDL006" in err and "ignoring manifest entry" in err, err
    _victim_intact(proj)


def test_symlinked_dir_in_output_is_not_written_through(proj: Path) -> None:
    out = proj / "gen"
    assert build(proj / "idl", out)[0] == 0
    before = snapshot(out)
    # A committed tree where a generated package directory is a symlink to elsewhere.
    (out / "ohos" / "hdi" / "demo").rename(proj / "moved")
    (out / "ohos" / "hdi" / "demo").symlink_to(proj / "victim")
    drop_cache(out)
    rc, _, err = build(proj / "idl", out)
    assert rc == 1 and "IDL005" in err and "symlink" in err
    _victim_intact(proj)
    after = snapshot(out)
    assert after["ohos/hdi/demo"].startswith(b"-> ")  # left as it was, not followed
    assert {k: v for k, v in after.items() if k != "ohos/hdi/demo"} == {
        k: v for k, v in before.items() if not k.startswith("ohos/hdi/demo/")
    }


def test_symlinked_managed_file_is_replaced_not_followed(proj: Path) -> None:
    out = proj / "gen"
    assert build(proj / "idl", out)[0] == 0
    target = out / "ohos" / "hdi" / "demo" / "v1_0" / "types.py"
    assert target.is_file()
    target.unlink()
    target.symlink_to(proj / "victim" / "keep.txt")
    drop_cache(out)
    rc, _, _ = build(proj / "idl", out)
    assert rc == 0
    assert not target.is_symlink() and SECRET not in target.read_text()
    _victim_intact(proj)
    # check --diff must not print the foreign file either
    target.unlink()
    target.symlink_to(proj / "victim" / "keep.txt")
    rc, stdout, _ = run(
        "check",
        str(proj / "idl"),
        "--root",
        f"ohos.hdi:{proj / 'idl'}",
        "--out",
        str(out),
        "--diff",
    )
    assert rc == 1 and SECRET not in stdout


def test_directory_in_place_of_a_generated_file(proj: Path) -> None:
    out = proj / "gen"
    assert build(proj / "idl", out)[0] == 0
    target = out / "ohos" / "hdi" / "demo" / "v1_0" / "types.py"
    target.unlink()
    target.mkdir()
    (target / "inner.txt").write_text("x")
    drop_cache(out)
    before = snapshot(out)
    rc, _, err = build(proj / "idl", out)
    assert rc == 1 and "IDL005" in err and "in the way" in err
    assert snapshot(out) == before  # nothing committed, no journal left to trip over
    assert not (out / ".idlgen-journal.json").exists()


def test_failed_first_build_leaves_no_output_dir(proj: Path) -> None:
    (proj / "idl" / "demo" / "v1_0" / "Bad.idl").write_text("package ohos.hdi.demo.v1_0;\n!")
    assert build(proj / "idl", proj / "gen")[0] == 1
    assert not (proj / "gen").exists()


def test_output_that_is_a_symlink_is_refused(proj: Path) -> None:
    (proj / "gen").symlink_to(proj / "victim")
    rc, _, err = build(proj / "idl", proj / "gen")
    assert rc == 1 and "IDL004" in err
    _victim_intact(proj)


def test_cache_entries_outside_are_never_read(proj: Path) -> None:
    out = proj / "gen"
    assert build(proj / "idl", out)[0] == 0
    cache = json.loads(cache_path(out).read_text())
    fifo = proj / "victim" / "fifo"
    os.mkfifo(fifo)  # reading it would hang the build
    cache["sources"][str(fifo)] = "0" * 64
    cache_path(out).write_text(json.dumps(cache))
    rc, _, err = build(proj / "idl", out)
    assert rc == 0 and "ignoring cache entry outside the inputs" in err
    fifo.unlink()
    # outputs naming '..' are ignored as well
    cache = json.loads(cache_path(out).read_text())
    cache["outputs"]["../victim/keep.txt"] = "0" * 64
    cache_path(out).write_text(json.dumps(cache))
    rc, _, err = build(proj / "idl", out)
    assert rc == 0 and "ignoring cache entry outside the output" in err
    _victim_intact(proj)


def test_replayed_cache_diagnostics_never_show_foreign_files(proj: Path) -> None:
    out = proj / "gen"
    assert build(proj / "idl", out)[0] == 0
    cache = json.loads(cache_path(out).read_text())
    victim = str(proj / "victim" / "keep.txt")
    cache["diagnostics"] = [
        {
            "severity": "warning",
            "code": "X1",
            "message": "m",
            "span": [victim, 1, 1, 1, 5],
            "help": [],
            "notes": [],
        },
        {
            "severity": "warning",
            "code": "X2",
            "message": "m",
            "span": [victim, "1", None],
            "help": [],
            "notes": [],
        },
        {"severity": "bogus", "code": "X3", "message": "m", "span": None, "help": [], "notes": []},
    ]
    cache_path(out).write_text(json.dumps(cache))
    rc, stdout, err = build(proj / "idl", out)
    assert rc == 0 and "(cached)" in stdout
    assert "X1" in err and SECRET not in err + stdout and "X2" not in err and "X3" not in err


def test_fifo_under_a_managed_name_does_not_hang(proj: Path) -> None:
    out = proj / "gen"
    assert build(proj / "idl", out)[0] == 0
    target = out / "ohos" / "hdi" / "demo" / "v1_0" / "types.py"
    target.unlink()
    os.mkfifo(target)
    os.mkfifo(out / "fifo.json")
    (out / MANIFEST).unlink()
    os.mkfifo(out / MANIFEST)
    drop_cache(out)
    os.mkfifo(out / CACHE)
    rc, _, _ = build(proj / "idl", out)
    assert rc == 0 and stat.S_ISREG(target.lstat().st_mode)


def test_generated_files_respect_the_umask(proj: Path) -> None:
    old = os.umask(0o027)
    try:
        assert build(proj / "idl", proj / "gen")[0] == 0
    finally:
        os.umask(old)
    for p in (proj / "gen").rglob("*"):
        mode = stat.S_IMODE(p.stat().st_mode)
        assert mode == (0o750 if p.is_dir() else 0o640), p


def test_directory_input_symlink_out_is_an_error(proj: Path) -> None:
    (proj / "victim" / "Evil.idl").write_text(f"package ohos.hdi.demo.v1_0;\n// {SECRET}\n!")
    (proj / "idl" / "demo" / "v1_0" / "Evil.idl").symlink_to(proj / "victim" / "Evil.idl")
    rc, stdout, err = build(proj / "idl", proj / "gen")
    assert rc == 1 and "IDL009" in err and SECRET not in err + stdout
    assert not (proj / "gen").exists()


def test_hdi_import_cannot_escape(proj: Path) -> None:
    # A crafted package name makes the inferred root '/…/proj', above the input directory;
    # the import then names a file beside the project that holds a secret.
    (proj / "work" / "v1_0").mkdir(parents=True)
    elsewhere = proj / "other" / "v1_0"
    elsewhere.mkdir(parents=True)
    (elsewhere / "Secret.idl").write_text(f"package x.other.v1_0;\n{SECRET} !")
    parts = proj.parts[1:]
    pkg = ".".join([*(p.replace("-", "_") for p in parts[-1:]), "work", "v1_0"])
    evil = proj / "work" / "v1_0" / "Evil.idl"
    other_pkg = ".".join([*(p.replace("-", "_") for p in parts[-1:]), "other", "v1_0"])
    evil.write_text(f"package {pkg};\nimport {other_pkg}.Secret;\n")
    r = load_hdi([evil], roots={})
    codes = [d.code for d in r.diagnostics]
    assert "HDI108" in codes, codes
    assert not any(SECRET in t for t in r.sources.values())

    # a symlink in the input directory that leads out
    (proj / "work" / "v1_0" / "Link.idl").symlink_to(elsewhere / "Secret.idl")
    evil.write_text(f"package {pkg};\nimport {pkg}.Link;\n")
    r = load_hdi([evil], roots={})
    assert "HDI108" in [d.code for d in r.diagnostics]
    assert not any(SECRET in t for t in r.sources.values())


@pytest.mark.parametrize("how", ["dotdot", "absolute", "symlink"])
def test_fbs_include_cannot_escape(proj: Path, how: str) -> None:
    (proj / "fbs").mkdir()
    secret = proj / "victim" / "secret.fbs"
    secret.write_text(f"table Secret {{ x:int; }}\n// {SECRET}\n!!")
    name = {
        "dotdot": "../victim/secret.fbs",
        "absolute": str(secret),
        "symlink": "link.fbs",
    }[how]
    if how == "symlink":
        (proj / "fbs" / "link.fbs").symlink_to(secret)
    main_fbs = proj / "fbs" / "main.fbs"
    main_fbs.write_text(f'include "{name}";\ntable T {{ a:int; }}\nroot_type T;\n')
    r = load_fbs([main_fbs])
    assert "FBS012" in [d.code for d in r.diagnostics]
    assert not any(SECRET in t for t in r.sources.values())
    rc, stdout, err = run("parse", str(main_fbs))
    assert rc == 1 and SECRET not in stdout + err


def test_include_dirs_and_roots_still_work(proj: Path) -> None:
    (proj / "inc").mkdir()
    (proj / "inc" / "dep.fbs").write_text("table Dep { x:int; }\n")
    (proj / "fbs").mkdir()
    (proj / "fbs" / "main.fbs").write_text('include "dep.fbs";\ntable T { d:Dep; }\n')
    r = load_fbs([proj / "fbs" / "main.fbs"], include_dirs=[proj / "inc"])
    assert r.ok, list(r.diagnostics)
