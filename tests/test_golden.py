"""Golden files: every folder under tests/golden/ is one case, compared byte for byte.

Kinds of case, told apart by what the folder holds:

* ``spec.yaml``: the whole pipeline. The spec is planned with ``designer.planner.plan`` and the
  HiGHS solver; the expected ``design.yaml``, ``bom.md``, ``summary.txt`` and ``review.html`` (the
  design review page, fabric drawn from the built-in catalogs) sit beside it.
* ``old.yaml`` + ``new.yaml``: a diff case. Both design files are loaded and diffed; expected
  ``diff.md`` (Markdown, the pull-request comment), ``diff.txt`` (terminal table) and ``diff.html``
  (the diff's page).
* a name in :data:`FACTORY_CASES`: a design built by the test factory (no planner needed), with
  ``design.yaml``, ``bom.md``, ``summary.txt`` and more renderings.

``pytest --update-golden`` rewrites the expected files; review them like code.
"""

from __future__ import annotations

import importlib
import importlib.util
from dataclasses import replace
from pathlib import Path
from typing import Any, Callable

import pytest

from designer.design import Design, dump_design, load_design
from designer.design.diff import diff_designs
from designer.catalog.load import load_catalog
from designer.report import render_bom, render_bom_by_rack, render_diff, render_explain, render_summary
from designer.report.html import render_diff_html, render_review
from designer.spec.load import load_spec

GOLDEN_DIR = Path(__file__).parent / "golden"

# Cases built by the `make_design` factory of conftest.py (its keyword arguments) rather than planned.
FACTORY_CASES: dict[str, dict[str, Any]] = {
    "factory-ib-128": {"nodes": 128, "fabric": "infiniband"},
}
# Diff cases whose old.yaml / new.yaml are written from factory designs (checked like any golden file).
FACTORY_DIFF_CASES: dict[str, tuple[dict[str, Any], dict[str, Any]]] = {
    "diff-ib-to-roce": ({"nodes": 128, "fabric": "infiniband"}, {"nodes": 144, "fabric": "roce"}),
}

EXAMPLES_DIR = Path(__file__).parent.parent / "examples"
# Every example is a golden case: its design file, BOM and summary live in tests/golden/example-<name>/.
EXAMPLE_CASES: dict[str, Path] = {f"example-{p.stem}": p for p in sorted(EXAMPLES_DIR.glob("*.yaml"))}
# A real diff: the quickstart as solved, against the quickstart held to InfiniBand.
EXAMPLE_DIFF_CASE = "diff-quickstart-infiniband"

_FOLDERS = {p.name for p in GOLDEN_DIR.iterdir() if p.is_dir()} if GOLDEN_DIR.is_dir() else set()
CASES = sorted(_FOLDERS | set(FACTORY_CASES) | set(FACTORY_DIFF_CASES) | set(EXAMPLE_CASES) | {EXAMPLE_DIFF_CASE})


def _check_design_outputs(design: Design, folder: Path, golden: Any, catalog: Any = None) -> None:
    golden.check(folder / "design.yaml", dump_design(design))
    golden.check(folder / "bom.md", render_bom(design, "markdown"))
    golden.check(folder / "summary.txt", render_summary(design, "table"))
    # The review page, with the fabric drawn from the catalog the design was made with.
    golden.check(folder / "review.html", render_review(design, catalog).html)


def _plan(spec_path: Path, **constraints: Any) -> Design:
    """Run the real pipeline (with some constraints replaced), or skip while it does not exist yet."""
    spec = load_spec(spec_path)  # the spec must validate even while planning is skipped
    if constraints:
        spec = replace(spec, constraints=replace(spec.constraints, **constraints))
    missing = [m for m in ("designer.planner", "designer.catalog") if importlib.util.find_spec(m) is None]
    if missing:
        pytest.skip(f"{' and '.join(missing)} not available yet: cannot plan {spec_path.parent.name}")
    planner = importlib.import_module("designer.planner")
    catalog = importlib.import_module("designer.catalog")
    if not hasattr(planner, "plan") or not hasattr(catalog, "load_catalog"):
        pytest.skip("designer.planner.plan or designer.catalog.load_catalog not available yet")
    return planner.plan(spec, catalog.load_catalog(spec.catalogs), solver="highs")


