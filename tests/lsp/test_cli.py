"""``idlgen lsp`` without the ``[lsp]`` extra: exit 2 naming it (no server, no traceback)."""

from __future__ import annotations

import pytest

from idlgen.cli.main import main
from idlgen.lsp import cli


def test_without_the_extra_exits_2_naming_it(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(cli, "_importable", lambda name: name != "pygls")
    assert main(["lsp"]) == 2
    err = capsys.readouterr().err
    assert "pip install 'idlgen[lsp]'" in err and "missing: pygls" in err


def test_help_has_examples_and_exit_codes(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["lsp", "--help"]) == 0
    out = capsys.readouterr().out
    assert "usage: idlgen lsp" in out and "examples:" in out and "123  internal error" in out
