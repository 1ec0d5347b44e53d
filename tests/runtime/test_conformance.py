"""The ONNX backend node cases through the adapter and the NNRt kernels."""

from __future__ import annotations

from collections import Counter

import pytest

pytest.importorskip("onnx")

from idlgen.tools import onnx_conformance as C  # noqa: E402


@pytest.fixture(scope="module")
def outcomes() -> list[C.Outcome]:
    result, _ = C.run_conformance(C.DEFAULT_PACKAGE)
    return result


def test_no_failures_and_enough_passes(outcomes: list[C.Outcome]) -> None:
    counts = Counter(o.status for o in outcomes)
    failures = [f"{o.name}: {o.detail}" for o in outcomes if o.status == "fail"]
    assert failures == []
    assert counts["pass"] >= 600


def test_every_skip_names_an_onnx_feature(outcomes: list[C.Outcome]) -> None:
    for o in outcomes:
        if o.status == "skip":
            assert o.detail and "not implemented" not in o.detail, o


def test_summary_line_format(outcomes: list[C.Outcome]) -> None:
    line = C.summary(outcomes)
    assert line.startswith("conformance: ") and line.endswith(" mapped ONNX cases")


def test_a_wrong_kernel_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    """The harness really compares: break Softmax and its cases fail."""
    from idlgen.runtime import norm

    monkeypatch.setattr(norm, "softmax", lambda inputs, *, axis=(-1,): [inputs[0] * 1.01])
    runner = C.Runner(None)
    cases = [c for c in C.iter_cases() if c.name == "test_softmax_example"]
    assert cases and C.run_case(runner, cases[0]).status == "fail"
