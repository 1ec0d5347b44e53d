"""Cycle search shared by the front ends: import cycles, structs held by value, FBS structs.

Hostile schemas have 10^5 nodes in one chain, so the search is an iterative depth-first walk
(no recursion) in time linear in nodes plus edges: the on-path test is O(1), every back edge
is reported once (never each cycle through it, which can be exponential), and a report names
at most ``SHOWN`` nodes however long the cycle — many back edges may share one long path.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable, Sequence
from typing import TypeVar

__all__ = ["SHOWN", "cycle_names", "depth_first"]

N = TypeVar("N", bound=Hashable)
E = TypeVar("E")

# The most nodes a cycle report names; longer cycles show both ends around "… (N more)".
SHOWN = 8


def depth_first(
    roots: Iterable[N],
    successors: Callable[[N], Iterable[tuple[N, E]]],
    on_cycle: Callable[[Sequence[N], int, E, int], None],
    on_done: Callable[[N], None] | None = None,
    weight: Callable[[E], int] | None = None,
) -> None:
    """Walk from each unvisited root in order, following ``successors(node)`` (target, edge)
    pairs in order.

    A back edge to ``path[i]`` calls ``on_cycle(path, i, edge, w)``: the cycle is ``path[i:]``
    followed by ``edge`` back to ``path[i]``, and ``w`` is the sum of ``weight`` over its edges
    (0 without ``weight``), e.g. to tell a cycle made of one kind of edge only. ``path`` is
    the live walk path: read it during the call, do not keep it. ``on_done(node)`` runs once
    per node after all its successors (post-order). Removing the target of every reported back
    edge leaves the reached graph acyclic.
    """
    visited: set[N] = set()
    on_path: dict[N, int] = {}  # node -> its index in `path`
    path: list[N] = []
    # sums[k]: total weight of the edges that entered path[1..k], so a cycle's weight is O(1)
    sums: list[int] = []
    for root in roots:
        if root in visited:
            continue
        visited.add(root)
        on_path[root] = 0
        path.append(root)
        sums.append(0)
        work = [iter(successors(root))]
        while work:
            step = next(work[-1], None)
            if step is None:
                work.pop()
                node = path.pop()
                sums.pop()
                del on_path[node]
                if on_done is not None:
                    on_done(node)
                continue
            target, edge = step
            i = on_path.get(target)
            if i is not None:
                w = weight(edge) if weight is not None else 0
                on_cycle(path, i, edge, sums[-1] - sums[i] + w)
            elif target not in visited:
                visited.add(target)
                on_path[target] = len(path)
                path.append(target)
                sums.append(sums[-1] + (weight(edge) if weight is not None else 0))
                work.append(iter(successors(target)))


def cycle_names(
    path: Sequence[N], i: int, last: N, name: Callable[[N], str], shown: int = SHOWN
) -> list[str]:
    """The names of ``path[i:] + [last]`` for a report; a cycle longer than ``shown`` keeps its
    first and last few around ``"… (N more)"``, in time independent of its length."""
    n = len(path) - i + 1
    if n <= shown:
        return [*(name(q) for q in path[i:]), name(last)]
    k = shown // 2
    head = [name(q) for q in path[i : i + k]]
    tail = [name(q) for q in path[len(path) - k + 1 :]]
    return [*head, f"… ({n - shown} more)", *tail, name(last)]
