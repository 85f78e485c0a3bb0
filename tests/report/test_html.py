"""The review page and the diff page as documents: content, escaping, self-containment, the CLI.

The browser tests (test_html_browser.py) check the same pages as Chromium renders them; these
read the HTML text, so they run everywhere.
"""

from __future__ import annotations

import base64
import dataclasses
import hashlib
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from designer.catalog.load import load_catalog
from designer.cli import app
from designer.design import Design, WorkloadResult, dump_design, load_design
from designer.design import bom as bom_mod
from designer.design.diff import diff_designs
from designer.report import fmt as f
from designer.report import render_diff
from designer.report.html import render_diff_html, render_review
from designer.report.html import bomtable, costs
from designer.report.html.band import load_band
from designer.report.html.diffpage import change_keys
from htmlparse import inline_block, parse, visible_text

ROOT = Path(__file__).resolve().parents[2]
GOLDEN = ROOT / "tests" / "golden"
EXAMPLES = sorted(p.parent.name for p in GOLDEN.glob("example-*/design.yaml"))
RUNNER = CliRunner()
HOSTILE = '<script>alert(1)</script>"><img src=x onerror=alert(2)></style>&amp;'


@pytest.fixture(scope="module")
def catalog():
    return load_catalog([])


def _keys(html: str, table: str) -> list[str]:
    return [k for k, _ in parse(html).tables[table].rows]


# ---------------------------------------------------------------- content


@pytest.mark.parametrize("case", EXAMPLES)
def test_the_page_holds_the_total_every_bom_line_and_inline_svg(case, catalog):
    design = load_design(GOLDEN / case / "design.yaml")
    page = render_review(design, catalog)
    doc = parse(page.html)
    assert f.usd(design.cost.total_usd) in visible_text(page.html)
    rows = dict(doc.tables["bom"].rows)
    for line in design.bom:
        cells = rows[bomtable.line_key(line, bom_mod.sort_lines(design.bom))]
        # An unpriced line (the UFM appliances) says so instead of showing $0.
        assert (f.usd(bom_mod.line_total_usd(line)) if line.priced else "unpriced") in cells
    assert doc.tables["bom"].foot[doc.tables["bom"].headers.index("total")] == f.usd(
        bom_mod.bom_totals(design.bom).total_usd)
    svgs = [a.get("class", "") for t, a in doc.tags if t == "svg"]
    assert any("fabric-drawing" in c for c in svgs) and any("cost-chart" in c for c in svgs), svgs
    assert page.warnings == ()  # the built-in catalog is the one the examples were made with


@pytest.mark.parametrize("case", EXAMPLES)
def test_the_cost_chart_adds_up_to_the_designs_own_figures(case):
    design = load_design(GOLDEN / case / "design.yaml")
    groups = {g: (total, items) for g, total, items in costs.cost_groups(design)}
    c = design.cost
    for name, expected in (("capex", c.capex_usd), ("opex", c.opex_usd), ("cloud", c.cloud_usd)):
        total, items = groups[name]
        assert total == expected
        assert sum(i.amount_usd for i in items) == pytest.approx(expected, abs=0.01 * (len(items) + 1))
    assert sum(total for total, _ in groups.values()) == pytest.approx(c.total_usd, abs=0.02)
    # The items are the design's cost lines, by kind; the residual is a credit. A $0 line (GPUs
    # included in a rack-scale system's price) has no segment to draw.
    for line in (l for l in c.lines if abs(l.amount_usd) >= 0.005):
        sign = -1 if line.kind == "residual" else 1
        assert any(i.name == line.name and i.amount_usd == sign * line.amount_usd for i in groups[line.kind][1])


def test_a_category_the_design_does_not_split_is_shown_as_other(design: Design):
    capex = design.cost.capex_usd
    lean = dataclasses.replace(design, cost=dataclasses.replace(design.cost, capex_by_category={"server": capex - 1e6},
                                                                lines=()))
    (_, _, items), *_ = costs.cost_groups(lean)
    assert {i.name: i.amount_usd for i in items} == {"server": capex - 1e6, "other": pytest.approx(1e6)}


