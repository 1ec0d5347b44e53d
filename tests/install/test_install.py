"""Install profiles, tested as a user installs: a real wheel in real virtual environments.

- The runtime profile (``pip install idlgen``: numpy + flatbuffers only). The venv is made
  WITHOUT system site-packages, the wheel is installed with ``--no-deps``, and numpy and
  flatbuffers are linked in from the running interpreter's own installation (their files as
  the distribution metadata lists them). That is offline, fast (no download, no compile) and
  strict: lark, jinja2 and black are genuinely absent, not hidden.
- The full profile from anywhere: the venv sees the *running* interpreter's site-packages
  (a ``.pth`` line, not ``--system-site-packages``, which would point at the base interpreter
  and miss everything when the tests themselves run in a fresh venv).
- The committed generated packages and the model runtime never import the compiler.
"""

from __future__ import annotations

import os
import shutil
import site
import subprocess
import sys
import sysconfig
from importlib.metadata import distribution
from pathlib import Path

import pytest

from tests.conftest import REPO

PROBE = Path(__file__).with_name("no_compiler_probe.py")
# pip's words for an index it cannot reach
_NO_INDEX = (
    "No matching distribution found",
    "Could not find a version",
    "Failed to establish a new connection",
    "Network is unreachable",
    "Temporary failure in name resolution",
)


