"""The summary and explain renderers."""

from __future__ import annotations

import dataclasses
import json
import re

import pytest

from designer.design import Alternative, Design, dump_design
from designer.design.model import PreferenceCredit
from designer.errors import InputError
from designer.report import render_explain, render_summary
from designer.report.explain import best_alternatives


def _section(text: str, title: str) -> str:
    """The lines of a text section, from its title to the next blank-line-separated title."""
    start = text.index(f"\n{title}\n") + len(title) + 2
    end = text.find("\n\n", start)
    return text[start:] if end < 0 else text[start:end]


def test_summary_table(design: Design) -> None:
    text = render_summary(design, "table")
    lines = text.splitlines()
    assert lines[0] == ("Design llama3-70b-pretrain: on_prem, 128x dgx-h100, infiniband rail_optimized, "
                        "total $47,687,431.65")
    assert "  servers     128 x dgx-h100 (1,024 x h100-sxm GPUs)" in lines
    assert "  fabric      infiniband, rail_optimized, 2 switch tiers, oversubscription 1:1" in lines
    cost = _section(text, "Cost over 1,095 days")
    rows = {l.split()[0]: l.split()[1:] for l in cost.splitlines()}
    assert rows["capex"] == ["$43,890,800.00"] and rows["total"] == ["$47,687,431.65"]
    assert rows["prices"] == ["0", "lines", "estimated,", "0", "unpriced"]
    (row,) = _section(text, "Workloads").splitlines()[2:]
    # 86% utilization against the 80% minimum; 168.9 of 170 days.
    assert row.split() == ["llama3-70b", "1,024", "tp8", "pp4", "dp32", "8.15983", "s", "86.0%", "(min", "80.0%)",
                           "43.0%", "425.27", "168.9", "days", "170.0", "days", "yes"]
    top = _section(text, "Bill of materials (costliest lines)").splitlines()
    assert [l.split()[1] for l in top[2:7]] == ["dgx-h100", "osfp-800g-2xsr4", "nvidia-qm9700", "nvidia-qm9700",
                                                "osfp-800g-2xsr4"]
    assert top[2].split()[-1] == "90.4%"  # 39.68M of 43.89M
    assert top[-1] == "5 costliest of 9 lines; BOM total $43,890,800.00; 0 lines estimated, 0 unpriced"
    alts = _section(text, "Alternatives").splitlines()[2:]
    assert alts[1].startswith("fabric=roce ") and "+$5,547,005.29" in alts[1]
    assert re.split(r"\s{2,}", alts[2].strip()) == [
        "fabric=ethernet", "on_prem, 128x dgx-h100, ethernet fat_tree", "-", "-",
        "utilization 0.52 < 0.80 at every size up to max_nodes"]
    assert text.endswith("- unit power of nvidia-qm9700 is an estimate (no datasheet figure); 32 leaves\n")


def test_summary_flags_a_missed_deadline(design: Design) -> None:
    late = dataclasses.replace(design.workloads[0], deadline_days=150.0)
    text = render_summary(dataclasses.replace(design, workloads=(late,)), "table")
    assert _section(text, "Workloads").splitlines()[2].split()[-3:] == ["150.0", "days", "NO"]


def test_summary_markdown_yaml_json(design: Design) -> None:
    md = render_summary(design, "markdown")
    assert md.startswith("## Design llama3-70b-pretrain: on_prem, 128x dgx-h100, infiniband rail_optimized")
    for heading in ("### System", "### Cost over 1,095 days", "### Workloads",
                    "### Bill of materials (costliest lines)", "### Alternatives", "### Warnings"):
        assert f"\n{heading}\n\n" in md
    assert "- **total**: **$47,687,431.65**" in md and "|:---" in md
    assert render_summary(design, "yaml") == dump_design(design)
    doc = json.loads(render_summary(design, "json"))
    assert {"system", "cost", "workloads", "bom", "alternatives"} <= set(doc)


def test_explain_lists_binding_constraints_and_why_alternatives_lost(design: Design) -> None:
    text = render_explain(design)
    binding = _section(text, "Binding constraints (what rules out a cheaper design)")
    assert binding == "  - deadline[llama3-70b]: 168.9 days against a limit of 170.0 days (slack 1.1 days)"
    slack = _section(text, "Slack on the other constraints").splitlines()
    assert slack == [
        "  - budget.total: $47,687,431.65 against a limit of $90,000,000.00 (slack $42,312,568.35)",
        "  - max_power: 1.80586 MW against a limit of 5 MW (slack 3.19414 MW)",
        "  - min_utilization[llama3-70b]: 0.860 against a limit of 0.800 (slack 0.060)",
    ]
    fabrics = _section(text, "Best alternative per fabric").splitlines()
    labels = [line.split(":")[0].strip() for line in fabrics]
    assert labels == ["- fabric=infiniband", "- fabric=roce", "- fabric=ethernet"]
    assert fabrics[1].endswith("+$5,547,005.29 vs chosen; utilization 0.78 < 0.80 at 128 nodes; "
                               "the 144 nodes that reach it cost more")
    assert fabrics[2] == "  - fabric=ethernet: no design (utilization 0.52 < 0.80 at every size up to max_nodes)"
    assert "deployment=cloud: cloud, 128x aws-p5.48xlarge, efa cloud; $185,145,753.60" in text