def test_the_decision_line_says_what_is_bought_for_how_much(design: Design, catalog):
    html = render_review(design, catalog).html
    decision = re.search(r'<p class="decision" id="decision">(.*?)</p>', html, re.S).group(1)
    assert decision.startswith("Buy 128 x dgx-h100 (1,024 h100-sxm GPUs) on an infiniband rail-optimized fabric")
    assert f"for {f.usd(design.cost.total_usd)} over 3 years" in decision
    assert decision.endswith("the workload finishes by its deadline.")


def test_a_late_workload_and_one_inside_the_models_band_are_flagged(design: Design, catalog):
    w = design.workloads[0]  # 168.9 days against a 170-day deadline: inside the +22% band
    html = render_review(design, catalog).html
    (key, cells), = parse(html).tables["workloads"].rows
    assert "at risk" in " ".join(cells)
    late = dataclasses.replace(design, workloads=(dataclasses.replace(w, deadline_days=150.0),))
    html = render_review(late, catalog).html
    assert "llama3-70b misses the deadline" in html
    assert 'class="late"' in html


def test_binding_constraints_and_alternatives_are_listed(design: Design, catalog):
    html = render_review(design, catalog).html
    doc = parse(html)
    constraints = dict(doc.tables["constraints"].rows)
    assert constraints["constraint|deadline[llama3-70b]"][-1] == "binding"
    assert constraints["constraint|budget.total"][-1] == "slack"
    alternatives = dict(doc.tables["alternatives"].rows)
    assert set(alternatives) == {f"alt|{a.label}" for a in design.alternatives}
    assert alternatives["alt|fabric=ethernet"][4] == "no"


def test_assumptions_name_the_facility_prices_and_the_models_error(catalog):
    design = load_design(GOLDEN / "example-quickstart" / "design.yaml")
    text = visible_text(render_review(design, catalog).html)
    assert "electricity $0.08/kWh from the spec" in text
    assert "PUE 1.3 from the spec" in text
    band = load_band()  # test_html_band.py checks it against the validation
    assert f"published runs compared {band.runs}" in text
    assert (f"central 80% of errors {band.p10_signed_error * 100:+.1f}% to {band.p90_signed_error * 100:+.1f}%"
            in text)
    t = design.workloads[0].time_to_train_days  # a run of t / (1 + error)
    assert f"{t / (1 + band.p90_signed_error):,.1f} to {t / (1 + band.p10_signed_error):,.1f} days" in text


def test_fields_the_page_has_no_section_for_are_shown_and_start_days_make_a_schedule(design: Design, catalog):
    # start_day and end_day are the design's own fields; queue stands for one the page has no section for.
    Planned = dataclasses.make_dataclass(
        "Planned", [("queue", str, dataclasses.field(default=""))], bases=(WorkloadResult,), frozen=True)
    w = dataclasses.replace(design.workloads[0], start_day=10.0, end_day=10.0 + design.workloads[0].time_to_train_days)
    planned = Planned(**{fl.name: getattr(w, fl.name) for fl in dataclasses.fields(w)}, queue="<b>night</b>")
    html = render_review(dataclasses.replace(design, workloads=(planned,)), catalog).html
    assert "Each bar is a workload&#39;s run from its start day to its end day" in html
    assert 'data-start="10" data-end="178.876"' in html  # 10 + 168.876 days
    assert "<dt>queue</dt><dd>&lt;b&gt;night&lt;/b&gt;</dd>" in html


