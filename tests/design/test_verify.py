"""Design files are verified on read: values in range, totals re-added, the content digest recomputed."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from designer.design import dump_design, parse_design
from designer.design import verify
from designer.errors import DesignFileError

GOLDEN = Path(__file__).resolve().parents[1] / "golden"
QUICKSTART = (GOLDEN / "example-quickstart" / "design.yaml").read_text(encoding="utf-8")


def _error(text: str, **kwargs) -> DesignFileError:
    with pytest.raises(DesignFileError) as info:
        parse_design(text, "d.yaml", **kwargs)
    return info.value


def _line_of(text: str, needle: str) -> int:
    return text[: text.index(needle)].count("\n") + 1


def test_every_golden_design_verifies_without_a_warning() -> None:
    files = sorted(GOLDEN.glob("*/*.yaml"))
    assert len(files) >= 9
    for path in files:
        warnings: list[DesignFileError] = []
        design = parse_design(path.read_text(encoding="utf-8"), str(path), warn=warnings.append)
        assert warnings == [], path
        assert dump_design(design) == path.read_text(encoding="utf-8")


def test_the_digest_is_the_second_line_and_covers_everything_else() -> None:
    lines = QUICKSTART.splitlines(keepends=True)
    assert lines[0] == "schema_version: 1\n" and re.fullmatch(r"design_digest: [0-9a-f]{64}\n", lines[1])
    rest = lines[0] + "".join(lines[2:])
    assert lines[1] == f"design_digest: {verify.content_digest(rest)}\n"


def test_an_edited_spec_digest_is_refused_and_passes_with_trust() -> None:
    edited = re.sub(r"spec_digest: \w+", "spec_digest: " + "ab" * 32, QUICKSTART)
    err = _error(edited)
    assert str(err).startswith(f"d.yaml:2:16: design_digest: does not match the file's content") and "--trust" in str(err)
    warnings: list[DesignFileError] = []
    design = parse_design(edited, "d.yaml", trust=True, warn=warnings.append)
    assert design.spec_digest == "ab" * 32 and len(warnings) == 1 and "does not match" in str(warnings[0])


def test_reformatting_keeps_the_digest_valid() -> None:
    # Same values, other layout: flow mappings expanded, a comment, quotes changed, keys reordered.
    text = QUICKSTART.replace("objective: min_total_cost\n", "# reviewed\nobjective: \"min_total_cost\"\n")
    head, _, tail = text.partition("horizon_days: 1095\n")
    text = head + tail.replace("constraints:\n", "horizon_days: 1095.0\nconstraints:\n", 1)
    parse_design(text, "d.yaml")


def test_a_file_as_written_is_checked_against_its_own_text_without_a_re_dump(monkeypatch) -> None:
    # The digest of the file's own text matches: no canonical re-dump (the cost of reading a design
    # file drops from a full YAML dump to one sha256). A reformatted file takes the re-dump.
    from designer.design import io as design_io

    dumps: list[int] = []
    real = design_io.dump_design
    monkeypatch.setattr(design_io, "dump_design", lambda d: dumps.append(1) or real(d))
    parse_design(QUICKSTART, "d.yaml")
    assert dumps == []
    parse_design(QUICKSTART.replace("objective: min_total_cost\n", "objective: 'min_total_cost'\n"), "d.yaml")
    assert dumps == [1]
    # An edit is still caught: its text no longer matches, and neither does the re-dump.
    assert "does not match" in str(_error(QUICKSTART.replace("horizon_days: 1095", "horizon_days: 1096")))


def test_a_file_without_a_digest_is_read_with_a_warning() -> None:
    old = re.sub(r"design_digest: \w+\n", "", QUICKSTART)
    warnings: list[DesignFileError] = []
    parse_design(old, "d.yaml", warn=warnings.append)
    assert [str(w) for w in warnings] == [
        "d.yaml:1:1: no design_digest: written by an older designer or edited, so edits to it cannot be told; "
        "its values and totals were checked"]
    assert "expected 64 hexadecimal digits" in str(_error(QUICKSTART.replace("design_digest: ", "design_digest: x", 1)))


def test_a_bom_that_no_longer_adds_up_to_the_capex() -> None:
    # Two servers fewer, the line's total corrected: the line adds up, the capex does not.
    m = re.search(r"\{category: server, [^\n]*?quantity: (\d+), unit_price_usd: '([\d.]+)', total_usd: '([\d.]+)'",
                  QUICKSTART)
    qty, price, total = int(m.group(1)), float(m.group(2)), m.group(3)
    fewer = f"{(qty - 2) * price:.2f}"
    text = QUICKSTART.replace(m.group(0), m.group(0).replace(f"quantity: {qty},", f"quantity: {qty - 2},")
                              .replace(f"total_usd: '{total}'", f"total_usd: '{fewer}'"))
    err = _error(text)
    assert f"cost.capex_by_category.server: {total} is not the sum of the BOM's server lines = {fewer}" in str(err)
    assert err.location.line == _line_of(text, f"    server: '{total}'")
    warnings: list[DesignFileError] = []
    parse_design(text, "d.yaml", trust=True, warn=warnings.append)
    assert [w.location.line for w in warnings][:1] == [err.location.line] and len(warnings) == 2  # and the digest


@pytest.mark.parametrize("pattern, new, message", [
    (r"  capex_usd: '(\d+)\.(\d\d)'", r"  capex_usd: '\g<1>9.\g<2>'", "is not capex_usd + opex_usd + cloud_usd - residual_usd"),
    (r"    power: '[\d.]+'\n", "    power: '1.00'\n", "cost.opex_usd: "),
    (r"  amount_usd: '[\d.]+'(?=\n    basis: [^\n]*recovered)", "  amount_usd: '1.00'",
     "cost.residual_usd: "),
    (r"  dp: \d+\n", "  dp: 100000\n", "workloads[0].gpus: "),
])
def test_totals_and_plans_are_re_added(pattern: str, new: str, message: str) -> None:
    text, n = re.subn(pattern, new, QUICKSTART, count=1)
    assert n == 1
    err = _error(text)
    assert message in str(err) and ("is not" in str(err) or "more than" in str(err))


@pytest.mark.parametrize("pattern, new, message", [
    (r"  topology: \w+\n", "  topology: hypercube\n", "system.topology: 'hypercube' is not one of: 'single_switch'"),
    (r"  utilization: [\d.]+\n", "  utilization: 7.5\n", "workloads[0].utilization: must lie between 0 and 1; got 7.5"),
    (r"  nodes: \d+\n  gpus:", "  nodes: 0\n  gpus:", "system.nodes: must lie between 1 and 100000; got 0"),
    (r"  total_usd: '[\d.]+'", "  total_usd: '" + "9" * 400 + ".00'", "cost.total_usd: expected dollars as a decimal"),
    (r"  power_kw: [\d.]+", "  power_kw: 1.0e+400", "'1.0e+400' is out of range"),
    (r"  power_kw: [\d.]+", "  power_kw: 1000000000000000000000", "system.power_kw: 1000000000000000000000 is beyond"),
    (r"  power_kw: [\d.]+", "  power_kw: -3", "system.power_kw: must not be negative; got -3"),
    (r"  fabric: \w+\n  topology", "  fabric: \"ro\\x1b[2Jce\"\n  topology", "system.fabric: 'ro\\x1b[2Jce' is not one of"),
    (r"  name: highs\n", "  name: gurobi\n", "solver.name: 'gurobi' is not one of: 'highs', 'cbc'"),
    (r"\{category: gpu,", "{category: gpus,", "].category: 'gpus' is not one of"),
])
def test_values_out_of_place_are_errors_even_with_trust(pattern: str, new: str, message: str) -> None:
    text, n = re.subn(pattern, lambda _: new, QUICKSTART, count=1)
    assert n == 1
    err = _error(text, trust=True)
    assert message in str(err) and "\x1b" not in str(err)


def _mutations() -> st.SearchStrategy[str]:
    """A design file with one line changed: a value swapped, cut, pushed to an extreme or removed."""
    lines = QUICKSTART.splitlines(keepends=True)
    values = st.sampled_from(["0", "-1", "1e400", "7.5", "'x'", "null", "[]", "{}", "'" + "9" * 40 + ".00'", "true",
                              "hypercube", "\"\\x1b[31m\"", "'-0.00'", "1e-320", "NaN", ".inf"])

    def change(i: int, value: str, how: int) -> str:
        line = lines[i]
        key, sep, _ = line.partition(": ")
        if how == 0 and sep:
            new = f"{key}: {value}\n"
        elif how == 1:
            new = ""
        else:
            new = line[: len(line) // 2] + "\n"
        return "".join(lines[:i] + [new] + lines[i + 1:])

    return st.builds(change, st.integers(0, len(lines) - 1), values, st.integers(0, 2))


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=_mutations(), trust=st.booleans())
def test_any_edit_is_read_or_refused_with_one_located_line(text: str, trust: bool) -> None:
    # The design-file fuzzer: whatever one edit does, the reader either returns a design that every
    # renderer can show or raises one located error; never another exception.
    from designer import report

    try:
        design = parse_design(text, "d.yaml", trust=trust)
    except DesignFileError as exc:
        assert str(exc).startswith("d.yaml:") and "\n" not in str(exc)
        return
    report.render_bom(design, "github")
    report.render_explain(design)
    dump_design(design)
