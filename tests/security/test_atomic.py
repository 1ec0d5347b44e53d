"""Whole-tree atomicity: kill -9 at any instant, full disks, read-only outputs, concurrency."""

from __future__ import annotations

import errno
import os
import random
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from idlgen import outtree
from tests.conftest import REPO

from ._support import SECRET, build, drop_cache, make_project, run, snapshot

NNRT = REPO / "schemas" / "hdi" / "nnrt"
KILLS = int(os.environ.get("IDLGEN_KILL_ITERATIONS", "20"))


def _cli(inputs: list[Path], out: Path) -> list[str]:
    args = [sys.executable, "-m", "idlgen", "build", *map(str, inputs)]
    return [*args, "--root", f"ohos.hdi:{REPO / 'schemas' / 'hdi'}", "--out", str(out), "-q"]


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(REPO), env.get("PYTHONPATH", "")])
    return env


def _managed(root: Path) -> dict[str, bytes]:
    return {k: v for k, v in snapshot(root).items() if not k.startswith(outtree.STAGE)}


def test_sigkill_at_random_instants_leaves_old_or_new_tree(tmp_path: Path) -> None:
    """A real build (NNRt v1_0 → v1_0 + v2_1) killed at random instants, KILLS times."""
    old_in, new_in = [NNRT / "v1_0"], [NNRT / "v1_0", NNRT / "v2_1"]
    ref_old, ref_new = tmp_path / "ref_old", tmp_path / "ref_new"
    for inputs, ref in ((old_in, ref_old), (new_in, ref_new)):
        subprocess.run(_cli(inputs, ref), check=True, env=_env())
        (ref / "NOTES.txt").write_text(SECRET)  # an unmanaged file, never touched
    old, new = _managed(ref_old), _managed(ref_new)
    assert old != new and set(old) != set(new)

    out = tmp_path / "out"
    t0 = time.monotonic()
    shutil.copytree(ref_old, out)
    subprocess.run(_cli(new_in, out), check=True, env=_env())
    span = time.monotonic() - t0
    rng = random.Random(1234)
    seen = {"old": 0, "new": 0, "replayed": 0}
    for _ in range(KILLS):
        shutil.rmtree(out)
        shutil.copytree(ref_old, out)
        proc = subprocess.Popen(_cli(new_in, out), env=_env(), stderr=subprocess.DEVNULL)
        time.sleep(rng.uniform(0.0, span * 1.2))
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        journal = (out / outtree.JOURNAL).exists()
        if not journal or getattr(outtree, "SWAP", False):
            # not committed yet, or fully done; with the whole-tree swap (Linux) always:
            # what a reader sees right after the kill, before any recovery
            assert _managed(out) in (old, new)
            assert (out / "NOTES.txt").read_text() == SECRET
        with outtree.locked(out):
            outtree.recover(out)  # what the next idlgen run does first
        got = _managed(out)
        assert got in (old, new), sorted(set(got) ^ set(old))
        assert not (out / outtree.STAGE).exists() and not (out / outtree.JOURNAL).exists()
        seen["replayed" if journal else ("old" if got == old else "new")] += 1
    print(f"kill outcomes over {KILLS} runs: {seen}")


class _Crash(BaseException):
    """Stands in for SIGKILL inside the process: nothing catches it."""


