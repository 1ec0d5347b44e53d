"""Drop-in CI: the pre-commit hooks and the GitHub Action's script, run for real.

The hooks file is checked against pre-commit's manifest fields, each hook's ``entry`` is run as
pre-commit would run it, and ``pre-commit try-repo`` (pre-commit is in the test extra) installs
this repository as a hook environment and runs both hooks on a scratch project. The action's
script runs against a fake ``GITHUB_*`` environment, with a local HTTP server standing in for
the API.
"""

from __future__ import annotations

import http.server
import json
import os
import shlex
import shutil
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import REPO

yaml = pytest.importorskip("yaml")

SCRIPT = REPO / "action" / "idlgen_action.py"
OLD = """package ohos.hdi.demo.v1_0;
struct Point { int x; int y; };
"""
NEW = """package ohos.hdi.demo.v1_0;
struct Point { int x; };
"""
PYPROJECT = '[tool.idlgen]\ninputs = ["idl"]\nout = "gen"\nroots = ["ohos.hdi:idl"]\n'


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "INPUT_"))}
    env["PYTHONPATH"] = str(REPO)
    env.update(extra)
    return env


@pytest.fixture()
def project(tmp_path: Path) -> Path:
    d = tmp_path / "proj"
    (d / "idl" / "demo" / "v1_0").mkdir(parents=True)
    (d / "idl" / "demo" / "v1_0" / "Types.idl").write_text(OLD)
    (d / "pyproject.toml").write_text(PYPROJECT)
    return d


def test_pre_commit_hooks_manifest_and_entries(project: Path) -> None:
    hooks = yaml.safe_load((REPO / ".pre-commit-hooks.yaml").read_text())
    by_id = {h["id"]: h for h in hooks}
    assert set(by_id) == {"idlgen-check", "idlgen-build", "idlgen-fmt", "idlgen-lint"}
    for h in hooks:  # pre-commit's required keys, and what these hooks rely on
        assert {"id", "name", "entry", "language"} <= set(h)
        # fmt formats the staged schemas (tests/fmt/test_cli.py); the others the whole project
        assert h["language"] == "python" and h.get("pass_filenames", True) is (
            h["id"] == "idlgen-fmt"
        )
        assert any(d.startswith("lark") for d in h["additional_dependencies"])
        assert h["entry"].split()[0] == "idlgen"
    import re

    pattern = re.compile(by_id["idlgen-check"]["files"])
    for hit in (
        "idl/a/v1_0/Types.idl",
        "schemas/x.fbs",
        "pyproject.toml",
        "gen/.idlgen-manifest.json",
    ):
        assert pattern.search(hit), hit
    assert not pattern.search("README.md")

    def hook(hook_id: str) -> subprocess.CompletedProcess[str]:
        argv = shlex.split(by_id[hook_id]["entry"])
        return subprocess.run(
            [sys.executable, "-m", "idlgen", *argv[1:]],
            cwd=project,
            env=_env(),
            capture_output=True,
            text=True,
        )

    r = hook("idlgen-check")
    assert r.returncode == 1 and "stale:" in r.stderr + r.stdout  # nothing generated yet
    r = hook("idlgen-build")
    assert r.returncode == 0 and r.stdout == "", r.stderr
    assert hook("idlgen-check").returncode == 0
    (project / "idl/demo/v1_0/Types.idl").write_text(OLD.replace("int y;", "Strng y;"))
    r = hook("idlgen-check")
    assert r.returncode == 1 and "error[HDI202]" in r.stderr
    # lint reads the project's config and lints its inputs: a finding fails the hook
    (project / "idl/demo/v1_0/Types.idl").write_text(OLD.replace("int y;", "int y_;"))
    r = hook("idlgen-lint")
    assert r.returncode == 1 and "HDI_FIELD_LOWER_CAMEL_CASE" in r.stderr, r.stderr


def test_action_yml_inputs_and_steps() -> None:
    action = yaml.safe_load((REPO / "action.yml").read_text())
    assert action["runs"]["using"] == "composite"
    assert {"command", "base-ref", "fail-on", "comment"} <= set(action["inputs"])
    assert action["inputs"]["command"]["default"] == "check"
    script_steps = [s for s in action["runs"]["steps"] if "idlgen_action.py" in s.get("run", "")]
    assert len(script_steps) == 1
    env = script_steps[0]["env"]
    for name in ("command", "base-ref", "fail-on", "comment"):
        assert env[f"INPUT_{name.upper().replace('-', '_')}"] == f"${{{{ inputs.{name} }}}}"


