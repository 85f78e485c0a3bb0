"""The review and diff pages in a real browser: headless Chromium renders what ``designer report`` wrote.

Every example's page (from its golden design file, through the command line) and every golden
diff's page is opened from disk with all requests intercepted (tests/report/chromium.py). Checked:
no console errors or exceptions, no request but the file itself, the total, every BOM line and the
inline SVGs in the rendered DOM, the BOM table's sorting and filtering, the print layout, and that
the page's content security policy blocks a request injected into it. Screenshots are written to
``<pytest basetemp>/review-screenshots/`` (pytest prints the base folder with ``-v``; it is
``/tmp/pytest-of-$USER/pytest-current/`` on Linux), and copied to ``$DESIGNER_SCREENSHOTS`` when
that is set, which is how docs/img/review-quickstart.png is made (docs/review.md).

Without Chromium (the Debian package ``chromium``) these tests skip, saying so; with
``DESIGNER_REQUIRE_BROWSER=1`` (set by .ci/run) a missing browser fails them instead.
"""

from __future__ import annotations

import json
import os
import shutil
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from chromium import Chromium, find_chromium
from designer.cli import app
from designer.design import bom as bom_mod
from designer.design import load_design, sections
from designer.design.diff import diff_designs
from designer.report import fmt as f
from designer.report.html import bomtable
from designer.report.html.diffpage import change_keys

ROOT = Path(__file__).resolve().parents[2]
GOLDEN = ROOT / "tests" / "golden"
PAGES = sorted(p.parent.name for p in GOLDEN.glob("*/design.yaml"))  # every example and the factory design
DIFFS = sorted(p.parent.name for p in GOLDEN.glob("diff-*/old.yaml"))
A4_WIDTH_PX = 794  # 210 mm at 96 px per inch
RUNNER = CliRunner()


@pytest.fixture(scope="module")
def browser():
    exe = find_chromium()
    if exe is None:
        reason = ("headless Chromium not found (install the Debian package 'chromium', or set DESIGNER_CHROMIUM "
                  "to its path); the page tests need a real browser")
        if os.environ.get("DESIGNER_REQUIRE_BROWSER") == "1":
            pytest.fail(reason + "; DESIGNER_REQUIRE_BROWSER=1 makes this a failure", pytrace=False)
        pytest.skip(reason)
    b = Chromium(exe, width=1280, height=1000)
    yield b
    b.close()


@pytest.fixture(scope="module")
def shots(tmp_path_factory) -> Path:
    return tmp_path_factory.getbasetemp() / "review-screenshots"


def _keep(path: Path) -> None:
    """Copy a screenshot to $DESIGNER_SCREENSHOTS, when set (for the docs)."""
    target = os.environ.get("DESIGNER_SCREENSHOTS")
    if target:
        Path(target).mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, Path(target) / path.name)


@pytest.fixture(scope="module")
def pages(tmp_path_factory) -> dict[str, Path]:
    """``designer report`` on every golden design, and ``designer diff --format html`` on every golden diff."""
    folder = tmp_path_factory.mktemp("pages")
    out: dict[str, Path] = {}
    for case in PAGES:
        page = folder / f"{case}.html"
        result = RUNNER.invoke(app, ["report", str(GOLDEN / case / "design.yaml"), "-o", str(page)])
        assert result.exit_code == 0, result.output
        out[case] = page
    for case in DIFFS:
        result = RUNNER.invoke(app, ["diff", str(GOLDEN / case / "old.yaml"), str(GOLDEN / case / "new.yaml"),
                                     "--format", "html"])
        assert result.exit_code == 1, result.output
        page = folder / f"{case}.html"
        page.write_text(result.stdout, encoding="utf-8")
        out[case] = page
    return out


def _assert_clean(log) -> None:
    assert log.errors == [], log.errors
    assert log.blocked == [], f"requests outside the file: {log.blocked}"
    assert log.requests == [log.url] and log.fetched == [log.url], (log.requests, log.fetched)