def test_crash_at_every_step_of_the_commit(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Deterministic companion of the kill loop: die before the k-th rename/unlink, every k.
    The journal commit (what runs where the whole-tree swap cannot)."""
    monkeypatch.setattr(outtree, "SWAP", False, raising=False)
    monkeypatch.chdir(tmp_path)
    idl = make_project(tmp_path)
    ref_old, ref_new = tmp_path / "old", tmp_path / "new"
    assert build(idl, ref_old)[0] == 0
    (ref_old / "NOTES.txt").write_text(SECRET)
    new_idl = tmp_path / "v2"
    shutil.copytree(idl, new_idl)
    (new_idl / "demo" / "v1_0" / "Types.idl").unlink()
    (new_idl / "demo" / "v1_0" / "More.idl").write_text(
        "package ohos.hdi.demo.v1_0;\nstruct More { long y; };\n"
    )
    shutil.copytree(ref_old, ref_new)
    drop_cache(ref_new)
    assert build(new_idl, ref_new)[0] == 0
    old, new = _managed(ref_old), _managed(ref_new)
    assert old != new
    real_replace, real_unlink = os.replace, os.unlink
    k = 0
    while True:
        out = tmp_path / f"out{k}"
        shutil.copytree(ref_old, out)
        drop_cache(out)
        calls = {"n": 0}

        def step(fn):  # type: ignore[no-untyped-def]
            def wrapped(*a, **kw):  # type: ignore[no-untyped-def]
                calls["n"] += 1
                if calls["n"] > k:
                    raise _Crash()
                return fn(*a, **kw)

            return wrapped

        monkeypatch.setattr(outtree.os, "replace", step(real_replace))
        monkeypatch.setattr(outtree.os, "unlink", step(real_unlink))
        crashed = False
        try:
            build(new_idl, out)
        except _Crash:
            crashed = True
        monkeypatch.setattr(outtree.os, "replace", real_replace)
        monkeypatch.setattr(outtree.os, "unlink", real_unlink)
        if not (out / outtree.JOURNAL).exists():
            assert _managed(out) in (old, new)
        with outtree.locked(out):
            outtree.recover(out)
        assert _managed(out) in (old, new)
        if not crashed:
            assert _managed(out) == new
            break
        k += 1
    assert k > 5  # the commit really had that many steps to interrupt
    print(f"commit interrupted before each of its {k} renames/unlinks")


def _two_trees(tmp_path: Path) -> tuple[Path, Path, dict[str, bytes], dict[str, bytes]]:
    idl = make_project(tmp_path)
    ref_old = tmp_path / "old"
    assert build(idl, ref_old)[0] == 0
    (ref_old / "NOTES.txt").write_text(SECRET)  # unmanaged, in a subdirectory too
    (ref_old / "ohos" / "README").write_text("keep")
    new_idl = tmp_path / "v2"
    shutil.copytree(idl, new_idl)
    (new_idl / "demo" / "v1_0" / "Types.idl").unlink()
    (new_idl / "demo" / "v1_0" / "More.idl").write_text(
        "package ohos.hdi.demo.v1_0;\nstruct More { long y; };\n"
    )
    (new_idl / "demo" / "v2_0").mkdir()
    (new_idl / "demo" / "v2_0" / "Types.idl").write_text(
        "package ohos.hdi.demo.v2_0;\nstruct P { int x; };\n"
    )
    ref_new = tmp_path / "new"
    shutil.copytree(ref_old, ref_new)
    assert build(new_idl, ref_new)[0] == 0
    old, new = _managed(ref_old), _managed(ref_new)
    assert old != new and set(old) != set(new)
    return ref_old, new_idl, old, new


@pytest.mark.skipif(not getattr(outtree, "SWAP", True), reason="the whole-tree swap is Linux only")
def test_readers_never_see_a_mixed_tree(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Die before every step of a commit (each hard link, file write, rename, exchange,
    unlink): right after, with no recovery run, the tree is the complete old or new one."""
    monkeypatch.chdir(tmp_path)
    ref_old, new_idl, old, new = _two_trees(tmp_path)
    real = {
        "link": os.link,
        "replace": os.replace,
        "unlink": os.unlink,
        "_write_new": outtree._write_new,
        "_exchange": getattr(outtree, "_exchange", None),
    }
    k = 0
    while True:
        out = tmp_path / f"out{k}"
        shutil.copytree(ref_old, out)
        drop_cache(out)
        calls = {"n": 0}

        def step(fn):  # type: ignore[no-untyped-def]
            def wrapped(*a, **kw):  # type: ignore[no-untyped-def]
                calls["n"] += 1
                if calls["n"] > k:
                    raise _Crash()
                return fn(*a, **kw)

            return wrapped

        for name in ("link", "replace", "unlink"):
            monkeypatch.setattr(outtree.os, name, step(real[name]))
        for name in ("_write_new", "_exchange"):
            if real[name] is not None:
                monkeypatch.setattr(outtree, name, step(real[name]))
        crashed = False
        try:
            build(new_idl, out)
        except _Crash:
            crashed = True
        for name in ("link", "replace", "unlink"):
            monkeypatch.setattr(outtree.os, name, real[name])
        for name in ("_write_new", "_exchange"):
            if real[name] is not None:
                monkeypatch.setattr(outtree, name, real[name])
        got = _managed(out)  # what a reader sees now, before any idlgen run recovers
        assert got in (old, new), (k, sorted(set(got) ^ set(old)))
        assert (out / "NOTES.txt").read_text() == SECRET
        assert (out / "ohos" / "README").read_text() == "keep"
        with outtree.locked(out):
            outtree.recover(out)
        assert _managed(out) in (old, new)
        assert not outtree.swap_path(out).exists() if hasattr(outtree, "swap_path") else True
        if not crashed:
            assert _managed(out) == new
            break
        k += 1
    assert k > 10
    print(f"commit interrupted before each of its {k} steps")


@pytest.mark.skipif(not getattr(outtree, "SWAP", True), reason="the whole-tree swap is Linux only")
def test_swap_refuses_a_planted_swap_path(tmp_path: Path) -> None:
    """A symlink committed at the reserved swap name is never followed: the journal commit
    is used instead and the link's target is untouched."""
    ref_old, new_idl, old, new = _two_trees(tmp_path)
    victim = tmp_path / "victim"
    victim.mkdir()
    (victim / "keep.txt").write_text(SECRET)
    out = tmp_path / "out"
    shutil.copytree(ref_old, out)
    outtree.swap_path(out).symlink_to(victim)
    assert build(new_idl, out)[0] == 0
    assert _managed(out) == new
    assert os.listdir(victim) == ["keep.txt"] and outtree.swap_path(out).is_symlink()


def test_leftover_staging_dir_is_cleaned(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    idl = make_project(tmp_path)
    assert build(idl, tmp_path / "gen")[0] == 0
    stage = tmp_path / "gen" / outtree.STAGE
    (stage / "ohos").mkdir(parents=True)
    (stage / "ohos" / "half.py").write_text("partial")
    drop_cache(tmp_path / "gen")
    assert build(idl, tmp_path / "gen")[0] == 0
    assert not stage.exists()


def test_full_disk_leaves_old_tree(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    idl = make_project(tmp_path)
    out = tmp_path / "gen"
    assert build(idl, out)[0] == 0
    (out / "NOTES.txt").write_text(SECRET)
    before = snapshot(out)
    (idl / "demo" / "v1_0" / "Extra.idl").write_text(
        "package ohos.hdi.demo.v1_0;\nstruct Extra { String note; int more; };\n"
    )
    (idl / "demo" / "v1_0" / "Types.idl").unlink()
    real_write = os.write
    calls = {"n": 0}

    def enospc(fd: int, data: bytes) -> int:
        calls["n"] += 1
        if calls["n"] >= 2:  # the second file staged hits a full disk
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return real_write(fd, data)

    monkeypatch.setattr(outtree.os, "write", enospc)
    rc, _, err = build(idl, out)
    monkeypatch.undo()
    assert rc == 1 and "no space left" in err and "Traceback" not in err
    assert snapshot(out) == before
    assert not (out / outtree.STAGE).exists()
    monkeypatch.chdir(tmp_path)
    assert build(idl, out)[0] == 0  # and the next run, with space again, completes


def test_read_only_output_is_a_clear_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    idl = make_project(tmp_path)
    out = tmp_path / "gen"
    assert build(idl, out)[0] == 0
    before = snapshot(out)
    (idl / "demo" / "v1_0" / "Extra.idl").write_text(
        "package ohos.hdi.demo.v1_0;\nstruct Extra { String note; int more; };\n"
    )
    real_mkdir = os.mkdir

    def erofs(path: object, *a: object, **k: object) -> None:
        raise OSError(errno.EROFS, os.strerror(errno.EROFS), str(path))

    # root ignores permission bits, so a read-only file system is simulated
    monkeypatch.setattr(outtree.os, "mkdir", erofs)
    rc, _, err = build(idl, out)
    monkeypatch.setattr(outtree.os, "mkdir", real_mkdir)
    assert rc == 1 and "not writable" in err and "Traceback" not in err
    assert snapshot(out) == before
    if os.geteuid() != 0:  # a real read-only directory too, when permissions apply
        os.chmod(out, 0o555)
        try:
            rc, _, err = build(idl, out)
            assert rc == 1 and "Traceback" not in err
        finally:
            os.chmod(out, 0o755)


def test_output_path_that_is_a_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    idl = make_project(tmp_path)
    (tmp_path / "gen").write_text("not a dir")
    rc, _, err = build(idl, tmp_path / "gen")
    assert rc == 1 and "IDL005" in err


def test_concurrent_builds_are_serialised(tmp_path: Path) -> None:
    """Two builds of different inputs into one output: the result is one complete tree."""
    ref_a, ref_b, out = tmp_path / "a", tmp_path / "b", tmp_path / "out"
    a_in, b_in = [NNRT / "v1_0"], [NNRT / "v2_1"]
    subprocess.run(_cli(a_in, ref_a), check=True, env=_env())
    subprocess.run(_cli(b_in, ref_b), check=True, env=_env())
    for _ in range(3):
        procs = [subprocess.Popen(_cli(i, out), env=_env()) for i in (a_in, b_in)]
        assert [p.wait() for p in procs] == [0, 0]
        assert _managed(out) in (_managed(ref_a), _managed(ref_b))
        rc, _, _ = run(
            "check",
            *map(str, a_in + b_in),
            "--root",
            f"ohos.hdi:{REPO / 'schemas' / 'hdi'}",
            "--out",
            str(out),
        )
        assert rc == 1  # neither build's tree holds both versions


def test_check_reports_an_interrupted_build(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    idl = make_project(tmp_path)
    out = tmp_path / "gen"
    assert build(idl, out)[0] == 0
    (out / outtree.JOURNAL).write_text('{"write": [], "delete": []}')
    rc, _, err = run("check", str(idl), "--root", f"ohos.hdi:{idl}", "--out", str(out))
    assert "IDL007" in err
    assert build(idl, out)[0] == 0 and not (out / outtree.JOURNAL).exists()


def test_hostile_journal_stays_inside(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A committed journal/staging dir (attacker-made) cannot move or delete outside files."""
    monkeypatch.chdir(tmp_path)
    idl = make_project(tmp_path)
    out = tmp_path / "gen"
    assert build(idl, out)[0] == 0
    victim = tmp_path / "victim"
    victim.mkdir()
    (victim / "keep.txt").write_text(SECRET)
    (out / outtree.STAGE).symlink_to(victim)
    (out / outtree.JOURNAL).write_text(
        '{"write": ["keep.txt", "../x"], "delete": ["../victim/keep.txt", "/etc/hostname"]}'
    )
    drop_cache(out)
    rc, _, err = build(idl, out)
    assert rc == 0 and "outside the output" in err
    assert (victim / "keep.txt").read_text() == SECRET and not (out / "keep.txt").exists()