def test_factory_diff_inputs(golden: Any, make_design: Callable[..., Design]) -> None:
    """old.yaml / new.yaml of the factory diff cases are the dumps of the factory designs.

    Runs before the parametrized cases (definition order), so ``--update-golden`` writes the
    inputs before the diff case reads them.
    """
    for case, (old, new) in FACTORY_DIFF_CASES.items():
        golden.check(GOLDEN_DIR / case / "old.yaml", dump_design(make_design(**old)))
        golden.check(GOLDEN_DIR / case / "new.yaml", dump_design(make_design(**new)))


@pytest.mark.parametrize("case", CASES)
def test_golden(case: str, golden: Any, make_design: Callable[..., Design]) -> None:
    folder = GOLDEN_DIR / case
    if case in EXAMPLE_CASES:
        design = _plan(EXAMPLE_CASES[case])
        _check_design_outputs(design, folder, golden, load_catalog(load_spec(EXAMPLE_CASES[case]).catalogs))
        assert dump_design(load_design(folder / "design.yaml")) == (folder / "design.yaml").read_text(encoding="utf-8")
    elif case == EXAMPLE_DIFF_CASE:
        old = _plan(EXAMPLES_DIR / "quickstart.yaml")
        new = _plan(EXAMPLES_DIR / "quickstart.yaml", fabrics=("infiniband",))
        golden.check(folder / "old.yaml", dump_design(old))
        golden.check(folder / "new.yaml", dump_design(new))
        diff = diff_designs(old, new)
        assert not diff.is_empty
        golden.check(folder / "diff.md", render_diff(diff, "markdown"))
        golden.check(folder / "diff.txt", render_diff(diff, "table"))
        golden.check(folder / "diff.html", render_diff_html(diff))
    elif (folder / "spec.yaml").exists():
        _check_design_outputs(_plan(folder / "spec.yaml"), folder, golden)
    elif case in FACTORY_DIFF_CASES or (folder / "old.yaml").exists():
        diff = diff_designs(load_design(folder / "old.yaml"), load_design(folder / "new.yaml"))
        golden.check(folder / "diff.md", render_diff(diff, "markdown"))
        golden.check(folder / "diff.txt", render_diff(diff, "table"))
        golden.check(folder / "diff.html", render_diff_html(diff))
    elif case in FACTORY_CASES:
        design = make_design(**FACTORY_CASES[case])
        _check_design_outputs(design, folder, golden, load_catalog([]))
        golden.check(folder / "bom.csv", render_bom(design, "csv"))
        golden.check(folder / "racks.md", render_bom_by_rack(design, "markdown"))
        golden.check(folder / "explain.txt", render_explain(design))
        # The committed file reads back into the same bytes.
        assert dump_design(load_design(folder / "design.yaml")) == (folder / "design.yaml").read_text(encoding="utf-8")
    else:
        pytest.fail(f"tests/golden/{case} is not a golden case: it needs spec.yaml, old.yaml + new.yaml, "
                    "or an entry in FACTORY_CASES")



def test_golden_helper_shows_a_unified_diff_and_updates(tmp_path: Path, golden: Any) -> None:
    path = tmp_path / "case" / "out.txt"
    checker, updater = type(golden)(False), type(golden)(True)
    with pytest.raises(pytest.fail.Exception, match="is missing; run `pytest --update-golden`"):
        checker.check(path, "a\nb\n")
    updater.check(path, "a\nb\n")
    assert path.read_bytes() == b"a\nb\n"
    checker.check(path, "a\nb\n")
    with pytest.raises(pytest.fail.Exception) as info:
        checker.check(path, "a\nc\n")
    message = str(info.value)
    assert "(golden)\n+++ " in message and "\n-b\n+c\n" in message and "--update-golden" in message
    with pytest.raises(pytest.fail.Exception):
        checker.check(path, "a\r\nb\r\n")  # byte for byte: line endings count