class _FakeGitHub(http.server.BaseHTTPRequestHandler):
    """Issue comments of one PR, in memory; records every request."""

    comments: list[dict[str, Any]]
    log: list[tuple[str, str, dict[str, Any] | None, str]]

    def _reply(self, code: int, body: Any) -> None:
        data = json.dumps(body).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _body(self) -> dict[str, Any] | None:
        n = int(self.headers.get("Content-Length") or 0)
        return json.loads(self.rfile.read(n)) if n else None

    def _record(self) -> dict[str, Any] | None:
        body = self._body()
        self.log.append((self.command, self.path, body, self.headers.get("Authorization", "")))
        return body

    def do_GET(self) -> None:  # noqa: N802
        self._record()
        if self.path.startswith("/repos/o/r/issues/5/comments?"):
            page = int(self.path.rsplit("page=", 1)[1])
            self._reply(200, self.comments[(page - 1) * 100 : page * 100])
        else:
            self._reply(404, {"message": "Not Found"})

    def do_POST(self) -> None:  # noqa: N802
        body = self._record()
        assert body is not None
        c = {
            "id": 100 + len(self.comments),
            "body": body["body"],
            "user": {"login": "github-actions[bot]", "type": "Bot"},
        }
        self.comments.append(c)
        self._reply(201, c)

    def do_PATCH(self) -> None:  # noqa: N802
        body = self._record()
        assert body is not None
        cid = int(self.path.rsplit("/", 1)[1])
        for c in self.comments:
            if c["id"] == cid:
                c["body"] = body["body"]
                self._reply(200, c)
                return
        self._reply(404, {"message": "Not Found"})

    def log_message(self, *args: Any) -> None:
        pass


# A PR author's comment carrying the marker: the action must leave it alone.
PLANTED = {
    "id": 2,
    "body": "<!-- idlgen-diff -->\nall good, merge it",
    "user": {"login": "mallory", "type": "User"},
}


@pytest.fixture()
def fake_github() -> Iterator[tuple[str, type[_FakeGitHub]]]:
    planted = dict(PLANTED)
    handler = type(
        "Handler",
        (_FakeGitHub,),
        {"comments": [{"id": 1, "body": "LGTM", "user": {"type": "User"}}, planted], "log": []},
    )
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.timeout = 10
    t = threading.Thread(target=server.serve_forever, daemon=True)
    t.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", handler
    finally:
        server.shutdown()
        server.server_close()


def _git(cwd: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@example.invalid", *args],
        cwd=cwd,
        check=True,
        capture_output=True,
    )


@pytest.mark.skipif(shutil.which("git") is None, reason="git missing")
def test_action_diff_annotates_summarises_and_keeps_one_sticky_comment(
    project: Path, tmp_path: Path, fake_github: tuple[str, type[_FakeGitHub]]
) -> None:
    api, handler = fake_github
    _git(project, "init", "-q", "-b", "main")
    _git(project, "add", "-A")
    _git(project, "commit", "-q", "-m", "base")
    (project / "idl/demo/v1_0/Types.idl").write_text(NEW)  # drops a field: breaking
    event = tmp_path / "event.json"
    event.write_text(json.dumps({"pull_request": {"number": 5}}))
    summary = tmp_path / "summary.md"
    env = _env(
        INPUT_COMMAND="diff",
        INPUT_BASE_REF="main",
        INPUT_FAIL_ON="breaking",
        INPUT_COMMENT="true",
        GITHUB_API_URL=api,
        GITHUB_REPOSITORY="o/r",
        GITHUB_EVENT_PATH=str(event),
        GITHUB_TOKEN="secret-token",
        GITHUB_STEP_SUMMARY=str(summary),
    )

    def run() -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, str(SCRIPT)],
            cwd=project,
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )

    r = run()
    assert r.returncode == 1, r.stderr  # a breaking change, fail-on breaking
    assert "::error " in r.stdout and "Point" in r.stdout  # annotations
    assert "idlgen: PR comment created" in r.stdout
    md = summary.read_text()
    assert "Point" in md and "breaking" in md
    assert [c["id"] for c in handler.comments] == [1, 2, 102]
    body = handler.comments[2]["body"]  # the report, starting with the marker line
    assert body.startswith("<!-- idlgen-diff -->") and md in body

    r = run()
    assert r.returncode == 1 and "idlgen: PR comment updated" in r.stdout
    assert len(handler.comments) == 3 and handler.comments[2]["body"] == body
    assert handler.comments[1] == PLANTED  # the planted marker was not taken over
    methods = [m for m, *_ in handler.log]
    assert methods == ["GET", "GET", "POST", "GET", "GET", "PATCH"]  # GET /user, then comments
    assert all(auth == "Bearer secret-token" for *_, auth in handler.log)
    assert handler.log[-1][1] == "/repos/o/r/issues/comments/102"

    env["INPUT_FAIL_ON"] = "never"
    env["INPUT_COMMENT"] = "false"
    r = run()
    assert r.returncode == 0 and "PR comment" not in r.stdout
    assert len(handler.log) == 6  # no comment requests


