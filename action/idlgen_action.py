"""The idlgen GitHub Action's step: ``idlgen check`` or ``idlgen diff`` with PR reporting.

Standard library only (it runs before anything but idlgen is installed). Inputs come as
``INPUT_*`` environment variables (see action.yml); GitHub's own ``GITHUB_*`` variables give
the API URL, repository, event and token.

For ``diff`` one idlgen run produces everything: ``--format github`` prints the annotations and
writes the markdown report to the file named by ``GITHUB_STEP_SUMMARY``, which this script
points at a temporary file, copies into the real job summary and posts as the PR comment. The
comment is sticky: the one whose body contains the marker line is edited, never duplicated.
The exit code is idlgen's; a failure to comment is a warning, not a failed check.
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
MAX_PAGES = 10  # comments are listed 100 a page; a PR with more than 1000 is not searched further
TIMEOUT = 30


def _idlgen(*args: str, env: dict[str, str] | None = None) -> int:
    return subprocess.run([sys.executable, "-m", "idlgen", *args], env=env).returncode


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


def _default_paths() -> list[str]:
    try:
        with open("pyproject.toml", "rb") as f:
            table = tomllib.load(f).get("tool", {}).get("idlgen", {})
    except (OSError, tomllib.TOMLDecodeError):
        table = {}
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


def upsert_comment(body: str) -> str:
    """Create or update the sticky comment; returns 'created', 'updated' or why it was skipped."""
    token = os.environ.get("GITHUB_TOKEN", "")
    repo = os.environ.get("GITHUB_REPOSITORY", "")
    number = _pr_number()
    if not token or not repo or number is None:
        return "skipped (no pull request, repository or token)"
    api = os.environ.get("GITHUB_API_URL", "https://api.github.com").rstrip("/")
    issue = f"{api}/repos/{repo}/issues/{number}/comments"
    for page in range(1, MAX_PAGES + 1):
        comments = _api("GET", f"{issue}?per_page=100&page={page}", token)
        for c in comments:
            # only a comment a bot (the token's own identity) wrote: a PR author could plant
            # the marker in a comment of theirs to have the report shown as theirs
            author = c.get("user") or {}
            if MARKER in str(c.get("body", "")) and author.get("type") == "Bot":
                _api(
                    "PATCH", f"{api}/repos/{repo}/issues/comments/{c['id']}", token, {"body": body}
                )
                return "updated"
        if len(comments) < 100:
            break
    _api("POST", issue, token, {"body": body})
    return "created"


def run_diff() -> int:
    base = os.environ.get("INPUT_BASE_REF") or os.environ.get("GITHUB_BASE_REF", "")
    if not base:
        print("::error::idlgen diff: no base-ref and this is not a pull request")
        return 2
    paths = os.environ.get("INPUT_PATHS", "").split() or _default_paths()
    if not paths:
        print("::error::idlgen diff: no paths and no [tool.idlgen] inputs")
        return 2
    fail_on = os.environ.get("INPUT_FAIL_ON") or "breaking"
    with tempfile.TemporaryDirectory(prefix="idlgen-action-") as tmp:
        report = Path(tmp) / "report.md"
        report.touch()
        env = dict(os.environ, GITHUB_STEP_SUMMARY=str(report))
        rc = _idlgen(
            "diff", *paths, "--against", _resolve_ref(base), "--format", "github",
            "--fail-on", fail_on, env=env,
        )  # fmt: skip
        markdown = report.read_text(encoding="utf-8")
    if not markdown:
        return rc  # schema or usage errors: idlgen printed them; nothing to publish
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
        return _idlgen("check", "--format", "github")
    if command == "diff":
        return run_diff()
    print(f"::error::idlgen action: command must be 'check' or 'diff', not '{command}'")
    return 2


if __name__ == "__main__":
    raise SystemExit(main())
