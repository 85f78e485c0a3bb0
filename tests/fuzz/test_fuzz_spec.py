"""Generated and mutated specs through the spec loader: a valid Spec in SI units, or one SpecError
located in the spec file."""

from __future__ import annotations

import math
import tempfile
from pathlib import Path

from hypothesis import given

from designer.errors import InputError
from designer.spec import load as spec_mod
from designer.spec import yamlio

from . import gen

EMPTY_FOLDER = Path(tempfile.mkdtemp(prefix="designer-fuzz-"))  # catalog paths resolve here: none exist


def check_spec(text: str) -> None:
    try:
        s = spec_mod.parse_spec(yamlio.load_yaml_text(text, "spec.yaml"), base_dir=EMPTY_FOLDER)
    except InputError as exc:
        gen.assert_located_error(exc, {"spec.yaml"})
        gen.assert_one_line(exc.located())
        return
    numbers = [s.horizon_s, s.constraints.min_utilization]
    numbers += [x for x in (s.budget.capex_usd, s.budget.total_usd, s.constraints.max_power_w) if x is not None]
    for w in s.workloads:
        numbers += [w.tokens, w.global_batch] + [x for x in (w.deadline_s, w.checkpoint_interval_s) if x is not None]
        assert w.gpus is None or 1 <= w.gpus <= spec_mod.MAX_GPUS_PER_WORKLOAD
    assert all(math.isfinite(x) and x >= 0 for x in numbers), numbers
    assert 0 <= s.constraints.min_utilization < 1
    assert s.system.nodes is None or 1 <= s.system.nodes <= spec_mod.MAX_NODES


@given(gen.example_texts())
def test_mutated_examples_load_or_give_a_located_spec_error(text):
    gen.CASES["spec mutated"] += 1
    check_spec(text)


@given(gen.spec_texts())
def test_any_spec_text_loads_or_gives_a_located_spec_error(text):
    gen.CASES["spec any"] += 1
    check_spec(text)
