"""The idlgen GitHub Action's step: ``idlgen check`` or ``idlgen diff`` with PR reporting.

Standard library only (it runs before anything but idlgen is installed). Inputs come as
``INPUT_*`` environment variables (see action.yml); GitHub's own ``GITHUB_*`` variables give
the API URL, repository, event and token.

For ``diff`` one idlgen run produces everything: ``--format github`` prints the annotations and
writes the markdown report to the file named by ``GITHUB_STEP_SUMMARY``, which this script
points at a temporary file, copies into the real job summary and posts as the PR comment. The
comment is sticky: the one whose body contains the marker line *and* that the token's own
identity wrote is edited, never duplicated, never someone else's.
The exit code is idlgen's; a failure to comment is a warning, not a failed check.

Trust: only the base branch is trusted. With a base ref (a pull request, or ``base-ref``),
idlgen's configuration (``[tool.idlgen]``: inputs, out, roots, include, the diff policy and
suppressions) and the diff baseline file are read from the base ref (``git show
BASE:pyproject.toml``), never from the pull request's work tree; the pull request's changes to
them are listed in the comment and the log, not applied. idlgen runs without the token and
without any ``ACTIONS_*`` variable in its environment.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import tomllib
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

MARKER = "<!-- idlgen-diff -->"
# The identity of the default GITHUB_TOKEN (an app installation token cannot ask GET /user).
ACTIONS_BOT = "github-actions[bot]"
# Never passed to idlgen: the token and the runner's own credentials and endpoints.
_SECRET_ENV = ("GITHUB_TOKEN", "INPUT_GITHUB_TOKEN", "INPUT_GITHUB-TOKEN", "GH_TOKEN")
MAX_PAGES = 10  # comments are listed 100 a page; a PR with more than 1000 is not searched further
TIMEOUT = 30


def idlgen_env(extra: dict[str, str] | None = None) -> dict[str, str]:
    """idlgen's environment: this process's, without the token or any ``ACTIONS_*``."""
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in _SECRET_ENV and not k.startswith("ACTIONS_") and "TOKEN" not in k.upper()
    }
    env.update(extra or {})
    return env


def _idlgen(*args: str, env: dict[str, str] | None = None) -> int:
    return subprocess.run(
        [sys.executable, "-m", "idlgen", *args], env=idlgen_env(env)
    ).returncode


def _log_safe(s: str) -> str:
    """One line of text for a workflow command's message (no line breaks, no commands)."""
    s = s.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")
    return s.replace("::", ":\u200b:").replace("##[", "#\u200b#[")


def _git(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["git", *args], capture_output=True, text=True)


def _resolve_ref(ref: str) -> str:
    """A revision git can read: the ref itself, origin/REF, or REF fetched from origin."""
    for cand in (ref, f"origin/{ref}"):
        if _git("rev-parse", "--verify", "--quiet", f"{cand}^{{commit}}").returncode == 0:
            return cand
    if _git("fetch", "--no-tags", "--depth=1", "origin", ref).returncode == 0:
        return "FETCH_HEAD"
    raise SystemExit(f"::error::idlgen: cannot find base ref '{ref}' (fetch it or set base-ref)")


def _git_show(rev: str, path: str) -> bytes | None:
    """A file's bytes at ``rev`` (``path`` relative to the working directory), or None."""
    r = subprocess.run(["git", "show", f"{rev}:./{path}"], capture_output=True)
    return r.stdout if r.returncode == 0 else None


def _idlgen_table(raw: bytes | None) -> dict[str, Any] | None:
    if raw is None:
        return None
    try:
        tool = tomllib.loads(raw.decode("utf-8")).get("tool", {})
    except (UnicodeDecodeError, tomllib.TOMLDecodeError):
        return None
    table = tool.get("idlgen") if isinstance(tool, dict) else None
    return table if isinstance(table, dict) else None


def _changed_keys(base: dict[str, Any], head: dict[str, Any], prefix: str = "") -> list[str]:
    keys = []
    for k in sorted(set(base) | set(head)):
        a, b = base.get(k), head.get(k)
        if isinstance(a, dict) and isinstance(b, dict):
            keys += _changed_keys(a, b, f"{prefix}{k}.")
        elif a != b:
            keys.append(f"{prefix}{k}")
    return keys