@pytest.mark.parametrize("case", PAGES)
def test_every_page_renders_its_total_bom_and_svg_with_no_error_or_request(case, browser, pages, shots):
    design = load_design(GOLDEN / case / "design.yaml")
    log = browser.open(pages[case])
    dom = browser.evaluate("""(() => ({
        total: document.querySelector('#figures .total .v').textContent,
        bom: Array.from(document.querySelectorAll('#bom tbody tr')).map(r =>
            [r.dataset.key, r.cells[Array.from(document.querySelectorAll('#bom thead th'))
                .findIndex(h => h.textContent === 'total')].textContent]),
        svgs: Array.from(document.querySelectorAll('svg')).map(s => [s.getAttribute('class'),
            Math.round(s.getBoundingClientRect().width), s.querySelectorAll('rect').length]),
        boxes: document.querySelectorAll('svg.fabric-drawing g.box').length,
    }))()""")
    _assert_clean(log)
    assert dom["total"] == f.usd(design.cost.total_usd)
    # An unpriced line's total is "-", never $0.
    lines = bom_mod.sort_lines(design.bom)
    expected = [[bomtable.line_key(l, lines), f.usd(bom_mod.line_total_usd(l)) if l.priced else "-"]
                for l in lines]
    assert dom["bom"] == expected
    classes = " ".join(c for c, _, _ in dom["svgs"])
    assert "fabric-drawing" in classes and "cost-chart" in classes and "schedule" in classes
    assert all(width > 100 and rects > 0 for _, width, rects in dom["svgs"]), dom["svgs"]
    assert dom["boxes"] >= 2
    _keep(browser.screenshot(shots / f"review-{case.removeprefix('example-')}.png"))
    if case == "example-quickstart":  # the first screen, for docs/img/review-quickstart.png
        browser.evaluate("window.scrollTo(0, 0)")
        _keep(browser.screenshot(shots / "review-quickstart-top.png", full_page=False))


def _rows(browser) -> list[list]:
    return browser.evaluate("""Array.from(document.querySelectorAll('#bom tbody tr')).filter(r => !r.hidden)
        .map(r => [r.dataset.category, parseFloat(r.querySelector('td.total').dataset.sort)])""")


def test_the_bill_of_materials_sorts_and_filters_and_its_total_follows(browser, pages):
    design = load_design(GOLDEN / "example-quickstart" / "design.yaml")
    _assert_clean(browser.open(pages["example-quickstart"]))
    click = """(() => { const th = Array.from(document.querySelectorAll('#bom thead th'))
        .find(h => h.textContent === 'total'); th.querySelector('button').click(); return th.getAttribute('aria-sort'); })()"""
    assert browser.evaluate(click) == "ascending"
    totals = [t for _, t in _rows(browser)]
    assert totals == sorted(totals)
    assert browser.evaluate(click) == "descending"
    assert [t for _, t in _rows(browser)] == sorted(totals, reverse=True)
    # Filter by text (a SKU): the lines that mention it, and the footer totals them.
    def text(l):  # what a row shows: its fields and, for optics and cables, where they plug in
        return " ".join((l.category, l.role, l.sku, l.description, l.source, l.plugs_into, *l.ends))
    # The first SKU that more than one line mentions (whatever parts the example's design uses).
    sku = next(s for s in dict.fromkeys(l.sku for l in bom_mod.sort_lines(design.bom))
               if sum(s in text(l) for l in design.bom) >= 2)
    browser.evaluate(f"""(() => {{ const i = document.querySelector('[data-filter-text="bom"]');
        i.value = '{sku.upper()}'; i.dispatchEvent(new Event('input')); }})()""")  # the filter ignores case
    rows = _rows(browser)
    lines = [l for l in design.bom if sku in text(l)]
    # A row's category is its section (a network's lines: that network).
    assert {c for c, _ in rows} == {sections.section_label(sections.section_of(l)) for l in lines}
    assert len(rows) == len(lines) >= 2
    foot = browser.evaluate("""[document.querySelector('#bom tfoot td.total').textContent,
        document.querySelector('[data-filter-count="bom"]').textContent]""")
    assert foot == [f.usd(sum(bom_mod.line_total_usd(l) for l in lines)), f"{len(lines)} of {len(design.bom)} lines"]
    # Category list and the soft-price box, then back to everything.
    browser.evaluate("""(() => { const i = document.querySelector('[data-filter-text="bom"]'); i.value = '';
        i.dispatchEvent(new Event('input')); const s = document.querySelector('[data-filter-category="bom"]');
        s.value = 'rack'; s.dispatchEvent(new Event('change')); })()""")
    assert {c for c, _ in _rows(browser)} == {"rack"}
    browser.evaluate("""(() => { const s = document.querySelector('[data-filter-category="bom"]'); s.value = '';
        s.dispatchEvent(new Event('change')); const m = document.querySelector('[data-filter-marked="bom"]');
        m.checked = true; m.dispatchEvent(new Event('change')); })()""")
    marked = browser.evaluate("""Array.from(document.querySelectorAll('#bom tbody tr')).filter(r => !r.hidden)
        .every(r => r.classList.contains('estimate') || r.classList.contains('unpriced'))""")
    assert marked
    assert browser.evaluate("document.querySelector('#bom tfoot td.total').textContent") != ""