def test_action_check_and_bad_command(project: Path) -> None:
    base = [sys.executable, str(SCRIPT)]
    r = subprocess.run(
        base, cwd=project, env=_env(INPUT_COMMAND="check"), capture_output=True, text=True
    )
    assert r.returncode == 1  # nothing generated yet: stale
    (project / "idl/demo/v1_0/Types.idl").write_text(OLD.replace("int y;", "Strng y;"))
    r = subprocess.run(
        base, cwd=project, env=_env(INPUT_COMMAND="check"), capture_output=True, text=True
    )
    assert r.returncode == 1 and "::error file=idl/demo/v1_0/Types.idl" in r.stdout
    r = subprocess.run(
        base, cwd=project, env=_env(INPUT_COMMAND="lint"), capture_output=True, text=True
    )
    assert r.returncode == 2 and "must be 'check' or 'diff'" in r.stdout


def _git(cwd: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-c", "user.email=ci@example.invalid", "-c", "user.name=ci", *args],
        cwd=cwd,
        check=True,
        capture_output=True,
    )


@pytest.mark.skipif(shutil.which("git") is None, reason="git missing")
def test_pre_commit_try_repo_runs_both_hooks(tmp_path: Path) -> None:
    """As a user adopts the hooks: check fails on a fresh schema, build regenerates (and so
    fails the commit, for review), and once the output is committed check passes."""
    pytest.importorskip("pre_commit")
    project = tmp_path / "project"
    (project / "schemas/demo/v1_0").mkdir(parents=True)
    (project / "pyproject.toml").write_text(
        '[tool.idlgen]\ninputs = ["schemas"]\nout = "gen"\nroots = ["ohos.hdi:schemas"]\n'
    )
    (project / "schemas/demo/v1_0/Types.idl").write_text(
        "package ohos.hdi.demo.v1_0;\nstruct S { int a; };\n"
    )
    _git(project, "init", "-q")
    _git(project, "add", "-A")
    _git(project, "commit", "-qm", "schemas")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env["PRE_COMMIT_HOME"] = str(tmp_path / "pre-commit-home")

    def try_repo(hook: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "pre_commit", "try-repo", str(REPO), hook, "--all-files"],
            cwd=project,
            env=env,
            capture_output=True,
            text=True,
            timeout=600,
        )

    r = try_repo("idlgen-check")
    assert r.returncode == 1 and "out of date" in r.stdout, r.stdout + r.stderr
    assert not (project / "gen").exists()
    r = try_repo("idlgen-build")
    assert r.returncode == 0, r.stdout + r.stderr  # new files only: nothing tracked changed
    assert (project / "gen/ohos/hdi/demo/v1_0/types.py").is_file()
    _git(project, "add", "-A")
    _git(project, "commit", "-qm", "generated")
    r = try_repo("idlgen-check")
    assert r.returncode == 0, r.stdout + r.stderr
    # A schema change: build rewrites committed files, so pre-commit stops the commit for review.
    (project / "schemas/demo/v1_0/Types.idl").write_text(
        "package ohos.hdi.demo.v1_0;\nstruct S { int a; int b; };\n"
    )
    _git(project, "commit", "-qam", "schema change")
    r = try_repo("idlgen-build")
    assert r.returncode == 1 and "files were modified by this hook" in r.stdout, r.stdout
    _git(project, "commit", "-qam", "regenerated")
    r = try_repo("idlgen-check")
    assert r.returncode == 0, r.stdout + r.stderr


# --- issue 20, point 1: the Action trusts only the base branch ----------------------------------


def _pr_repo(project: Path) -> None:
    _git(project, "init", "-q", "-b", "main")
    _git(project, "add", "-A")
    _git(project, "commit", "-q", "-m", "base")