class TrustedConfig:
    """The base ref's pyproject.toml (and baseline), written to private temporary files.

    The config file is created next to the work tree's pyproject.toml (so its relative paths
    mean what they mean there) with a fresh random name, ``O_EXCL`` (a planted symlink cannot
    redirect the write), and removed afterwards.
    """

    def __init__(self, rev: str, tmp: Path) -> None:
        self.rev = rev
        self.raw = _git_show(rev, "pyproject.toml")
        self.table = _idlgen_table(self.raw) or {}
        head_raw = Path("pyproject.toml").read_bytes() if Path("pyproject.toml").is_file() else None
        head = _idlgen_table(head_raw) or {}
        self.changes = _changed_keys(self.table, head)
        if (self.raw is None) != (head_raw is None) and not self.changes:
            self.changes = ["pyproject.toml"]
        fd, name = tempfile.mkstemp(prefix=".idlgen-base-", suffix=".toml", dir=".")
        with os.fdopen(fd, "wb") as f:
            f.write(self.raw if self.raw is not None and self.table else b"")  # else empty
        self.path = Path(name)
        self.baseline: Path | None = None
        diff = self.table.get("diff")
        rel = diff.get("baseline") if isinstance(diff, dict) else None
        if isinstance(rel, str):
            data = _git_show(rev, rel)
            self.baseline = tmp / "baseline.json"
            # no baseline file on the base ref: nothing is accepted
            self.baseline.write_bytes(data if data is not None else b'{"findings": []}\n')
            work = Path(rel)
            if (work.read_bytes() if work.is_file() else None) != data:
                self.changes.append(f"diff.baseline file {rel}")

    def args(self) -> list[str]:
        out = ["--config", str(self.path)]
        if self.baseline is not None:
            out += ["--baseline", str(self.baseline)]
        return out

    def note(self) -> str:
        """Markdown for the comment when the pull request changes the configuration."""
        if not self.changes:
            return ""
        keys = ", ".join(f"`{k}`" for k in self.changes[:20])
        return (
            f"> **Note:** this pull request changes idlgen's configuration ({keys}). "
            f"The report uses the base branch's configuration; the changes take effect "
            f"once merged.\n\n"
        )

    def warn(self) -> None:
        if self.changes:
            keys = _log_safe(", ".join(self.changes[:20]))
            print(
                f"::warning::idlgen: the pull request changes [tool.idlgen] ({keys}); "
                "using the base branch's configuration"
            )

    def close(self) -> None:
        try:
            self.path.unlink()
        except OSError:
            pass


def _default_paths(table: dict[str, Any]) -> list[str]:
    inputs = table.get("inputs", [])
    return [str(p) for p in inputs] if isinstance(inputs, list) else []


def _api(method: str, url: str, token: str, body: dict[str, Any] | None = None) -> Any:
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(url, data=data, method=method)
    req.add_header("Accept", "application/vnd.github+json")
    req.add_header("Authorization", f"Bearer {token}")
    req.add_header("X-GitHub-Api-Version", "2022-11-28")
    if data is not None:
        req.add_header("Content-Type", "application/json")
    with urllib.request.urlopen(req, timeout=TIMEOUT) as resp:
        return json.loads(resp.read() or b"null")


def _pr_number() -> int | None:
    path = os.environ.get("GITHUB_EVENT_PATH")
    if not path:
        return None
    try:
        event = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    pr = event.get("pull_request") or {}
    number = pr.get("number") or (event.get("issue") or {}).get("number")
    return number if isinstance(number, int) else None


def whoami(api: str, token: str) -> str:
    """The login the token acts as: GET /user, or the Actions bot for the default token (an
    installation token gets 403 there)."""
    try:
        me = _api("GET", f"{api}/user", token)
    except urllib.error.HTTPError:
        return ACTIONS_BOT
    login = me.get("login") if isinstance(me, dict) else None
    return login if isinstance(login, str) and login else ACTIONS_BOT


