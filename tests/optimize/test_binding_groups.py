"""Group testing of binding deadlines finds exactly the members that bind alone, in few re-solves."""

from __future__ import annotations

import math

from hypothesis import given, strategies as st

from designer.optimize.explain import _binding_members


@given(n=st.integers(0, 60), data=st.data())
def test_group_testing_finds_exactly_the_binding_members(n, data):
    names = [f"w{i:02d}" for i in range(n)]
    binding = set(data.draw(st.lists(st.sampled_from(names), unique=True) if names else st.just([])))
    calls = []

    def binds(group):  # monotone: a group changes the design when any member does
        calls.append(list(group))
        return any(g in binding for g in group)

    assert _binding_members(names, binds) == binding
    # One re-solve clears a portfolio with none binding; b binding cost at most 2 b ceil(log2 n) + 1.
    if not binding:
        assert len(calls) == (1 if names else 0)
    else:
        assert len(calls) <= 2 * len(binding) * max(1, math.ceil(math.log2(n))) + 1


def test_a_pair_that_binds_only_together_has_no_member_binding_alone():
    # Relaxing both deadlines admits a cheaper design; relaxing either alone does not.
    assert _binding_members(["a", "b"], lambda g: set(g) == {"a", "b"}) == set()
