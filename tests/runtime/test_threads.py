"""Work in background threads: in order, drawn as it goes, errors raised in the caller."""

import pytest

from verify.runtime.threads import ordered_map


def test_ordered_map_keeps_the_order_and_raises_in_the_caller():
    drawn = []

    def items():
        for item in range(7):
            drawn.append(item)
            yield item

    results = ordered_map(lambda x: x * x, items(), workers=3)
    assert next(results) == 0 and len(drawn) <= 3  # drawn as the work goes on
    assert list(results) == [x * x for x in range(1, 7)]
    assert list(ordered_map(lambda x: -x, range(4), workers=1)) == [0, -1, -2, -3]
    with pytest.raises(ZeroDivisionError):
        list(ordered_map(lambda x: 1 / (x - 2), range(4), workers=2))