def test_bom_lines_carry_their_own_marks_first(design: Design, catalog):
    lines = tuple(dataclasses.replace(l, estimate=l.category == "switch", price_basis="list") for l in design.bom)
    html = render_review(dataclasses.replace(design, bom=lines), catalog).html
    rows = dict(parse(html).tables["bom"].rows)
    assert rows["bom|switch|leaf|nvidia-qm9700"][8] == "estimate list"
    assert rows["bom|server|compute|dgx-h100"][8] == "list"
    unpriced = tuple(dataclasses.replace(l, unit_price_usd=None) if l.category == "rack" else l for l in lines)
    html = render_review(dataclasses.replace(design, bom=unpriced), catalog).html
    rows = dict(parse(html).tables["bom"].rows)
    assert rows["bom|rack|compute|rack-42u"][4:6] == ["unpriced", "-"] and "unpriced" in rows["bom|rack|compute|rack-42u"][8]


def test_a_fabric_the_catalog_cannot_rebuild_is_said_and_the_charts_stay(design: Design):
    page = render_review(design, load_catalog([]).__class__())  # an empty catalog
    assert page.warnings and "fabric not drawn" in page.warnings[0]
    assert "The fabric could not be drawn" in page.html
    assert page.html.count("<svg") >= 3  # cost, step and schedule charts


def test_the_page_is_the_same_bytes_every_time(design: Design, catalog):
    assert render_review(design, catalog).html == render_review(design, catalog).html


# ---------------------------------------------------------------- safety


def test_untrusted_text_is_escaped_everywhere(design: Design, catalog):
    """Names, SKUs, sources, reasons and warnings from a hand-edited design file reach the page as text."""
    w = dataclasses.replace(design.workloads[0], name=HOSTILE)
    lines = tuple(dataclasses.replace(l, sku=HOSTILE + l.sku, source=HOSTILE, description=HOSTILE)
                  for l in design.bom)
    alts = tuple(dataclasses.replace(a, reason=HOSTILE, label=HOSTILE) for a in design.alternatives)
    hostile = dataclasses.replace(design, spec_name=HOSTILE, workloads=(w,), bom=lines, alternatives=alts,
                                  warnings=(HOSTILE,), catalog_dates={HOSTILE: HOSTILE})
    html = render_review(hostile, catalog).html
    assert "<script>alert" not in html and "<img" not in html and "onerror=alert(2)>" not in html
    assert html.count("</style>") == 1 and html.count("<script>") == 1
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    doc = parse(html)
    assert not [t for t, _ in doc.tags if t in ("img", "iframe", "object", "embed", "link")]
    diff = diff_designs(design, hostile)
    page = render_diff_html(diff)
    assert "<script>alert" not in page and "<img" not in page


def test_the_page_fetches_nothing_and_its_policy_admits_only_its_own_style_and_script(design: Design, catalog):
    for html in (render_review(design, catalog).html, render_diff_html(diff_designs(design, design))):
        doc = parse(html)
        for tag, attrs in doc.tags:
            assert not {"src", "href", "xlink:href", "srcset", "action"} & set(attrs), (tag, attrs)
        assert "url(" not in inline_block(html, "style") and "@import" not in html
        (policy,) = [a["content"] for t, a in doc.tags if t == "meta" and a.get("http-equiv") == "Content-Security-Policy"]
        digest = {tag: "sha256-" + base64.b64encode(hashlib.sha256(inline_block(html, tag).encode()).digest()).decode()
                  for tag in ("style", "script")}
        assert policy.startswith("default-src 'none'; ")
        assert f"style-src '{digest['style']}'" in policy and f"script-src '{digest['script']}'" in policy


# ---------------------------------------------------------------- diff