def upsert_comment(body: str) -> str:
    """Create or update the sticky comment; returns 'created', 'updated' or why it was skipped."""
    token = os.environ.get("GITHUB_TOKEN", "")
    repo = os.environ.get("GITHUB_REPOSITORY", "")
    number = _pr_number()
    if not token or not repo or number is None:
        return "skipped (no pull request, repository or token)"
    api = os.environ.get("GITHUB_API_URL", "https://api.github.com").rstrip("/")
    issue = f"{api}/repos/{repo}/issues/{number}/comments"
    me = whoami(api, token)
    for page in range(1, MAX_PAGES + 1):
        comments = _api("GET", f"{issue}?per_page=100&page={page}", token)
        for c in comments:
            # only a comment the token's own identity wrote: a PR author, or another bot that
            # quotes the marker, must not have their comment overwritten (or the report shown
            # as theirs)
            author = c.get("user") or {}
            if MARKER in str(c.get("body", "")) and author.get("login") == me:
                _api(
                    "PATCH", f"{api}/repos/{repo}/issues/comments/{c['id']}", token, {"body": body}
                )
                return "updated"
        if len(comments) < 100:
            break
    _api("POST", issue, token, {"body": body})
    return "created"


def _base_ref() -> str:
    return os.environ.get("INPUT_BASE_REF") or os.environ.get("GITHUB_BASE_REF", "")


def run_diff() -> int:
    base = _base_ref()
    if not base:
        print("::error::idlgen diff: no base-ref and this is not a pull request")
        return 2
    rev = _resolve_ref(base)
    fail_on = os.environ.get("INPUT_FAIL_ON") or "breaking"
    with tempfile.TemporaryDirectory(prefix="idlgen-action-") as tmp:
        trusted = TrustedConfig(rev, Path(tmp))
        try:
            trusted.warn()
            paths = os.environ.get("INPUT_PATHS", "").split() or _default_paths(trusted.table)
            if not paths:
                print("::error::idlgen diff: no paths and no [tool.idlgen] inputs on the base ref")
                return 2
            report = Path(tmp) / "report.md"
            report.touch()
            rc = _idlgen(
                "diff", *paths, "--against", rev, *trusted.args(), "--format", "github",
                "--fail-on", fail_on, env={"GITHUB_STEP_SUMMARY": str(report)},
            )  # fmt: skip
            markdown = report.read_text(encoding="utf-8")
        finally:
            trusted.close()
    if not markdown:
        return rc  # schema or usage errors: idlgen printed them; nothing to publish
    note = trusted.note()
    if note:
        head, sep, rest = markdown.partition("\n") if markdown.startswith(MARKER) else ("", "", markdown)
        markdown = f"{head}{sep}{note}{rest}"
    summary = os.environ.get("GITHUB_STEP_SUMMARY")
    if summary:
        with open(summary, "a", encoding="utf-8") as f:
            f.write(markdown)
    if os.environ.get("INPUT_COMMENT", "true").strip().lower() == "true":
        body = markdown if markdown.startswith(MARKER) else f"{MARKER}\n{markdown}"
        try:
            print(f"idlgen: PR comment {upsert_comment(body)}")
        except (urllib.error.URLError, OSError, ValueError, KeyError, TypeError) as e:
            print(f"::warning::idlgen: could not post the PR comment: {e}")
    return rc


def main() -> int:
    command = os.environ.get("INPUT_COMMAND", "check").strip()
    if command == "check":
        base = _base_ref()
        if not base:  # a push: the branch itself is what is trusted
            return _idlgen("check", "--format", "github")
        with tempfile.TemporaryDirectory(prefix="idlgen-action-") as tmp:
            trusted = TrustedConfig(_resolve_ref(base), Path(tmp))
            try:
                trusted.warn()
                return _idlgen("check", "--config", str(trusted.path), "--format", "github")
            finally:
                trusted.close()
    if command == "diff":
        return run_diff()
    print(f"::error::idlgen action: command must be 'check' or 'diff', not '{command}'")
    return 2


if __name__ == "__main__":
    raise SystemExit(main())