def _clean_env(**extra: str) -> dict[str, str]:
    """The environment without PYTHONPATH, so a venv imports its own idlgen, not the checkout."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}
    env.update(extra)
    return env


@pytest.fixture(scope="session")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("wheel")
    r = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(out), str(REPO)],
        capture_output=True,
        text=True,
        cwd=out,
        timeout=600,
    )
    if r.returncode != 0:
        # Building fetches setuptools/wheel from the index (build isolation): only an index
        # that cannot be reached is a reason to skip; any other failure is a packaging bug.
        if any(s in r.stderr for s in _NO_INDEX):
            pytest.skip(f"no package index to build the wheel: {r.stderr.strip()[-300:]}")
        pytest.fail(f"building the wheel failed:\n{r.stderr.strip()[-2000:]}")
    [whl] = out.glob("idlgen-*.whl")
    return whl


def _venv(where: Path, whl: Path) -> Path:
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(where)], check=True)
    py = where / "bin" / "python"
    subprocess.run(
        [sys.executable, "-m", "pip", "--python", str(py), "install", "-q", "--no-deps", str(whl)],
        check=True,
        env=_clean_env(),
        timeout=300,
    )
    return py


def _site_packages(py: Path) -> Path:
    out = subprocess.run(
        [str(py), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True,
        text=True,
        check=True,
    )
    return Path(out.stdout.strip())


def _link_distribution(name: str, target: Path) -> None:
    """Make an installed distribution importable in ``target`` by linking its top-level paths."""
    dist = distribution(name)
    tops = {Path(str(f)).parts[0] for f in dist.files or ()}
    for top in sorted(tops):
        src = Path(str(dist.locate_file(top)))
        if top.startswith("..") or not src.exists() or top == "__pycache__":
            continue
        (target / top).symlink_to(src, target_is_directory=src.is_dir())


def test_runtime_profile_cli_names_the_compiler_extra(wheel: Path, tmp_path: Path) -> None:
    py = _venv(tmp_path / "rt", wheel)
    sp = _site_packages(py)
    for name in ("numpy", "flatbuffers"):
        _link_distribution(name, sp)
    env = _clean_env()
    r = subprocess.run([str(py), "-c", "import lark"], capture_output=True, env=env)
    assert r.returncode != 0, "lark must be absent from the runtime venv"
    idlgen = str(tmp_path / "rt" / "bin" / "idlgen")
    (tmp_path / "a.idl").write_text("package ohos.hdi.x.v1_0;\nstruct S { int a; };\n")

    r = subprocess.run([idlgen, "--version"], capture_output=True, text=True, env=env)
    assert r.returncode == 0 and "compiler extra not installed" in r.stdout, r.stderr
    for argv in (
        ["build", "a.idl", "--out", "gen"],
        ["check", "a.idl", "--out", "gen"],
        ["parse", "a.idl"],
        ["diff", "a.idl", "a.idl"],
    ):
        r = subprocess.run([idlgen, *argv], capture_output=True, text=True, env=env, cwd=tmp_path)
        assert r.returncode == 2, (argv, r.stdout, r.stderr)
        assert "pip install 'idlgen[compiler]'" in r.stderr and "Traceback" not in r.stderr
    assert not (tmp_path / "gen").exists()
    r = subprocess.run([idlgen, "completion", "bash"], capture_output=True, text=True, env=env)
    assert r.returncode == 0 and "complete -o filenames" in r.stdout
    # The runtime itself works: a FlatBuffers codec from idlgen.wire and the NumPy kernels.
    r = subprocess.run(
        [str(py), "-c", "import idlgen.wire.flatbuffers, idlgen.runtime.nnrt, numpy; print('ok')"],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
    )
    assert r.returncode == 0 and r.stdout.strip() == "ok", r.stderr
    # A real model runs from the wheel alone, away from the repository: the NNRt and TFLite
    # packages the importer lowers onto ship inside the wheel (idlgen.prebuilt).
    from tests.models.tflite_builder import float_cnn

    (tmp_path / "cnn.tflite").write_bytes(float_cnn(8))
    r = subprocess.run(
        [idlgen, "run", "cnn.tflite", "--output-dir", "out"],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
    )
    assert r.returncode == 0, (r.stdout, r.stderr)
    outputs = sorted((tmp_path / "out").glob("*.npy"))
    assert outputs and all(o.stat().st_size > 0 for o in outputs)


@pytest.mark.skipif(shutil.which("git") is None, reason="git missing")
def test_wheel_installs_and_builds_outside_repo(wheel: Path, tmp_path: Path) -> None:
    """A real wheel (not editable) ships grammars and templates and works from anywhere."""
    py = _venv(tmp_path / "venv", wheel)
    # Dependencies from the running environment, whatever it is (system Python or a venv).
    running = [*site.getsitepackages(), sysconfig.get_paths()["purelib"]]
    (_site_packages(py) / "_running_env.pth").write_text("\n".join(dict.fromkeys(running)) + "\n")
    work = tmp_path / "work"
    shutil.copytree(REPO / "schemas" / "hdi", work / "hdi")
    shutil.copytree(REPO / "schemas" / "fbs", work / "fbs")
    idlgen = tmp_path / "venv" / "bin" / "idlgen"
    env = _clean_env()
    r = subprocess.run(
        [str(idlgen), "build", "hdi", "fbs", "--root", "ohos.hdi:hdi", "--out", "out/gen", "-q"],
        cwd=work,
        capture_output=True,
        text=True,
        env=env,
    )
    assert r.returncode == 0, r.stderr
    probe = (
        "import idlgen, sys; from gen.ohos.hdi.nnrt.v2_1 import AvgPoolFusion; "
        "from gen.armnnSerializer import SerializedGraph; SerializedGraph().to_flatbuffer(); "
        "assert str(idlgen.__file__).startswith(sys.prefix), idlgen.__file__; "
        "print(AvgPoolFusion().global_)"
    )
    r = subprocess.run(
        [str(py), "-c", probe], cwd=work / "out", capture_output=True, text=True, env=env
    )
    assert r.returncode == 0 and r.stdout.strip() == "False", r.stderr


def test_generated_code_never_imports_the_compiler() -> None:
    """Parcel, FlatBuffers binary/JSON and dict round trips plus a model run, with lark, jinja2
    and black unimportable; the probe also asserts none of them ended up in sys.modules."""
    env = dict(os.environ, PYTHONPATH=str(REPO))
    r = subprocess.run(
        [sys.executable, str(PROBE)], capture_output=True, text=True, cwd=REPO, env=env, timeout=300
    )
    assert r.returncode == 0 and r.stdout.strip().endswith("ok"), r.stderr[-3000:]