def _action_env(api: str, tmp_path: Path, **extra: str) -> dict[str, str]:
    event = tmp_path / "event.json"
    event.write_text(json.dumps({"pull_request": {"number": 5}}))
    base = dict(
        INPUT_COMMAND="diff",
        INPUT_BASE_REF="main",
        INPUT_FAIL_ON="breaking",
        INPUT_COMMENT="true",
        GITHUB_API_URL=api,
        GITHUB_REPOSITORY="o/r",
        GITHUB_EVENT_PATH=str(event),
        GITHUB_TOKEN="secret-token",
        GITHUB_STEP_SUMMARY=str(tmp_path / "summary.md"),
    )
    return _env(**{**base, **extra})


def _run_action(project: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(SCRIPT)], cwd=project, env=env, capture_output=True, text=True,
        timeout=120,
    )  # fmt: skip


@pytest.mark.skipif(shutil.which("git") is None, reason="git missing")
def test_action_uses_the_base_config_not_the_prs(
    project: Path, tmp_path: Path, fake_github: tuple[str, type[_FakeGitHub]]
) -> None:
    """A PR that suppresses every rule and points include at / gets neither applied."""
    api, handler = fake_github
    secret = tmp_path / "secret.fbs"
    secret.write_text("SECRET-7731")
    _pr_repo(project)
    (project / "idl/demo/v1_0/Types.idl").write_text(NEW)  # breaking
    (project / "pyproject.toml").write_text(
        PYPROJECT
        + f'include = ["{tmp_path}"]\n'
        + '[tool.idlgen.diff]\nsuppress = [{ rule = "*", path = "*", reason = "trust me" }]\n'
    )
    r = _run_action(project, _action_env(api, tmp_path))
    assert r.returncode == 1, r.stdout + r.stderr  # the breaking change still fails
    assert "::warning::idlgen: the pull request changes [tool.idlgen]" in r.stdout
    body = handler.comments[-1]["body"]
    assert body.startswith("<!-- idlgen-diff -->\n")
    assert "changes idlgen's configuration" in body and "`diff`" in body and "`include`" in body
    assert "Point" in body and "breaking" in body
    assert "SECRET-7731" not in r.stdout + r.stderr + body
    assert not list(project.glob(".idlgen-base-*"))  # the trusted copy is cleaned up
    # the PR's baseline file is not the base's: it is not applied either
    (project / "pyproject.toml").write_text(
        PYPROJECT + '[tool.idlgen.diff]\nbaseline = "baseline.json"\n'
    )
    (project / "baseline.json").write_text('{"findings": []}\n')
    _git(project, "add", "pyproject.toml", "baseline.json")
    _git(project, "commit", "-q", "-m", "baseline", "--", "pyproject.toml", "baseline.json")
    r = subprocess.run(
        [sys.executable, "-m", "idlgen", "diff", "--against", "main", "--update-baseline"],
        cwd=project, env=_env(), capture_output=True, text=True,
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    accepting = (project / "baseline.json").read_text()
    (project / "baseline.json").write_text('{"findings": []}\n')
    (project / "baseline.json").write_text(accepting)  # the PR accepts its own break
    r = _run_action(project, _action_env(api, tmp_path))
    assert r.returncode == 1, r.stdout + r.stderr
    assert "diff.baseline file baseline.json" in handler.comments[-1]["body"]


@pytest.mark.skipif(shutil.which("git") is None, reason="git missing")
def test_action_check_uses_the_base_config(project: Path, tmp_path: Path) -> None:
    _pr_repo(project)
    r = _run_action(project, _action_env("http://127.0.0.1:9", tmp_path, INPUT_COMMAND="check"))
    assert r.returncode == 1 and "stale" in r.stdout + r.stderr  # nothing generated yet
    (project / "pyproject.toml").write_text(PYPROJECT.replace('out = "gen"', 'out = "elsewhere"'))
    r = _run_action(project, _action_env("http://127.0.0.1:9", tmp_path, INPUT_COMMAND="check"))
    assert "elsewhere" not in r.stdout + r.stderr and "gen" in r.stdout + r.stderr
    assert "the pull request changes [tool.idlgen] (out)" in r.stdout


def test_idlgen_gets_no_token_or_actions_variables(project: Path, tmp_path: Path) -> None:
    """A stand-in ``idlgen`` module records the environment the Action gives it."""
    fake = tmp_path / "fake"
    (fake / "idlgen").mkdir(parents=True)
    dump = tmp_path / "env.json"
    (fake / "idlgen" / "__init__.py").write_text("")
    (fake / "idlgen" / "__main__.py").write_text(
        f"import json, os\nopen({str(dump)!r}, 'w').write(json.dumps(dict(os.environ)))\n"
    )
    env = _env(
        INPUT_COMMAND="check",
        GITHUB_TOKEN="secret-token",
        INPUT_GITHUB_TOKEN="secret-token",
        ACTIONS_RUNTIME_TOKEN="rt",
        ACTIONS_ID_TOKEN_REQUEST_TOKEN="idt",
        ACTIONS_ID_TOKEN_REQUEST_URL="http://127.0.0.1:9/oidc",
        ACTIONS_CACHE_URL="http://127.0.0.1:9/cache",
        ACTIONS_RESULTS_URL="http://127.0.0.1:9/results",
        GH_TOKEN="gh",
        GITHUB_REPOSITORY="o/r",
    )
    env["PYTHONPATH"] = str(fake)
    r = _run_action(project, env)
    assert r.returncode == 0, r.stderr
    seen = json.loads(dump.read_text())
    assert "secret-token" not in json.dumps(seen)
    assert not [k for k in seen if k.startswith("ACTIONS_") or "TOKEN" in k]
    assert seen["GITHUB_REPOSITORY"] == "o/r"  # the rest is passed on


@pytest.mark.skipif(shutil.which("git") is None, reason="git missing")
def test_sticky_comment_is_the_tokens_own(
    project: Path, tmp_path: Path, fake_github: tuple[str, type[_FakeGitHub]]
) -> None:
    """Another bot quoting the marker is left alone; with a token whose identity GET /user
    tells, only that login's comment is updated."""
    api, handler = fake_github
    other_bot = {"id": 3, "body": "quoting <!-- idlgen-diff -->", "user": {"login": "renovate[bot]", "type": "Bot"}}  # fmt: skip
    handler.comments.append(dict(other_bot))
    _pr_repo(project)
    (project / "idl/demo/v1_0/Types.idl").write_text(NEW)
    r = _run_action(project, _action_env(api, tmp_path))
    assert "PR comment created" in r.stdout, r.stdout + r.stderr
    assert handler.comments[2] == other_bot and len(handler.comments) == 4
    r = _run_action(project, _action_env(api, tmp_path))
    assert "PR comment updated" in r.stdout and len(handler.comments) == 4
    assert handler.comments[2] == other_bot and handler.comments[1] == PLANTED
    assert ("GET", "/user") in [(m, p) for m, p, *_ in handler.log]


def test_readme_ci_snippets_work_as_written(project: Path) -> None:
    """No placeholder to guess; the pre-commit snippet's hook runs; the workflow's local
    Action path is the one its base-branch checkout creates; both say where idlgen comes from."""
    readme = (REPO / "README.md").read_text()
    section = readme.split("### CI: pre-commit and the GitHub Action", 1)[1].split("\n### ", 1)[0]
    assert "OWNER" not in section and "<this repository" not in section
    blocks = [
        yaml.safe_load(b) for b in section.split("```yaml\n")[1:] for b in [b.split("```")[0]]
    ]
    pre_commit = next(b for b in blocks if "repos" in b)
    workflow = next(b for b in blocks if "jobs" in b)
    hook = pre_commit["repos"][0]["hooks"][0]
    shipped = {h["id"]: h for h in yaml.safe_load((REPO / ".pre-commit-hooks.yaml").read_text())}
    assert hook["files"] == shipped[hook["id"]]["files"]
    argv = shlex.split(hook["entry"])
    assert argv[0] == "idlgen"
    r = subprocess.run(
        [sys.executable, "-m", "idlgen", *argv[1:]], cwd=project, env=_env(),
        capture_output=True, text=True,
    )  # fmt: skip
    assert r.returncode == 1 and "stale" in r.stdout + r.stderr  # runs: nothing generated yet
    steps = workflow["jobs"]["idlgen"]["steps"]
    paths = {s["with"]["path"] for s in steps if s.get("uses", "").startswith("actions/checkout")
             and "path" in s.get("with", {})}  # fmt: skip
    local = [s["uses"] for s in steps if s.get("uses", "").startswith("./")]
    assert local and all(u[2:].split("/")[0] in paths for u in local)
    base = [s for s in steps if s.get("with", {}).get("path") in paths][0]
    assert base["with"]["ref"] == "${{ github.base_ref }}"  # the Action comes from the base
    assert "github.action_path" in section and "PyPI" in section
    action = yaml.safe_load((REPO / "action.yml").read_text())
    install = next(s for s in action["runs"]["steps"] if s.get("name") == "Install idlgen")
    assert "github.action_path" in install["run"]
