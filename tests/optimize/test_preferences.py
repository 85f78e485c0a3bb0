"""Soft preferences (`prefer:`): a credit in the objective that can change the choice, never the cost."""

from pathlib import Path

import pytest

from designer import load_spec, solve
from designer.errors import SpecError

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = (ROOT / "examples" / "finetune-small.yaml").read_text()


def _spec(tmp_path: Path, prefer: str):
    path = tmp_path / "spec.yaml"
    path.write_text(EXAMPLE + prefer)
    return load_spec(path)


@pytest.fixture(scope="module")
def plain():
    return solve(load_spec(ROOT / "examples" / "finetune-small.yaml"))


def _roce_gap(design) -> float:
    """What the best RoCE design costs more than the chosen one (from the design's alternatives)."""
    alt = next(a for a in design.alternatives if a.label == "fabric=roce")
    return alt.delta_usd


def test_a_dollar_weight_wins_exactly_when_it_exceeds_the_cost_difference(tmp_path, plain):
    gap = _roce_gap(plain)
    assert plain.system.fabric != "roce" and gap > 0
    below = solve(_spec(tmp_path, f"prefer:\n  - fabric: roce\n    weight: ${gap * 0.9:.2f}\n"))
    assert below.system.fabric == plain.system.fabric
    assert below.cost.total_usd == pytest.approx(plain.cost.total_usd)
    assert below.preferences[0].workloads == 0 and below.preferences[0].credit_usd == 0
    above = solve(_spec(tmp_path, f"prefer:\n  - fabric: roce\n    weight: ${gap * 1.1:.2f}\n"))
    assert above.system.fabric == "roce"
    # The design's cost is its real cost: the chosen total plus the difference, no credit in it.
    assert above.cost.total_usd == pytest.approx(plain.cost.total_usd + gap)
    assert above.preferences[0].credit_usd == pytest.approx(gap * 1.1, abs=0.01)


def test_a_share_weight_credits_that_share_of_the_matching_cost(tmp_path, plain):
    fabric = plain.system.fabric
    design = solve(_spec(tmp_path, f"prefer:\n  - fabric: {fabric}\n    weight: 10%\n"))
    assert design.system.fabric == fabric
    assert design.cost.total_usd == pytest.approx(plain.cost.total_usd)
    assert design.preferences[0].credit_usd == pytest.approx(0.10 * plain.cost.total_usd, rel=1e-6)


@pytest.mark.parametrize("prefer, message", [
    ("prefer:\n  - fabric: roce\n    vendor: nvidia\n    weight: 5%\n", "names exactly one"),
    ("prefer:\n  - fabric: roce\n    weight: 60%\n  - deployment: cloud\n    weight: 40%\n", "below 100%"),
    ("prefer:\n  - fabric: roce\n    weight: 5\n", "$250k or 5%"),
    ("prefer:\n  - fabric: roce\n    weight: 100%\n", "below 100%"),
])
def test_bad_preferences_are_located_errors(tmp_path, prefer, message):
    with pytest.raises(SpecError) as err:
        _spec(tmp_path, prefer)
    assert message in str(err.value) and err.value.location.line is not None


def test_validate_locates_an_unknown_preferred_name(tmp_path):
    import json
    import subprocess
    import sys

    path = tmp_path / "spec.yaml"
    path.write_text(EXAMPLE + "prefer:\n  - vendor: nvidai\n    weight: $1M\n")
    proc = subprocess.run([sys.executable, "-m", "designer", "validate", "--format", "json", str(path)],
                          capture_output=True, text=True)
    assert proc.returncode == 2
    doc = json.loads(proc.stdout)
    (d,) = doc["diagnostics"]
    assert "unknown vendor 'nvidai'" in d["message"] and "nvidia" in (d["hint"] or "")
    assert d["line"] == len(EXAMPLE.splitlines()) + 2


def test_min_cost_per_token_weighs_the_preferences_in_its_first_phase(tmp_path):
    """The first phase charges each on-prem workload its GPU-seconds at the system's rate, less the
    credit on that charge: a preference can move the choice there as in min_total_cost (it used to
    enter only the second phase, which keeps the first phase's charge and so could never move)."""
    text = (EXAMPLE.replace("objective: min_total_cost", "objective: min_cost_per_token")
            .replace("deployments: [on_prem, cloud]", "deployments: [on_prem]"))
    assert "min_cost_per_token" in text and "deployments: [on_prem]" in text

    def solved(prefer: str):
        path = tmp_path / "spec.yaml"
        path.write_text(text + prefer)
        return solve(load_spec(path))

    plain = solved("")
    assert plain.system.deployment == "on_prem"
    # The other fabric of the two the example allows (the first phase charges InfiniBand's
    # fabric-manager appliances too, so the plain run may take either).
    other = "infiniband" if plain.system.fabric == "roce" else "roce"
    assert any(a.label == f"fabric={other}" and a.feasible for a in plain.alternatives)
    preferred = solved(f"prefer:\n  - fabric: {other}\n    weight: $50k\n")
    assert preferred.system.fabric == other
    assert preferred.preferences[0].workloads == 1 and preferred.preferences[0].credit_usd == pytest.approx(50_000)
    # The credit is never in the cost: the preferred design costs what the plain run's
    # alternative of that fabric costs.
    alt = next(a for a in plain.alternatives if a.label == f"fabric={other}")
    assert preferred.cost.total_usd == pytest.approx(alt.total_usd, abs=0.01)
