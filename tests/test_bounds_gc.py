"""``bounds.no_cyclic_gc``: no collector passes while a schema loads, none owed afterwards."""

from __future__ import annotations

import gc
import weakref

from idlgen.bounds import no_cyclic_gc


class _Node:
    def __init__(self) -> None:
        self.other: object = self


def test_objects_made_inside_are_not_left_young() -> None:
    """What a load allocates moves to the oldest generation on the way out: re-enabling the
    collector does not owe a young-generation scan of the whole new IR."""
    gc.collect()
    with no_cyclic_gc():
        assert not gc.isenabled()
        made = [[k] for k in range(20_000)]
    assert gc.isenabled()
    young = {id(o) for gen in (0, 1) for o in gc.get_objects(generation=gen)}
    assert not young.intersection(map(id, made))
    assert any(o is made[0] for o in gc.get_objects(generation=2))


def test_cyclic_garbage_made_inside_is_still_collected() -> None:
    with no_cyclic_gc():
        ref = weakref.ref(_Node())
    assert ref() is not None  # the cycle keeps it alive
    gc.collect()
    assert ref() is None


def test_a_disabled_collector_stays_disabled() -> None:
    gc.disable()
    try:
        with no_cyclic_gc():
            pass
        assert not gc.isenabled()
    finally:
        gc.enable()
