"""``solve --top N``: the N best distinct designs, the chosen one first, each the best of what is left."""

from __future__ import annotations

from pathlib import Path

from designer.planner.pipeline import solve
from designer.optimize.ranked import RANK

ROOT = Path(__file__).resolve().parents[2]
QUICKSTART = ROOT / "examples" / "quickstart.yaml"


def _ranked(design):
    return [a for a in design.alternatives if a.label.startswith(RANK)]


def test_top_lists_distinct_designs_the_chosen_first():
    design = solve(QUICKSTART, top=4)
    ranked = _ranked(design)
    assert [a.label for a in ranked] == ["rank=1", "rank=2", "rank=3", "rank=4"]
    first = ranked[0]
    s = design.system
    assert (first.server, first.fabric, first.topology, first.nodes) == (s.server, s.fabric, s.topology, s.nodes)
    assert first.delta_usd == 0.0 and first.total_usd == design.cost.total_usd and first.reason == "chosen"
    # Distinct kinds of system: no server, fabric and topology ranked twice.
    kinds = [(a.deployment, a.server, a.fabric, a.topology) for a in ranked]
    assert len(set(kinds)) == 4
    for a in ranked[1:]:
        assert a.delta_usd == a.total_usd - design.cost.total_usd
        assert a.feasible and a.total_usd <= 60e6  # the spec's budget


def test_the_second_is_the_best_design_without_the_first_kind():
    ranked = _ranked(solve(QUICKSTART, top=2))
    first, second = ranked
    # Re-solved without any candidate of the first kind, the spec's best is the second.
    from designer.planner.inputs import load_inputs
    from designer.planner.pipeline import plan

    spec, catalog = load_inputs(QUICKSTART)
    alone = plan(spec, catalog, explain_design=False,
                 keep=lambda c: (c.server, c.fabric, c.topology) != (first.server, first.fabric, first.topology))
    assert (alone.system.server, alone.system.fabric, alone.system.topology, alone.system.nodes) == \
        (second.server, second.fabric, second.topology, second.nodes)
    assert alone.cost.total_usd == second.total_usd


def test_without_top_nothing_is_ranked():
    assert _ranked(solve(QUICKSTART)) == []