def test_explain_without_binding_constraints_and_in_markdown(design: Design) -> None:
    free = tuple(dataclasses.replace(c, binding=False) for c in design.constraints)
    text = render_explain(dataclasses.replace(design, constraints=free), "markdown")
    assert text.startswith("## Why this design: llama3-70b-pretrain\n\nChosen: on_prem, 128x dgx-h100")
    assert "### Binding constraints (what rules out a cheaper design)\n\n- none: no constraint is binding" in text


def _preferred(design: Design, weight: str, credit: float, roce_delta: float) -> Design:
    """The design with a preference for its own fabric, and its RoCE alternative ``roce_delta`` off."""
    alts = tuple(dataclasses.replace(a, delta_usd=roce_delta, total_usd=design.cost.total_usd + roce_delta,
                                     feasible=True, reason="costs less") if a.label == "fabric=roce" else a
                 for a in design.alternatives)
    return dataclasses.replace(design, alternatives=alts,
                               preferences=(PreferenceCredit("fabric", "infiniband", weight, 1, credit),
                                            PreferenceCredit("vendor", "amd", "$1M", 0, 0.0)))


def test_explain_says_which_preference_moved_the_choice_and_what_it_cost(design: Design) -> None:
    text = render_explain(_preferred(design, "$6M", 6e6, -5e6))
    section = _section(text, "Soft preferences (a credit of $6,000,000.00 in the choice, not in the cost)")
    assert section.splitlines()[-1] == (
        "The preferences changed the choice: without them the cheapest design is fabric=roce (on_prem, 144x "
        "dgx-h100, roce fat_tree, $42,687,431.65). The chosen design costs $5,000,000.00 more for the preference "
        "fabric infiniband (weight $6M, credit $6,000,000.00): a credit of $6,000,000.00 in the choice against "
        "$5,000,000.00 more cost.")
    assert "vendor amd ($1M): 0 of 1 workloads on it, credit $0.00" in section


def test_explain_says_when_the_preferences_did_not_change_the_choice(design: Design) -> None:
    kept = render_explain(_preferred(design, "10%", 4.7e6, 5.5e6))
    assert ("The preferences did not change the choice: no feasible alternative costs less than the chosen "
            "design.") in kept
    unearned = dataclasses.replace(design, preferences=(PreferenceCredit("fabric", "roce", "$1k", 0, 0.0),))
    assert "The preferences did not change the choice: the design earns no credit from them." in \
        render_explain(unearned)


def test_best_alternative_per_label_prefers_feasible_then_cheapest() -> None:
    def alt(total: float | None, feasible: bool, reason: str) -> Alternative:
        return Alternative("fabric=roce", "on_prem", "roce", "fat_tree", "dgx-h100", 128, total, None, feasible, reason)

    best = best_alternatives((alt(None, False, "a"), alt(2e6, True, "b"), alt(1e6, True, "c"), alt(5e5, False, "d")))
    assert best["fabric=roce"].reason == "c"


def test_unknown_formats(design: Design) -> None:
    with pytest.raises(InputError, match="unknown summary format"):
        render_summary(design, "html")
    with pytest.raises(InputError, match="unknown explain format"):
        render_explain(design, "json")


def test_folded_experts_are_written_and_shown(design: Design) -> None:
    """A workload whose experts run folded (an expert tensor-parallel size below tp) records
    ``etp`` in the design file, reads it back, and the summary's plan names it."""
    from designer.design import parse_design

    w = dataclasses.replace(design.workloads[0], ep=8, etp=1)
    folded = dataclasses.replace(design, workloads=(w,))
    text = dump_design(folded)
    assert "etp: 1" in text
    assert parse_design(text).workloads[0].etp == 1
    (row,) = _section(render_summary(folded, "table"), "Workloads").splitlines()[2:]
    assert row.split()[2:7] == ["tp8", "pp4", "dp32", "ep8", "etp1"]
    assert "etp: null" in dump_design(design)  # experts split like the dense layers (or none)
