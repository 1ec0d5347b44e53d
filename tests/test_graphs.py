"""The front ends' one cycle search, held to brute force on random small graphs."""

from __future__ import annotations

from collections.abc import Sequence

from hypothesis import given, settings
from hypothesis import strategies as st

from idlgen.frontend.graphs import SHOWN, cycle_names, depth_first

Graph = dict[int, list[tuple[int, int]]]  # node -> [(target, weight)], no parallel edges


def _ends(e: tuple[int, int, int]) -> tuple[int, int]:
    return e[0], e[1]


@st.composite
def graphs(draw: st.DrawFn) -> tuple[Graph, list[int]]:
    n = draw(st.integers(1, 8))
    node = st.integers(0, n - 1)
    edges = draw(st.lists(st.tuples(node, node, st.integers(0, 1)), max_size=20, unique_by=_ends))
    g: Graph = {v: [] for v in range(n)}
    for a, b, w in edges:
        g[a].append((b, w))
    roots = draw(st.lists(st.integers(0, n - 1), min_size=1, max_size=n))
    return g, roots


def _reach(g: Graph, starts: Sequence[int], removed: set[int]) -> set[int]:
    seen = {s for s in starts if s not in removed}
    todo = list(seen)
    while todo:
        for t, _ in g[todo.pop()]:
            if t not in seen and t not in removed:
                seen.add(t)
                todo.append(t)
    return seen


def _has_cycle(g: Graph, nodes: set[int]) -> bool:
    """Brute force: some node reaches itself through one edge and then any path."""
    return any(v in _reach(g, [t for t, _ in g[v] if t in nodes], set(g) - nodes) for v in nodes)


def _walk(g: Graph, roots: list[int]) -> tuple[list[tuple[list[int], int, int]], list[int]]:
    cycles: list[tuple[list[int], int, int]] = []
    done: list[int] = []

    def on_cycle(path: Sequence[int], i: int, edge: tuple[int, int], w: int) -> None:
        cycles.append(([*path[i:], edge[0]], w, edge[1]))

    def succ(v: int) -> list[tuple[int, tuple[int, int]]]:
        return [(t, (t, w)) for t, w in g[v]]

    depth_first(roots, succ, on_cycle, done.append, weight=lambda e: e[1])
    return cycles, done


@settings(max_examples=400, deadline=None)
@given(graphs())
def test_cycles_match_brute_force(case: tuple[Graph, list[int]]) -> None:
    g, roots = case
    reached = _reach(g, roots, set())
    cycles, done = _walk(g, roots)
    # a cycle is reported iff the reached graph has one
    assert bool(cycles) == _has_cycle(g, reached)
    weights = {(a, b): w for a in g for b, w in g[a]}
    for cyc, w, _ in cycles:
        # each report is a real closed walk along edges, named without repeats, its weight
        # the sum over its edges
        assert cyc[0] == cyc[-1] and len(set(cyc[:-1])) == len(cyc) - 1
        steps = list(zip(cyc, cyc[1:]))
        assert all(s in weights for s in steps)
        assert w == sum(weights[s] for s in steps)
    # dropping the back edges' targets breaks every cycle
    assert not _has_cycle(g, reached - {c[0][0] for c in cycles})
    # post-order: every reached node once, after its successors except along back edges
    assert sorted(done) == sorted(reached)
    pos = {v: k for k, v in enumerate(done)}
    back = {(c[0][-2], c[0][-1]) for c in cycles}
    for a in reached:
        for b, _ in g[a]:
            assert (a, b) in back or pos[b] < pos[a]
    # one report per back edge: never more reports than edges
    assert len(cycles) <= len(weights)


@given(st.integers(1, 40), st.data())
def test_cycle_names_elide_long_cycles(n: int, data: st.DataObject) -> None:
    path = [f"n{k}" for k in range(n)]
    i = data.draw(st.integers(0, n - 1))
    names = cycle_names(path, i, path[i], str)
    length = n - i + 1
    if length <= SHOWN:
        assert names == [*path[i:], path[i]]
    else:
        k = SHOWN // 2
        assert names[:k] == path[i : i + k] and names[-k:] == [*path[n - k + 1 :], path[i]]
        assert names[k] == f"… ({length - SHOWN} more)" and len(names) == SHOWN + 1


def test_a_long_chain_with_many_back_edges_is_linear_and_bounded() -> None:
    """10^5 nodes in one chain (deeper than any recursion limit), every node also pointing
    back to the first: 10^5 reports, each naming at most SHOWN + 1 entries."""
    n = 100_000
    reports: list[list[str]] = []

    def succ(v: int) -> list[tuple[int, None]]:
        return [(0, None)] + ([(v + 1, None)] if v + 1 < n else [])

    def on_cycle(path: Sequence[int], i: int, _e: None, _w: int) -> None:
        reports.append(cycle_names(path, i, path[i], str))

    done: list[int] = []
    depth_first([0], succ, on_cycle, done.append)
    assert len(reports) == n and done == list(range(n - 1, -1, -1))
    assert max(len(r) for r in reports) == SHOWN + 1
    assert reports[-1][SHOWN // 2] == f"… ({n + 1 - SHOWN} more)"
