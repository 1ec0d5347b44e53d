"""The repository's NNRt HDI schemas carry upstream facts exactly, and no upstream prose.

Companion files (NnrtTypes, ModelTypes, INnrtDevice, IPreparedModel) were written from the
OpenHarmony drivers_interface files: after removing comments, their token streams must equal
upstream's. The NodeAttrTypes seeds are committed verbatim.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO / ".." / "shared"
CORPUS = SHARED / "corpus" / "hdi" / "drivers_interface" / "nnrt"
SEEDS = SHARED / "seeds"
OURS = REPO / "schemas" / "hdi" / "nnrt"

if not SHARED.is_dir():
    pytest.skip("../shared reference material is absent", allow_module_level=True)

VERSIONS = ("v1_0", "v2_1")
COMPANIONS = ("NnrtTypes", "ModelTypes", "INnrtDevice", "IPreparedModel")

_COMMENT = re.compile(r"//[^\n]*|/\*.*?\*/", re.S)
# Identifiers keep their dots (as hdi-gen's lexer does); numbers keep any suffix.
_TOKEN = re.compile(r"[A-Za-z_][A-Za-z0-9_.]*|0[xX][0-9A-Fa-f]+|[0-9][A-Za-z0-9_]*|<<|>>|\S")
_DOC = re.compile(r"/\*\*(.*?)\*/", re.S)


def tokens(text: str) -> list[str]:
    return _TOKEN.findall(_COMMENT.sub(" ", text))


def comment_words(text: str) -> str:
    """All comment text of a file, whitespace- and '*'-normalised, for substring search."""
    body = " ".join(m.group(0) for m in _COMMENT.finditer(text))
    return " ".join(body.replace("*", " ").split()).lower()


def _read(path: Path) -> str:
    return path.read_text(encoding="utf-8")


CASES = [(v, n) for v in VERSIONS for n in COMPANIONS]


@pytest.mark.parametrize(("ver", "name"), CASES, ids=[f"{v}/{n}" for v, n in CASES])
def test_companion_tokens_equal_upstream(ver: str, name: str) -> None:
    ours = tokens(_read(OURS / ver / f"{name}.idl"))
    upstream = tokens(_read(CORPUS / ver / f"{name}.idl"))
    assert len(ours) > 10
    assert ours == upstream


@pytest.mark.parametrize(("ver", "name"), CASES, ids=[f"{v}/{n}" for v, n in CASES])
def test_companion_carries_no_upstream_prose(ver: str, name: str) -> None:
    text = _read(OURS / ver / f"{name}.idl")
    lines = text.splitlines()
    assert lines[0] == (
        f"// Facts (names, types, values, order) from OpenHarmony drivers_interface "
        f"nnrt/{ver}/{name}.idl; prose omitted."
    )
    # hdi-gen takes a leading block comment as a license; ours must start with `package`.
    assert tokens(text)[:1] == ["package"]
    assert "Copyright" not in text and "License" not in text
    upstream_comments = comment_words(_read(CORPUS / ver / f"{name}.idl"))
    docs = _DOC.findall(text)
    assert docs, "expected our own one-line doc comments"
    for doc in docs:
        assert "\n" not in doc
        words = " ".join(doc.split()).lower()
        assert words and words not in upstream_comments, doc
    # Every comment in the file is either the header line or a one-line doc comment.
    for m in _COMMENT.finditer(text):
        assert m.group(0).startswith("/**") or m.start() == 0, m.group(0)


@pytest.mark.parametrize("ver", VERSIONS)
def test_node_attr_types_is_the_seed(ver: str) -> None:
    ours = (OURS / ver / "NodeAttrTypes.idl").read_bytes()
    seed = (SEEDS / f"nnrt_{ver}_NodeAttrTypes.idl").read_bytes()
    assert ours == seed


@pytest.mark.parametrize("ver", VERSIONS)
def test_node_attr_seed_matches_corpus_tokens(ver: str) -> None:
    # The seeds differ from the corpus copies only in prose/whitespace, not in declarations.
    seed = tokens(_read(SEEDS / f"nnrt_{ver}_NodeAttrTypes.idl"))
    assert seed == tokens(_read(CORPUS / ver / "NodeAttrTypes.idl"))


def methods(toks: list[str]) -> list[str]:
    """Method names of an interface file: a capitalised identifier directly before '('."""
    return [t for t, nxt in zip(toks, toks[1:]) if nxt == "(" and t[0].isupper()]


def test_version_facts_that_tests_elsewhere_rely_on() -> None:
    """Cross-version differences stated in hdi.md section 5, counted from our files."""
    v1 = _read(OURS / "v1_0" / "NnrtTypes.idl")
    v2 = _read(OURS / "v2_1" / "NnrtTypes.idl")
    assert tokens(v1).count("NODE_TYPE_NONE") == 1
    assert len(re.findall(r"\bNODE_TYPE_\w+", v1)) == 49
    assert len(re.findall(r"\bNODE_TYPE_\w+", v2)) == 97
    assert "NNRT_ReturnCode" not in v1 and "NNRT_ReturnCode" in v2
    assert "REDUCE_MODE_L2" not in v1 and "REDUCE_MODE_L2 = 8" in v2
    dev1 = tokens(_read(OURS / "v1_0" / "INnrtDevice.idl"))
    dev2 = tokens(_read(OURS / "v2_1" / "INnrtDevice.idl"))
    assert len(methods(dev1)) == 14 and len(methods(dev2)) == 15
    assert set(methods(dev2)) - set(methods(dev1)) == {"PrepareOfflineModel"}