def _markdown_change_set(md: str) -> set[str]:
    """The change keys a Markdown diff lists, read from its sections' tables by column name."""
    keys: set[str] = set()
    for section in re.split(r"^### ", md, flags=re.M)[1:]:
        title, _, body = section.partition("\n")
        tables = [t for t in re.split(r"\n\s*\n", body) if t.strip().startswith("|")]
        for table in tables:
            lines = [l for l in table.strip().splitlines() if l.startswith("|")]
            head = [c.strip() for c in lines[0].strip("|").split("|")]
            for line in lines[2:]:
                cells = [c.strip().strip("*") for c in re.split(r"(?<!\\)\|", line.strip()[1:-1])]
                row = dict(zip(head, cells))
                if title.startswith("Cost"):
                    keys.add(f"cost|{row['cost']}")
                elif title.startswith("System"):
                    keys.add(f"system|{row['field']}")
                elif title.startswith("Workloads") and "field" in row:
                    keys.add(f"workload-field|{row['workload']}|{row['field']}")
                elif title.startswith("Workloads"):
                    keys.add(f"workload|{row['workload']}")
                elif title.startswith("Bill of materials"):
                    keys.add(f"bom|{row['category']}|{row['role']}|{row['SKU']}")
                elif title.startswith("Inputs"):
                    keys.add(f"input|{row['field']}")
    return keys


@pytest.mark.parametrize("case", sorted(p.parent.name for p in GOLDEN.glob("diff-*/old.yaml")))
def test_the_diff_page_shows_the_same_changes_as_the_markdown(case):
    diff = diff_designs(load_design(GOLDEN / case / "old.yaml"), load_design(GOLDEN / case / "new.yaml"))
    html = render_diff_html(diff)
    doc = parse(html)
    on_page = {k for t in doc.tables.values() for k, _ in t.rows if k}
    expected = set(change_keys(diff))
    assert on_page == expected
    assert _markdown_change_set(render_diff(diff, "markdown")) == expected
    # Each BOM change shows the same cost delta in both.
    md = render_diff(diff, "markdown")
    rows = dict(doc.tables["bom-changes"].rows)
    for c in diff.bom:
        cells = rows[f"bom|{c.category}|{c.role}|{c.sku}"]
        assert cells[-1] == f.usd_delta(c.delta_usd) and f.usd_delta(c.delta_usd) in md


def test_an_empty_diff_says_so(design: Design):
    html = render_diff_html(diff_designs(design, design))
    assert "No change to cost, system, workloads or bill of materials" in html
    assert not {k for t in parse(html).tables.values() for k, _ in t.rows if k}


# ---------------------------------------------------------------- command line


def test_report_writes_the_page_and_says_so(tmp_path, design: Design):
    src = tmp_path / "design.yaml"
    src.write_text(dump_design(design))
    out = tmp_path / "review.html"
    result = RUNNER.invoke(app, ["report", str(src), "-o", str(out)])
    assert result.exit_code == 0, result.output
    assert out.read_text().startswith("<!DOCTYPE html>")
    assert f"{out}: design review of llama3-70b-pretrain (9 BOM lines" in result.stdout
    to_stdout = RUNNER.invoke(app, ["report", str(src)])
    assert to_stdout.exit_code == 0 and to_stdout.stdout == out.read_text()


def test_report_refuses_bad_input_with_a_located_message_and_no_file(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("schema_version: 1\nspec_name: [\n")
    out = tmp_path / "review.html"
    result = RUNNER.invoke(app, ["report", str(bad), "-o", str(out)])
    assert result.exit_code == 2 and str(bad) in result.stderr and "Traceback" not in result.stderr
    assert not out.exists()
    missing = RUNNER.invoke(app, ["report", str(tmp_path / "nope.yaml")])
    assert missing.exit_code == 2
    folder = RUNNER.invoke(app, ["report", str(GOLDEN / "example-quickstart" / "design.yaml"), "-o", str(tmp_path)])
    assert folder.exit_code == 2


def test_diff_format_html_exit_codes(tmp_path):
    old, new = GOLDEN / "diff-ib-to-roce" / "old.yaml", GOLDEN / "diff-ib-to-roce" / "new.yaml"
    differ = RUNNER.invoke(app, ["diff", str(old), str(new), "--format", "html"])
    assert differ.exit_code == 1 and differ.stdout.startswith("<!DOCTYPE html>")
    same = RUNNER.invoke(app, ["diff", str(old), str(old), "--format", "html"])
    assert same.exit_code == 0 and "No change" in same.stdout