def test_the_printed_page_hides_the_controls_shows_every_row_and_fits_a4(browser, pages, shots):
    _assert_clean(browser.open(pages["example-superpod-h100"]))
    browser.evaluate("""(() => { const i = document.querySelector('[data-filter-text="bom"]');
        i.value = 'no line has this'; i.dispatchEvent(new Event('input')); })()""")
    browser.media("print")
    browser.send("Emulation.setDeviceMetricsOverride", session=browser.session, width=A4_WIDTH_PX, height=1123,
                 deviceScaleFactor=1, mobile=False)
    try:
        state = browser.evaluate("""(() => ({
            controls: Array.from(document.querySelectorAll('.controls')).map(c => getComputedStyle(c).display),
            hiddenRows: Array.from(document.querySelectorAll('#bom tbody tr'))
                .filter(r => getComputedStyle(r).display === 'none').length,
            width: document.documentElement.scrollWidth,
        }))()""")
        assert set(state["controls"]) == {"none"}
        assert state["hiddenRows"] == 0
        assert state["width"] <= A4_WIDTH_PX, state
        pdf = browser.pdf()
        assert pdf.startswith(b"%PDF-") and pdf.count(b"/Type /Page\n") + pdf.count(b"/Type /Page>") + \
            pdf.count(b"/Type/Page") >= 2
        (shots / "review-superpod-h100.pdf").write_bytes(pdf)
    finally:
        browser.media("")
        browser.send("Emulation.setDeviceMetricsOverride", session=browser.session, width=1280, height=1000,
                     deviceScaleFactor=1, mobile=False)


def test_the_pages_policy_blocks_a_request_injected_into_it(browser, pages):
    log = browser.open(pages["example-finetune-small"])
    _assert_clean(log)
    browser.evaluate("""(() => { const i = document.createElement('img'); i.src = 'http://example.invalid/x.png';
        document.body.appendChild(i); const s = document.createElement('script');
        s.src = 'https://example.invalid/x.js'; document.body.appendChild(s); })()""")
    fetched = browser.evaluate("fetch('https://example.invalid/').then(() => 'fetched', () => 'refused')")
    injected = ["http://example.invalid/x.png", "https://example.invalid/x.js"]
    deadline = time.monotonic() + 5
    while sorted(log.refused) != injected and time.monotonic() < deadline:
        time.sleep(0.05)
    assert fetched == "refused"
    assert sorted(log.refused) == injected, (log.refused, log.errors)
    assert any("Content Security Policy" in e for e in log.errors), log.errors
    # Refused in the page: nothing reached the network stack but the file itself.
    assert log.fetched == [log.url] and log.blocked == []


@pytest.mark.parametrize("case", DIFFS)
def test_the_diff_page_renders_the_changes_of_the_diff(case, browser, pages, shots):
    diff = diff_designs(load_design(GOLDEN / case / "old.yaml"), load_design(GOLDEN / case / "new.yaml"))
    log = browser.open(pages[case])
    keys = browser.evaluate("Array.from(document.querySelectorAll('tr[data-key]')).map(r => r.dataset.key)")
    _assert_clean(log)
    assert sorted(keys) == sorted(change_keys(diff))
    total = browser.evaluate("document.querySelector('tr[data-key=\"cost|total\"]').cells[3].textContent")
    assert total == f.usd_delta(diff.total.delta_usd)
    _keep(browser.screenshot(shots / f"{case}.png"))


def test_the_driver_records_what_it_blocks(browser, tmp_path):
    """The interception the tests rely on works: a page without a policy that loads a remote image
    has that request failed and recorded."""
    page = tmp_path / "leaky.html"
    page.write_text('<!DOCTYPE html><title>t</title><img src="http://example.invalid/leak.png">')
    log = browser.open(page)
    deadline = time.monotonic() + 5
    while not log.blocked and time.monotonic() < deadline:
        time.sleep(0.05)
    assert log.blocked == ["http://example.invalid/leak.png"], json.dumps(log.__dict__)
    assert log.fetched == [log.url, "http://example.invalid/leak.png"] and log.refused == []
